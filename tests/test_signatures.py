"""Error signatures: each against messages as users posted them, whole logs, exact causes and fixes in en and zh.

Every quoted message below is copied verbatim from the public report named in the comment above
it (GitHub issues, as stored in the project's search corpus); a quote may be an excerpt of a
longer log, but no line inside it was changed.
"""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB
from cudaresolve.errorlog.explain import Explanation, explain_matches, explain_text
from cudaresolve.errorlog.signatures import SIGNATURES, clean_log, match_errors
from cudaresolve.errors import CudaResolveError, NoKnownError
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text
from cudaresolve.text.model import Text

# -- messages as posted ----------------------------------------------------------------------

# https://github.com/meta-pytorch/torchrec/issues/2708 (GTX 1080 Ti, torch 2.5, torchrec 1.0, CUDA 11.8)
TORCHREC_2708 = """\
  File "/home/ankur/miniconda3/envs/py3_12/lib/python3.12/site-packages/torchrec/sparse/jagged_tensor.py", line 79, in _to_offsets
    return torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/ankur/miniconda3/envs/py3_12/lib/python3.12/site-packages/torch/_ops.py", line 1116, in __call__
    return self._op(*args, **(kwargs or {}))
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""  # noqa: E501

# https://github.com/edenaion/EZ-CorridorKey/issues/87 (GTX 1080 Ti, torch 2.9.1+cu130)
CORRIDORKEY_87 = """\
16:35:59 [ERROR  ] ui.main_window_mixins.worker_mixin: Worker error for MVI_9248_H_264: GVM failed for 'MVI_9248_H_264': CUDA error: no kernel image is available for execution on the device
Search for `cudaErrorNoKernelImageForDevice' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.
"""  # noqa: E501

# https://github.com/lllyasviel/Fooocus/issues/1313 (RTX 3050 laptop, driver 470.86)
FOOOCUS_1313 = (
    "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
    "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
    "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
    "version of the CUDA driver."
)

# https://github.com/BobLiu20/YOLOv3_PyTorch/issues/12
YOLOV3_12 = (
    "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
    "/opt/conda/conda-bld/pytorch_1524586445097/work/aten/src/THC/THCGeneral.cpp:70"
)

# https://github.com/Chia-Network/bladebit/issues/431
BLADEBIT_431 = (
    " CUDA error: 35 (0x23) cudaErrorInsufficientDriver : CUDA driver version is insufficient for CUDA runtime version"
)

# https://github.com/pytorch/FBGEMM/issues/2715 (fbgemm-gpu from the cu121 index with torch 2.4.0)
FBGEMM_2715 = """\
/usr/local/lib/python3.10/dist-packages/fbgemm_gpu/fbgemm_gpu_py.so: undefined symbol: _ZNK5torch8autograd4Node4nameEv
Traceback (most recent call last):
  File "/home/gr-optimizations/train.py", line 29, in <module>
    import fbgemm_gpu  # noqa: F401, E402
  File "/usr/local/lib/python3.10/dist-packages/fbgemm_gpu/__init__.py", line 22, in <module>
    import fbgemm_gpu.docs  # noqa: F401, E402
"""

# https://github.com/snap-research/GRID/issues/3 (title)
GRID_3 = (
    "fbgemm_gpu_config.so: undefined symbol: "
    "_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
)

# https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/3930
A1111_3930 = (
    "WARNING:root:WARNING: /usr/local/lib/python3.9/dist-packages/xformers/_C.so: undefined symbol: "
    "_ZNK3c104impl13OperatorEntry20reportSignatureErrorENS0_12CppSignatureE"
)

# https://github.com/invoke-ai/InvokeAI/issues/6590
INVOKEAI_6590 = """\
WARNING:xformers:WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.0.1+cu118)
    Python  3.10.11 (you have 3.10.11)
    Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
"""

# https://github.com/flashinfer-ai/flashinfer/issues/911 (AOT wheel for torch 2.5 in an NGC torch 2.5.0a0 image)
FLASHINFER_911 = (
    "ImportError: /usr/local/lib/python3.10/dist-packages/flashinfer/flashinfer_kernels.abi3.so: undefined symbol: "
    "_ZN5torch3jit17parseSchemaOrNameERKSsb"
)

# https://github.com/facebookresearch/xformers/issues/1045 (source build on 2080s, run on 3090s)
XFORMERS_1045 = "FATAL: kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 is for sm80-sm100, but was built for sm75."

# https://github.com/facebookresearch/xformers/issues/692 (A100)
XFORMERS_692 = "FATAL: kernel `fmha_cutlassF_f32_aligned_32x128_gmem_sm80` is for sm80-sm90, but was built for sm70"

# https://github.com/flashinfer-ai/flashinfer/issues/371 (L20, nvcr.io/nvidia/pytorch:24.04-py3)
FLASHINFER_371 = """\
        File "/xxx/flashinfer/python/setup.py", line 42, in <module>
          raise RuntimeError("FlashInfer requires sm75+")
      RuntimeError: FlashInfer requires sm75+
"""

# https://github.com/FlashML-org/FreeToken/issues/119 (RTX 5070)
FREETOKEN_119 = "RuntimeError: FlashInfer requires GPU's with sm75 or higher."

# https://github.com/vllm-project/vllm/issues/42393 (title; RTX 5090, torch 2.9.1+cu128)
VLLM_42393 = "[Installation]: RuntimeError: FlashInfer requires GPUs with sm75 or higher when running vllm server"

# https://github.com/astral-sh/uv/issues/14742 (GTX 1080 Ti, torch installed with --torch-backend=auto)
UV_14742 = """\
  cpu = _conversion_method_template(device=torch.device("cpu"))
/root/env/lib/python3.11/site-packages/torch/cuda/__init__.py:262: UserWarning:
    Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1.
    PyTorch no longer supports this GPU because it is too old.
    The minimum cuda capability supported by this library is 7.5.

  warnings.warn(
/root/env/lib/python3.11/site-packages/torch/cuda/__init__.py:287: UserWarning:
NVIDIA GeForce GTX 1080 Ti with CUDA capability sm_61 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120.
If you want to use the NVIDIA GeForce GTX 1080 Ti GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/

  warnings.warn(
Traceback (most recent call last):
  File "/root/torch_test.py", line 4, in <module>
    tensor = torch.randn(3, 4, device='cuda')
"""

# https://github.com/xorbitsai/inference/issues/3603 (RTX 5090)
XINFERENCE_3603 = """\
NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.
If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/
"""

# https://github.com/Janrupf/stable-diffusion-webui-nix/issues/9 (RTX 5090; journald prefixes on every line;
# the report's two log blocks, at start-up and at the first generation, one after the other)
SDWEBUI_NIX_9 = """\
Oct 04 13:19:39 llm sd-webui-forge-start[394]: /nix/store/a1jmpf3hja9g4rx7lwxza4gwng9vscj5-python3-3.11.13-env/lib/python3.11/site-packages/torch/cuda/__init__.py:209: UserWarning:
Oct 04 13:19:39 llm sd-webui-forge-start[394]: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
Oct 04 13:19:39 llm sd-webui-forge-start[394]: The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.
Oct 04 13:19:39 llm sd-webui-forge-start[394]: If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/
Oct 04 15:02:41 llm sd-webui-forge-start[394]: RuntimeError: CUDA error: no kernel image is available for execution on the device
Oct 04 15:02:41 llm sd-webui-forge-start[394]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
Oct 04 15:02:41 llm sd-webui-forge-start[394]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
Oct 04 15:02:41 llm sd-webui-forge-start[394]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""  # noqa: E501

# https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/3003 (GTX TITAN Black)
A1111_3003 = (
    "Found GPU0 NVIDIA GTX TITAN Black which is of cuda capability 3.5. PyTorch no longer supports this GPU "
    "because it is too old. The minimum cuda capability supported by this library is 3.7."
)

# https://github.com/mmartial/ComfyUI-Nvidia-Docker/issues/61 (GTX 1080 Ti, newer torch wording)
# Captured on an H100 (driver 580.159.04) by tools/gpu_proof: a PTX-only build run with CUDA_DISABLE_PTX_JIT=1,
# through the runtime API and through CuPy's driver API (tests/fixtures/gpu/h100-580/kernels).
H100_RUNTIME_JIT_OFF = "launch cudaErrorJitCompilationDisabled: PTX JIT compilation was disabled"
H100_CUPY_JIT_OFF = (
    "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_JIT_COMPILATION_DISABLED: "
    "PTX JIT compilation was disabled"
)
COMFY_DOCKER_61 = """\
    Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1.
    Minimum and Maximum cuda capability supported by this version of PyTorch is
    (7.0) - (12.0)
"""

# https://github.com/pytorch/pytorch/issues/85332
PYTORCH_85332 = "import torch\nprint(torch.cuda.is_available())\n\nreturn False"

# https://github.com/pytorch/pytorch/issues/16936 (title)
PYTORCH_16936 = "torch.cuda.is_available() returns false"

# https://github.com/babysor/MockingBird/issues/394 (posted in Chinese)
MOCKINGBIRD_394 = "import torch正常，torch.cuda.is_available()返回False怎么办"

# https://github.com/pytorch/pytorch/issues/74733 (collect_env output and the warning torch printed)
PYTORCH_74733 = """\
`/home/python3_env/venv-py3/lib/python3.6/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx (Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)
  return torch._C._cuda_getDeviceCount() > 0
False`

### Versions

`home/python3_env/venv-py3/lib/python3.6/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx (Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)
  return torch._C._cuda_getDeviceCount() > 0
PyTorch version: 1.7.0+cu110
Is debug build: True
CUDA used to build PyTorch: 11.0
ROCM used to build PyTorch: N/A

OS: CentOS Linux 7 (Core) (x86_64)
GCC version: (GCC) 8.2.0
Clang version: Could not collect
CMake version: version 3.18.4
Libc version: glibc-2.2.5

Python version: 3.6.4 (default, Mar 17 2022, 20:24:30)  [GCC 8.2.0] (64-bit runtime)
Python platform: Linux-4.14.0_1-0-0-38-x86_64-with-centos-7.5.1804-Core
Is CUDA available: False
"""  # noqa: E501

# https://github.com/facebookresearch/detectron2/issues/460
DETECTRON2_460 = """\
File "/home/xx/anaconda3/envs/tf-gpu/lib/python3.7/site-packages/torch/cuda/__init__.py", line 95, in _check_driver
    raise AssertionError("Torch not compiled with CUDA enabled")
AssertionError: Torch not compiled with CUDA enabled
"""

# https://github.com/NVIDIA-AI-IOT/Lidar_AI_Solution/issues/289
LIDAR_289 = (
    "CUDA Runtime error cudaEventCreate(&begin_) # the provided PTX was compiled with an unsupported toolchain., "
    "code = cudaErrorUnsupportedPtxVersion [ 222 ] in file "
    "/home/ubuntu/tensorRT/chapter8-learn-from-oss/Lidar_AI_Solution/CUDA-BEVFusion/src/common/timer.hpp:34"
)

# https://github.com/Tiiny-AI/PowerInfer/issues/229
POWERINFER_229 = (
    "CUDA error 222 at /home/test/test06/jdz/PowerInfer/ggml-cuda.cu:9635: the provided PTX was compiled with an "
    "unsupported toolchain.\ncurrent device: 0"
)

# https://github.com/pytorch/torchchat/issues/709 (a CPU-exported model run by the CUDA AOTI runner; fixed by #815)
TORCHCHAT_709 = """\
  + cmake-out/aoti_run exportedModels/stories15M.so -z /root/.torchchat/model-cache/stories15M/tokenizer.model -l 2 -i 'Once upon a time'
  Tokenizer already initialized.
  Error: CUDA error: invalid argument
  terminate called after throwing an instance of 'std::runtime_error'
    what():  create_func_( &container_handle_, num_models, device_str.c_str(), cubin_dir.empty() ? nullptr : cubin_dir.c_str()) API call failed at ../torch/csrc/inductor/aoti_runner/model_container_runner.cpp, line 49
"""  # noqa: E501

# https://github.com/pytorch/torchchat/issues/840
TORCHCHAT_840 = (
    "[E520 19:20:12.156885067 shim_common.cpp:311] Exception in aoti_torch: The specified pointer resides on host "
    "memory and is not registered with any CUDA device."
)

# https://github.com/lshqqytiger/stable-diffusion-webui-amdgpu-forge/issues/43 (no AOTInductor involved)
FORGE_AMD_43 = """\
RuntimeError: CUDA error: invalid argument
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
"""

# https://github.com/ratt-ru/PyMORESANE/issues/22
PYMORESANE_22 = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
    "NVIDIA driver is installed and running."
)

# https://github.com/wenet-e2e/wenet/issues/700
WENET_700 = (
    "/data/home/miniconda3/envs/wenet/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA "
    "initialization: CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered internally at  "
    "/opt/conda/conda-bld/pytorch_1631630839582/work/c10/cuda/CUDAFunctions.cpp:115.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0"
)

# https://github.com/jwyang/faster-rcnn.pytorch/issues/377
FASTER_RCNN_377 = """\
THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1532584813488/work/aten/src/THC/THCGeneral.cpp line=74 error=38 : no CUDA-capable device is detected
Traceback (most recent call last):
  File "trainval_net.py", line 222, in <module>
    im_data = im_data.cuda()
RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected at /opt/conda/conda-bld/pytorch_1532584813488/work/aten/src/THC/THCGeneral.cpp:74
"""  # noqa: E501

# https://github.com/Grace9994/CoMoSVC/issues/6 (CUDA_VISIBLE_DEVICES='1' on a one-GPU machine)
COMOSVC_6 = "training will encounter an error: `RuntimeError: No CUDA GPUs are available`."

# https://github.com/huggingface/autotrain-advanced/issues/292 (flash_attn built for CUDA 12)
AUTOTRAIN_292 = """\
  File "/app/env/lib/python3.9/site-packages/flash_attn/flash_attn_interface.py", line 8, in <module>
    import flash_attn_2_cuda as flash_attn_cuda
ImportError: libcudart.so.12: cannot open shared object file: No such file or directory
"""

# https://github.com/facefusion/facefusion-docker/issues/9
FACEFUSION_9 = (
    "facefusion-docker-facefusion-cuda-1  | Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: "
    "cannot open shared object file: No such file or directory"
)

# https://github.com/mav-rik/facerestore_cf/issues/27
FACERESTORE_27 = "CropFace\ncuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"

# https://github.com/2noise/ChatTTS/issues/341
CHATTTS_341 = (
    "[2024-06-18 19:45:55,713] torch._dynamo.convert_frame: [WARNING] RuntimeError: Found NVIDIA GeForce GTX 1080 "
    "Ti which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only "
    "supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1"
)

# -- each signature against the messages users posted -----------------------------------------

# camenduru/DeepCache-colab#2 (as posted there, the inputs' lines left out)
DEEPCACHE_2 = """NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:
`flshattF@0.0.0` is not supported because:
    xFormers wasn't build with CUDA support
    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)
    dtype=torch.float32 (supported: {torch.float16, torch.bfloat16})
    operator wasn't built - see `python -m xformers.info` for more info
"""

# https://github.com/mit-han-lab/Block-Sparse-Attention/issues/15
BLOCK_SPARSE_15 = "nvcc fatal   : Unsupported gpu architecture 'compute_120'"
# https://github.com/PaddlePaddle/FastDeploy/issues/2024 (CUDA 12.1 on Windows, sm_35 in the list)
FASTDEPLOY_2024 = "在CUDA 12(Windows) 上构建失败:nvcc fatal : Unsupported gpu architecture 'compute_35'"
# https://github.com/jkjung-avt/tensorrt_demos/issues/554 (the GPU was not detected: an empty list)
TRT_DEMOS_554 = """NVCCFLAGS: -gencode arch=compute_N,code=[sm_N,compute_N] -gencode arch=compute_o,code=[sm_o,compute_o]
nvcc fatal   : Unsupported gpu architecture 'compute_N'
Makefile:43: recipe for target 'yolo_layer.o' failed"""  # noqa: E501
# https://github.com/Zyphra/Zonos/issues/184 (RTX 5070 Ti)
ZONOS_184 = """RuntimeError: Internal Triton PTX codegen error
`ptxas` stderr:
ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'

Repro command: /home/fdp_0811/miniconda3/envs/zonos/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_120 /tmp/tmpyign88e6.ptx -o /tmp/tmpyign88e6.ptx.o
"""  # noqa: E501
# https://github.com/mlcommons/training/pull/826 (B200, every line behind a launcher's prefix)
MLCOMMONS_826 = """0000-steps/0 [default6]:[rank6]:   File "/usr/local/lib/python3.12/dist-packages/triton/backends/nvidia/compiler.py", line 297, in make_cubin

0000-steps/0 [default6]:[rank6]: RuntimeError: Internal Triton PTX codegen error:

0000-steps/0 [default6]:[rank6]: ptxas fatal   : Value 'sm_100' is not defined for option 'gpu-name'
"""  # noqa: E501

# https://github.com/facebookresearch/SparseConvNet/issues/136 (title)
SPARSECONVNET_136 = "RuntimeError: CUDA error: invalid device function"
# https://github.com/daerduoCarey/PyTorchEMD/issues/11 (an extension built with another CUDA than torch's)
PYTORCHEMD_11 = """THCudaCheck FAIL file=/home/user/hdd/github/PyTorchEMD/cuda/emd_kernel.cu line=190 error=98 : invalid device function
Traceback (most recent call last):
  File "test_emd_loss.py", line 35, in <module>
    d = earth_mover_distance(p1, p2, transpose=False)
  File "/home/user/hdd/github/PyTorchEMD/emd.py", line 11, in forward
    match = emd_cuda.approxmatch_forward(xyz1, xyz2)
RuntimeError: cuda runtime error (98) : invalid device function at /home/user/hdd/github/PyTorchEMD/cuda/emd_kernel.cu:190
"""  # noqa: E501
# https://github.com/apache/tvm/issues/205 (the driver API's name for "no kernel image")
TVM_205 = ("[23:42:41] src/runtime/cuda/cuda_module.cc:93: CUDAError: cuModuleLoadData(&(module_[device_id]), "
           "data_.c_str()) failed with error: CUDA_ERROR_NO_BINARY_FOR_GPU")
# https://github.com/filecoin-project/rust-gpu-tools/issues/79 (a Tesla K80, sm_37, below the fatbin's compute_52)
RUST_GPU_TOOLS_79 = ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)', "
                     "examples/add.rs:10:76")
# ROCm's HIP error of the same words is an AMD GPU's, not CUDA's:
# https://github.com/etched-ai/open-oasis/issues/27 and https://github.com/pytorch/pytorch/issues/164346
HIP_OASIS_27 = """RuntimeError: HIP error: invalid device function
HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing AMD_SERIALIZE_KERNEL=3"""
HIP_PYTORCH_164346 = """torch.AcceleratorError: HIP error: invalid device function
Search for `hipErrorInvalidDeviceFunction' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html for more information."""  # noqa: E501

# https://github.com/fudan-generative-vision/hallo/issues/98 (torchvision's _C not loaded beside this torch)
HALLO_98 = """  File "/usr/local/lib/python3.10/dist-packages/torchvision/_meta_registrations.py", line 164, in <module>
    def meta_nms(dets, scores, iou_threshold):
  File "/usr/local/lib/python3.10/dist-packages/torch/_library/abstract_impl.py", line 30, in register
    if torch._C._dispatch_has_kernel_for_dispatch_key(self.qualname, "Meta"):
RuntimeError: operator torchvision::nms does not exist
"""
# https://github.com/pytorch/vision/issues/1405
VISION_1405 = """/usr/local/lib/python3.6/dist-packages/torch/_ops.py in __getattr__(self, op_name)
---> 61         op = torch._C._jit_get_operation(qualified_op_name)

RuntimeError: No such operator torchvision::nms`"""

# https://github.com/pytorch/pytorch/issues/131312 (torch's cuSPARSE beside an older nvJitLink)
PYTORCH_131312 = """    from torch._C import *  # noqa: F403
    ^^^^^^^^^^^^^^^^^^^^^^
ImportError: /home/dp/anaconda3/envs/ComfyUI/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12
"""  # noqa: E501
# https://github.com/NVIDIA/nccl/issues/1180 (title)
NCCL_1180 = "torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"

# https://github.com/MIT-REALM/gcbfplus/issues/1
GCBFPLUS_1 = ("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, "
              "which is newer. The copy of cuDNN that is installed must be at least as new as the version against "
              "which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)")
# https://github.com/conda-forge/jax-feedstock/issues/149 (JAX's floor above the cuDNN it was built with)
JAX_FEEDSTOCK_149 = """CUDA backend failed to initialize: Unable to use CUDA because of the following issues with CUDA components:
Outdated cuDNN installation found.
Version JAX was built against: 8907
Minimum supported: 9100
Installed version: 8907
The local installation version must be no lower than 9100..(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"""  # noqa: E501

# https://github.com/ali-vilab/dreamtalk/issues/32 (TensorFlow's warning; torch's frames follow, torch is not the one)
DREAMTALK_32 = """2024-02-25 18:52:47.991396: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/lib/python3.10/dist-packages/cv2/../../lib64:/usr/lib64-nvidia
/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py:4193: UserWarning: Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for details.
"""  # noqa: E501
# https://github.com/tensorflow/tensorflow/issues/45930 (a comment's log)
TENSORFLOW_45930 = """2021-02-10 12:57:07.427237: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory
2021-02-10 12:57:07.427347: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine."""  # noqa: E501

# https://github.com/cupy/cupy/issues/9106 (RTX 5080, cupy-cuda12x 13.4.1): the title, then the traceback's frames
CUPY_9106 = """CUDA_ERROR_NO_BINARY_FOR_GPU ( on 5080 / sm_120)
  File "/home/paul/miniconda3/envs/crypto/lib/python3.12/site-packages/cupy/random/_sample.py", line 156, in random_sample
    return rs.random_sample(size=size, dtype=dtype)
  File "/home/paul/miniconda3/envs/crypto/lib/python3.12/site-packages/cupy/random/_generator.py", line 624, in random_sample
    RandomState._mod1_kernel(out)
  File "cupy/_core/_kernel.pyx", line 920, in cupy._core._kernel.ElementwiseKernel.__call__
"""  # noqa: E501

# https://github.com/vllm-project/vllm/issues/8189 (a pre-Ampere GPU under vLLM, every line behind its stamp)
VLLM_8189 = """ERROR 01-11 13:09:40 engine.py:366]            ^^^^^^^^^^^^^^^^^^^^^
ERROR 01-11 13:09:40 engine.py:366] RuntimeError: Error in model execution (input dumped to /tmp/err_execute_model_input_20250111-130939.pkl): FlashAttention only supports Ampere GPUs or newer.
Process SpawnProcess-1:"""  # noqa: E501
# https://github.com/Dao-AILab/flash-attention/issues/1540 (an RTX 5090 and a flash-attn that predates it)
FLASH_ATTN_1540 = """!!! Exception during processing !!! FlashAttention only supports Ampere GPUs or newer.
Exception raised from mha_fwd at C:\\a\\xformers\\xformers\\third_party\\flash-attention\\csrc\\flash_attn\\flash_api.cpp:370 (most recent call first):"""  # noqa: E501

# Not compatibility errors, said so.
# https://github.com/antgroup/echomimic_v2/issues/115
ECHOMIMIC_115 = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.22 GiB. GPU 0 has a total "
                 "capacity of 15.69 GiB of which 3.71 GiB is free. Including non-PyTorch memory, this process has "
                 "11.14 GiB memory in use.")
# https://github.com/taohan10200/IIM/issues/28
IIM_28 = """RuntimeError: CUDA error: out of memory
CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1."""
# https://github.com/Acly/krita-ai-diffusion/issues/930
KRITA_930 = """ RuntimeError: CUDA error: unspecified launch failure
CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1"""
# https://github.com/deepseek-ai/DeepSeek-MoE/issues/47 (NCCL's watchdog reports it)
DEEPSEEK_MOE_47 = """[rank1]:[E410 01:50:33.889423318 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7ef4bb3161b6 in /home/amd00/anaconda3/envs/DeepSeek-MoE/lib/python3.10/site-packages/torch/lib/libc10.so)"""  # noqa: E501

# https://github.com/sunsmarterjie/yolov12/issues/40 (torch's cuDNN 8 wheel beside another cuDNN 8 copy)
YOLOV12_40 = ("python3: symbol lookup error: /home/anaconda3/envs/yolov12/lib/python3.11/site-packages/torch/lib/../../"
              "nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: _ZN15TracebackLoggerC1EPKc, version "
              "libcudnn_ops_infer.so.8")
# https://github.com/davisking/dlib/issues/2719 (glibc's relocation error of the same mismatch)
DLIB_2719 = """Could not load library libcudnn_cnn_train.so.8. Error: /usr/local/cuda-11.1/targets/x86_64-linux/lib/libcudnn_ops_train.so.8: symbol _Z22cudnnGenericOpTensorNdILi3EE13cudnnStatus_tP12cudnnContext16cudnnGenericOp_t21cudnnNanPropagation_tPKdPKvPK17cudnnTensorStructS8_S8_SB_S8_S8_SB_Pv, version libcudnn_ops_infer.so.8 not defined in file libcudnn_ops_infer.so.8 with link time reference
Aborted"""  # noqa: E501

POSTED = [
    ("xformers-no-operator", DEEPCACHE_2, {"op": "memory_efficient_attention_forward", "no_cuda":
                                           "xFormers wasn't build with CUDA support", "cmp": ">", "need": "8, 0",
                                           "have": "7, 5"}),
    ("no-kernel-image", TORCHREC_2708, {"package": "fbgemm-gpu", "via": "torchrec"}),
    ("no-kernel-image", CORRIDORKEY_87, {}),
    ("driver-insufficient", FOOOCUS_1313, {"found_version": "11040"}),
    ("driver-insufficient", YOLOV3_12, {}),
    ("driver-insufficient", BLADEBIT_431, {}),
    (
        "abi-mismatch",
        FBGEMM_2715,
        {
            "library": "fbgemm_gpu",
            "symbol": "_ZNK5torch8autograd4Node4nameEv",
            "path": "/usr/local/lib/python3.10/dist-packages/fbgemm_gpu/fbgemm_gpu_py.so",
        },
    ),
    (
        "abi-mismatch",
        GRID_3,
        {
            "library": "fbgemm_gpu_config",  # no folder in the message: the module's own name
            "symbol": "_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_"
            "RKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
            "path": "fbgemm_gpu_config.so",
        },
    ),
    (
        "abi-mismatch",
        A1111_3930,
        {
            "library": "xformers",
            "symbol": "_ZNK3c104impl13OperatorEntry20reportSignatureErrorENS0_12CppSignatureE",
            "path": "/usr/local/lib/python3.9/dist-packages/xformers/_C.so",
        },
    ),
    (
        "abi-mismatch",
        FLASHINFER_911,
        {
            "library": "flashinfer",
            "symbol": "_ZN5torch3jit17parseSchemaOrNameERKSsb",
            "path": "/usr/local/lib/python3.10/dist-packages/flashinfer/flashinfer_kernels.abi3.so",
        },
    ),
    ("abi-mismatch", INVOKEAI_6590, {"built_for": "2.1.2+cu121", "have": "2.0.1+cu118"}),
    (
        "xformers-built-for-other-sm",
        XFORMERS_1045,
        {"kernel": "fmha_cutlassF_f16_aligned_64x128_rf_sm80", "low": "80", "high": "100", "built": "75"},
    ),
    (
        "xformers-built-for-other-sm",
        XFORMERS_692,
        {"kernel": "fmha_cutlassF_f32_aligned_32x128_gmem_sm80", "low": "80", "high": "90", "built": "70"},
    ),
    ("flashinfer-requires-sm75", FLASHINFER_371, {"old": "FlashInfer requires sm75+"}),
    ("flashinfer-requires-sm75", FREETOKEN_119, {"new": "FlashInfer requires GPU's with sm75 or higher"}),
    ("flashinfer-requires-sm75", VLLM_42393, {"new": "FlashInfer requires GPUs with sm75 or higher"}),
    (
        "torch-sm-unsupported",
        UV_14742,
        {
            "gpu": "NVIDIA GeForce GTX 1080 Ti",
            "cc": "6.1",
            "sm": "61",
            "min": "7.5",
            "supported": "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120",
        },
    ),
    (
        "torch-sm-unsupported",
        XINFERENCE_3603,
        {"sm": "120", "gpu": "NVIDIA GeForce RTX 5090", "supported": "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"},
    ),
    ("torch-sm-unsupported", A1111_3003, {"gpu": "NVIDIA GTX TITAN Black", "cc": "3.5", "min": "3.7"}),
    ("torch-sm-unsupported", COMFY_DOCKER_61, {"gpu": "NVIDIA GeForce GTX 1080 Ti", "cc": "6.1", "min": "7.0"}),
    ("cuda-not-available", PYTORCH_85332, {}),
    ("cuda-not-available", PYTORCH_16936, {}),
    ("cuda-not-available", MOCKINGBIRD_394, {}),
    ("torch-cpu-build", DETECTRON2_460, {}),
    ("ptx-unsupported-toolchain", LIDAR_289, {}),
    ("ptx-unsupported-toolchain", POWERINFER_229, {}),
    ("aoti-device-mismatch", TORCHCHAT_709, {}),
    ("aoti-device-mismatch", TORCHCHAT_840, {}),
    ("no-driver", PYMORESANE_22, {}),
    ("driver-init-failed", WENET_700, {}),
    ("no-cuda-device", FASTER_RCNN_377, {}),
    ("no-cuda-device", COMOSVC_6, {}),
    ("missing-cuda-library", AUTOTRAIN_292, {"library": "libcudart.so.12", "major": "12"}),
    ("missing-cuda-library", FACEFUSION_9, {"library": "libnvrtc.so"}),
    ("cudnn-version-mismatch", FACERESTORE_27, {}),
    ("triton-gpu-too-old", CHATTTS_341, {"gpu": "NVIDIA GeForce GTX 1080 Ti", "required": "7.0", "cc": "6.1"}),
    ("ptx-jit-disabled", H100_RUNTIME_JIT_OFF, {}),
    ("ptx-jit-disabled", H100_CUPY_JIT_OFF, {}),
    ("cuda-library-too-old", PYTORCH_131312, {"caller": "libcusparse.so.12", "csymbol": "__nvJitLinkComplete_12_4",
                                              "family": "nvJitLink", "soname": "libnvJitLink.so.12"}),
    ("cuda-library-too-old", NCCL_1180, {"caller": "libtorch_cuda.so", "csymbol": "ncclCommRegister",
                                         "family": "nccl"}),
    ("cudnn-too-old", GCBFPLUS_1, {"found": "8600", "who": "JAX", "built": "8906"}),
    ("cudnn-too-old", JAX_FEEDSTOCK_149, {"who": "JAX", "built": "8907", "minimum": "9100", "found": "8907"}),
    ("missing-cuda-library", DREAMTALK_32, {"library": "libcudart.so.11.0", "major": "11", "framework": "tensorflow"}),
    ("missing-cuda-library", TENSORFLOW_45930, {"library": "libcudart.so.11.0", "major": "11",
                                                "framework": "tensorflow"}),
    ("flash-attn-refused", VLLM_8189, {"family": "Ampere"}),
    ("flash-attn-refused", FLASH_ATTN_1540, {"family": "Ampere"}),
    ("out-of-memory", ECHOMIMIC_115, {}),
    ("out-of-memory", IIM_28, {}),
    ("kernel-fault", KRITA_930, {}),
    ("kernel-fault", DEEPSEEK_MOE_47, {}),
    ("cuda-library-too-old", YOLOV12_40, {"caller": "libcudnn_cnn_infer.so.8", "csymbol": "_ZN15TracebackLoggerC1EPKc",
                                          "soname": "libcudnn_ops_infer.so.8"}),
    ("cuda-library-too-old", DLIB_2719, {
        "caller": "libcudnn_ops_train.so.8", "soname": "libcudnn_ops_infer.so.8",
        "csymbol": "_Z22cudnnGenericOpTensorNdILi3EE13cudnnStatus_tP12cudnnContext16cudnnGenericOp_t21cudnnNan"
                   "Propagation_tPKdPKvPK17cudnnTensorStructS8_S8_SB_S8_S8_SB_Pv"}),
    ("missing-operator", HALLO_98, {"namespace": "torchvision", "op": "nms"}),
    ("missing-operator", VISION_1405, {"namespace": "torchvision", "op": "nms"}),
    ("invalid-device-function", SPARSECONVNET_136, {}),
    ("invalid-device-function", PYTORCHEMD_11, {}),
    ("no-kernel-image", TVM_205, {"torchless": "1"}),
    ("no-kernel-image", RUST_GPU_TOOLS_79, {"torchless": "1"}),
    ("unsupported-gpu-arch", BLOCK_SPARSE_15, {"arch": "compute_120"}),
    ("unsupported-gpu-arch", FASTDEPLOY_2024, {"arch": "compute_35"}),
    ("unsupported-gpu-arch", TRT_DEMOS_554, {"arch": "compute_N"}),
    ("ptxas-unknown-arch", ZONOS_184, {"arch": "sm_120", "triton": "Triton"}),
    ("ptxas-unknown-arch", MLCOMMONS_826, {"arch": "sm_100", "triton": "triton"}),
]


@pytest.mark.parametrize(("code", "text", "fields"), POSTED)
def test_signature_matches_the_message_as_posted(code: str, text: str, fields: dict[str, str]) -> None:
    matches = match_errors(text)
    assert [m.code for m in matches] == [code]
    assert dict(matches[0].fields) == fields


def test_every_signature_has_a_posted_message_and_a_source() -> None:
    assert {code for code, _, _ in POSTED} == {s.code for s in SIGNATURES}
    # a public report where users posted it, or a text captured on a real GPU by tools/gpu_proof
    assert all(s.source.startswith(("https://github.com/", "tests/fixtures/gpu/")) for s in SIGNATURES)
    for s in SIGNATURES:
        if s.source.startswith("tests/"):
            assert (Path(__file__).parent.parent / s.source).is_file()
    assert len({s.code for s in SIGNATURES}) == len(SIGNATURES)


def test_match_reports_the_line_and_its_offset() -> None:
    (match,) = match_errors(TORCHREC_2708)
    assert match.line == "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    assert TORCHREC_2708[match.start :].startswith("no kernel image")


def test_invalid_argument_alone_is_not_the_aoti_signature() -> None:
    assert match_errors(FORGE_AMD_43) == []


def test_rocms_invalid_device_function_is_not_cudas() -> None:
    assert match_errors(HIP_OASIS_27) == []
    assert match_errors(HIP_PYTORCH_164346) == []


def test_unrelated_text_matches_nothing() -> None:
    assert match_errors("Segmentation fault (core dumped)") == []
    assert match_errors("torch.cuda.is_available() returns True") == []


# -- whole logs ----------------------------------------------------------------------------------


def test_whole_log_gives_each_signature_once_in_order_of_appearance() -> None:
    # The sm_120 warning comes first, the failing kernel launch later; the warning's three lines are one match.
    assert [m.code for m in match_errors(SDWEBUI_NIX_9)] == ["torch-sm-unsupported", "no-kernel-image"]


def test_whole_log_deduplicates_a_repeated_warning() -> None:
    # "Found no NVIDIA driver" appears twice; collect_env's "Is CUDA available: False" comes after both.
    matches = match_errors(PYTORCH_74733)
    assert [m.code for m in matches] == ["no-driver", "cuda-not-available"]
    assert matches[0].start == PYTORCH_74733.index("Found no NVIDIA driver")


def test_concatenated_logs_keep_their_order() -> None:
    log = "\n".join([AUTOTRAIN_292, FOOOCUS_1313, XFORMERS_1045, TORCHREC_2708])
    assert [m.code for m in match_errors(log)] == [
        "missing-cuda-library",
        "driver-insufficient",
        "xformers-built-for-other-sm",
        "no-kernel-image",
    ]


def test_library_is_judged_from_the_traceback_before_the_error_only() -> None:
    # xformers named only after the error does not make it the culprit.
    text = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n" + A1111_3930
    (nki,) = (m for m in match_errors(text) if m.code == "no-kernel-image")
    assert dict(nki.fields) == {}
    text = 'File "/x/xformers/ops/fmha/cutlass.py", line 175, in apply\n' + CORRIDORKEY_87
    (nki,) = match_errors(text)
    assert dict(nki.fields) == {"package": "xformers"}


def test_the_innermost_installed_frame_other_than_torchs_names_the_module() -> None:
    """A traceback through flashinfer (or vllm, sglang ...) into torch's op dispatch: flashinfer's module, which the
    explanation asks the database about; torch's own frames, and a traceback with none of another package, none."""
    error = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    frames = (
        '  File "/v/lib/python3.12/site-packages/transformers/models/llama.py", line 9, in forward\n'
        '  File "/v/lib/python3.12/site-packages/flashinfer/norm.py", line 55, in rmsnorm\n'
        '  File "/v/lib/python3.12/site-packages/torch/_ops.py", line 1158, in __call__\n'
    )
    (nki,) = match_errors(frames + error)
    assert dict(nki.fields) == {"module": "flashinfer"}
    (nki,) = match_errors('  File "/v/lib/python3.12/site-packages/torch/nn/functional.py", line 9\n' + error)
    assert dict(nki.fields) == {}


# -- a log as pasted: colour codes, CR line ends, a logger's stamp before every line -----------------------------

_DECORATIONS = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "ansi": lambda t: "\n".join(f"\x1b[31m{line}\x1b[0m" for line in t.split("\n")),
    "ansi-without-esc": lambda t: "\n".join(f"[1;31m{line}[0m" for line in t.split("\n")),  # ESC lost by a web page
    "timestamp": lambda t: "\n".join(f"2024-06-18 19:45:55.713 | ERROR    | {line}" for line in t.split("\n")),
    "docker": lambda t: "\n".join(f"2024-06-18T19:45:55.713123456Z {line}" for line in t.split("\n")),
    "vllm": lambda t: "\n".join(f"(EngineCore_DP0 pid=73) ERROR 01-28 17:37:45 [core.py:866] {line}"
                                for line in t.split("\n")),
    "torchrun": lambda t: "\n".join(f"[rank0]: {line}" for line in t.split("\n")),
    "glog": lambda t: "\n".join(f"E0303 11:40:42.533000 713 site-packages/torch/_inductor/x.py:533] {line}"
                                for line in t.split("\n")),
}


@pytest.mark.parametrize("decoration", sorted(_DECORATIONS))
def test_a_decorated_log_gives_what_the_bare_message_gives(decoration: str) -> None:
    """A message printed over several lines (torch's sm warning, xformers' "built for") is found through the stamps a
    logger puts before each line, and no field keeps a colour code ("31mfbgemm_gpu_config", "...Ev\x1b[0m")."""
    decorate = _DECORATIONS[decoration]
    for code, text, fields in POSTED:
        matches = match_errors(decorate(text))
        assert [(m.code, dict(m.fields)) for m in matches] == [(code, fields)], (decoration, code, text[:60])


def test_cleaning_takes_only_what_comes_before_a_line() -> None:
    """Each cleaned line is the end of its line as posted: a stamp, a level or a tag before it, never a word inside."""
    for _, text, _ in POSTED:
        cleaned = clean_log(text).split("\n")
        assert len(cleaned) == len(text.split("\n"))
        assert all(line.endswith(part) for line, part in zip(text.split("\n"), cleaned, strict=True))
    assert clean_log("16:35:59 [ERROR  ] ui.main: CUDA error: x") == "ui.main: CUDA error: x"
    assert clean_log("RuntimeError: CUDA error: x [rank0] 12:00:00") == "RuntimeError: CUDA error: x [rank0] 12:00:00"


# -- explanations: exact strings ---------------------------------------------------------------


def _cuda(version: str, full: str, minor: str, nvcc: list[str]) -> dict[str, Any]:
    return {
        "version": version,
        "min-driver-linux": full,
        "minor-compat-driver-linux": minor,
        "nvcc-sm": nvcc,
        "source": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/",
    }


_NVCC = ["sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"]
# Driver minimums: NVIDIA's CUDA release notes, table 3; minor-version floors: the CUDA compatibility guide.
# Arch lists: torch 2.7.1/2.8.0 and fbgemm-gpu 1.2.0/1.3.0 per shared/facts (compat-facts, pairings).
_DB: dict[str, Any] = {
    "schema-version": 1,
    "index": {"default": "https://pypi.org/simple", "pytorch-root": "https://download.pytorch.org/whl",
              "allowed-hosts": ["download.pytorch.org", "pypi.org", "flashinfer.ai"], "source": "s"},
    "packages": {"tables": ["torch", "torchvision", "torchaudio", "fbgemm-gpu", "torchrec", "xformers", "flashinfer",
                            "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache"],
                 "anchor": "torch", "source": "s"},
    "cuda": [
        _cuda("12.8", "570.26", "525.60.13", [*_NVCC, "sm_100", "sm_120"]),
        _cuda("12.6", "560.28.03", "525.60.13", _NVCC),
        _cuda("12.2", "535.54.03", "525.60.13", _NVCC),
        _cuda("11.8", "520.61.05", "450.80.02", ["sm_37", *_NVCC]),
        _cuda("11.4", "470.42.01", "450.80.02", ["sm_37", *_NVCC[:-2]]),
    ],
    "gpu": [
        {"name": "NVIDIA GeForce GTX 1080 Ti", "aliases": [], "cc": "6.1", "arch": "Pascal", "datacenter": False,
         "source": "https://developer.nvidia.com/cuda-gpus"},
    ],
    "variant": [
        {"name": v, "cuda": c, "index-url": f"https://download.pytorch.org/whl/{v}", "source": "s"}
        for v, c in (("cu128", "12.8"), ("cu126", "12.6"), ("cu118", "11.8"))
    ],
    "torch": [
        {"version": "2.8.0", "python": ["3.11"], "source": "s", "build": [
            {"variant": "cu128", "sass": ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]},
            {"variant": "cu126", "sass": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}]},
        {"version": "2.7.1", "python": ["3.11"], "source": "s", "build": [
            {"variant": "cu128", "sass": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]},
            {"variant": "cu126", "sass": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]},
            {"variant": "cu118", "sass": ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}]},
    ],
    "fbgemm-gpu": [
        {"version": "1.3.0", "python": ["3.11"], "requires": ["torch==2.8.*"], "source": "s", "build": [
            {"variant": "cu128", "sass": ["sm_70", "sm_80", "sm_90a", "sm_100a", "sm_120a"]},
            {"variant": "cu126", "sass": ["sm_70", "sm_80", "sm_90a"]}]},
        {"version": "1.2.0", "python": ["3.11"], "requires": ["torch==2.7.*"], "source": "s", "build": [
            {"variant": "cu128", "sass": ["sm_70", "sm_80", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120",
                                          "sm_120a"]},
            {"variant": "cu126", "sass": ["sm_70", "sm_80", "sm_90", "sm_90a"]},
            {"variant": "cu118", "sass": ["sm_70", "sm_80", "sm_90"]}]},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return CompatDB.from_dict(copy.deepcopy(_DB))


def _target(*gpus: tuple[str, str], driver: str | None = None) -> Target:
    return Target(
        gpus=tuple(Gpu(name=name, cc=parse_cc(cc)) for name, cc in gpus),
        driver=parse_driver(driver) if driver else None,
    )


PASCAL = _target(("NVIDIA GeForce GTX 1080 Ti", "6.1"), driver="535.104.05")
MIXED = _target(("NVIDIA GeForce RTX 2080", "7.5"), ("NVIDIA GeForce RTX 3090", "8.6"), driver="550.54.15")
LAPTOP_470 = _target(("NVIDIA GeForce RTX 3050 Laptop GPU", "8.6"), driver="470.86")
V100 = _target(("Tesla V100-SXM2-16GB", "7.0"), driver="535.104.05")
CPU_ONLY = Target(source="flags")


def _explain(text: str, target: Target | None, db: CompatDB | None, lang: str) -> list[tuple[str, str, list[str]]]:
    """Each explanation as (code, cause, fixes), the Texts formatted in ``lang``."""
    return [
        (e.code, format_text(e.cause, lang), [format_text(f, lang) for f in e.fixes])
        for e in explain_matches(match_errors(text), target, db)
    ]


DOCTOR_EN = (
    "Run 'cudaresolve doctor' in the failing environment: it checks each installed library against the GPUs "
    "and the driver."
)
DOCTOR_ZH = "在出错的环境中运行 'cudaresolve doctor'：它会对照 GPU 和驱动逐一检查已安装的库。"
LOCK_EN = "Run 'cudaresolve lock' to choose a set of builds that this driver and these GPUs run."
LOCK_ZH = "运行 'cudaresolve lock'，选出这个驱动和这些 GPU 都能运行的一组构建。"
RERUN_EN = "Name the GPU (--gpu NAME or --gpu 6.1) or run this on the failing machine to get fixes for it."
RERUN_ZH = "用 --gpu 指定 GPU（名称或计算能力，例如 --gpu 6.1），或在出错的机器上运行本命令，以获得针对它的修复建议。"
UPGRADE_EN = "Or upgrade the NVIDIA driver; nvidia-smi shows the newest CUDA version a driver supports."
UPGRADE_ZH = "或者升级 NVIDIA 驱动；nvidia-smi 会显示驱动支持的最高 CUDA 版本。"


def test_no_kernel_image_on_a_1080_ti_with_torchrec(db: CompatDB) -> None:
    assert _explain(TORCHREC_2708, PASCAL, db, "en") == [
        (
            "no-kernel-image",
            "The failing kernel comes from fbgemm-gpu (torchrec's GPU kernels), whose wheel carries neither native "
            "code (SASS) nor PTX for this GPU's architecture. The target's GPUs: NVIDIA GeForce GTX 1080 Ti (6.1); "
            "a build must carry code for sm_61.",
            [
                "No fbgemm-gpu wheel in the database has native code for sm_61.",
                "torch releases with native code for sm_61: 2.8.0 (cu126); 2.7.1 (cu118, cu126).",
                'Build fbgemm-gpu from source with TORCH_CUDA_ARCH_LIST="6.1" so that it carries code for these GPUs.',
                DOCTOR_EN,
            ],
        )
    ]
    assert _explain(TORCHREC_2708, PASCAL, db, "zh") == [
        (
            "no-kernel-image",
            "出错的内核来自 fbgemm-gpu（torchrec 的 GPU 内核由它提供），它的 wheel 既不含这块 GPU 架构的原生代码"
            "（SASS），也不含 PTX。目标机器的 GPU：NVIDIA GeForce GTX 1080 Ti（6.1）；构建中必须包含 sm_61 的代码。",
            [
                "数据库中没有任何 fbgemm-gpu wheel 包含 sm_61 的原生代码。",
                "包含 sm_61 原生代码的 torch 版本：2.8.0（cu126）；2.7.1（cu118、cu126）。",
                '设置 TORCH_CUDA_ARCH_LIST="6.1" 后从源码构建 fbgemm-gpu，使其包含这些 GPU 的代码。',
                DOCTOR_ZH,
            ],
        )
    ]


def test_invalid_device_function_follows_the_no_kernel_image_rule(db: CompatDB) -> None:
    """The runtime's older name for a kernel without code for the GPU: its own cause, no-kernel-image's fixes."""
    (e,) = explain_text(SPARSECONVNET_136, PASCAL, db)
    (k,) = explain_text(CORRIDORKEY_87, PASCAL, db)
    assert e.code == "invalid-device-function"
    assert format_text(e.cause, "en").startswith(
        "A kernel has no code this GPU can run: the CUDA runtime's \"invalid device function\" means the function was "
        "not compiled for this GPU's architecture (an extension or library built for other GPUs) or does not exist "
        "in the loaded binary. The target's GPUs: NVIDIA GeForce GTX 1080 Ti (6.1)")
    assert e.fixes == k.fixes


def test_a_missing_operator_names_the_package_of_its_namespace(db: CompatDB) -> None:
    """torchvision::nms is torchvision's; fbgemm:: is the namespace of the database's fbgemm-gpu; torch's own aten::
    is not a package's extension at all."""
    (e,) = explain_text(HALLO_98, None, db)
    assert format_text(e.cause, "en") == (
        "torch has no operator torchvision::nms: torchvision's compiled extension did not load, because this "
        "torchvision build does not match the installed torch (another torch release or CUDA variant, or a CPU build "
        "beside a CUDA torch).")
    assert format_text(e.fixes[0], "en").startswith("Install the torchvision build made for your torch")
    (f,) = explain_text("RuntimeError: No such operator fbgemm::jagged_2d_to_dense", None, db)
    assert "fbgemm-gpu's compiled extension did not load" in format_text(f.cause, "en")
    assert format_text(f.fixes[0], "en").startswith("Install the fbgemm-gpu release paired with your torch")
    assert match_errors("RuntimeError: operator aten::_foo does not exist") == []


def test_a_cuda_library_older_than_its_caller() -> None:
    """The symbol's version names the library (libnvJitLink.so.12); else its API prefix does (ncclCommRegister: NCCL).
    The fix is the loader path, never a CUDA major (the caller and the library are of the same CUDA major)."""
    (e,) = explain_text(PYTORCH_131312, None, None)
    assert format_text(e.cause, "en") == (
        "libcusparse.so.12 needs __nvJitLinkComplete_12_4 from libnvJitLink.so.12, and the copy of libnvJitLink.so.12 "
        "that loaded lacks it: it is another release than the one libcusparse.so.12 was built with, most often an "
        "older one. Most often another copy earlier on the loader path (LD_LIBRARY_PATH, a system CUDA or conda "
        "folder) shadows the one installed with torch, or that package is older than its dependents need.")
    assert format_text(e.fixes[0], "en") == (
        "See which libnvJitLink.so.12 loads (ldd on libcusparse.so.12, or LD_DEBUG=libs), then take the other copy's "
        "folder out of LD_LIBRARY_PATH (or unset it) so that the copy installed with torch loads.")
    (n,) = explain_text(NCCL_1180, None, None)
    assert format_text(n.cause, "zh").startswith("libtorch_cuda.so 需要 NCCL 中的 ncclCommRegister")
    # a C++ symbol the loader ties to a CUDA library's version: cuDNN's sub-libraries from two copies
    (c,) = explain_text(YOLOV12_40, None, None)
    assert format_text(c.cause, "en").startswith(
        "libcudnn_cnn_infer.so.8 needs _ZN15TracebackLoggerC1EPKc from libcudnn_ops_infer.so.8, and the copy of "
        "libcudnn_ops_infer.so.8 that loaded lacks it")
    # a C++ symbol of torch's is the abi rule's, not this one's
    assert [m.code for m in match_errors(FBGEMM_2715)] == ["abi-mismatch"]


def test_jax_with_an_older_cudnn_names_the_versions() -> None:
    (e,) = explain_text(GCBFPLUS_1, None, None)
    assert format_text(e.cause, "en") == (
        "JAX was built against cuDNN 8.9.6, and the cuDNN it loaded is 8.6.0, older: it needs cuDNN 8.9.6 or newer.")
    assert format_text(e.fixes[0], "en").startswith("Install cuDNN 8.9.6 or newer for it")
    (m,) = explain_text(JAX_FEEDSTOCK_149, None, None)
    assert format_text(m.cause, "en") == "JAX needs cuDNN 9.1.0 or newer, and the cuDNN it loaded is 8.9.7."
    assert format_text(m.cause, "zh") == "JAX 需要 cuDNN 9.1.0 或更新版本，而它加载的 cuDNN 是 8.9.7。"


def test_another_frameworks_missing_library_is_not_told_about_torch(db: CompatDB) -> None:
    """TensorFlow's own line names the library it could not load: its CUDA, not torch's, even with torch's frames
    below it."""
    for text in (DREAMTALK_32, TENSORFLOW_45930):
        (e,) = explain_text(text, LAPTOP_470, db)
        words = [format_text(e.cause, "en"), *(format_text(f, "en") for f in e.fixes)]
        assert words[0] == ("libcudart.so.11.0 is missing: tensorflow was built for CUDA 11, and no CUDA 11 runtime "
                            "library is on the loader path.")
        assert words[1] == ("Install the CUDA 11 libraries tensorflow needs (its pip extra for CUDA 11, or a CUDA 11 "
                            "toolkit on LD_LIBRARY_PATH), or a tensorflow build for the CUDA you have.")
        assert not any("torch" in w for w in words)


def test_a_kernel_in_a_log_without_torch_is_not_sent_to_torch(db: CompatDB) -> None:
    """cupy's, TVM's and rust-cuda's logs hold no torch: the library's own build for the GPU, no torch release. A log of
    torch's, named by its own words only (CORRIDORKEY_87's "Search for `cudaError...' in https"), keeps torch's."""
    rtx5080 = _target(("NVIDIA GeForce RTX 5080", "12.0"), driver="570.86")
    for text in (CUPY_9106, TVM_205, RUST_GPU_TOOLS_79):
        (e,) = explain_text(text, rtx5080, db)
        fixes = [format_text(f, "en") for f in e.fixes]
        assert fixes[0] == ("Install a build of the failing library that carries code for sm_120 (its release notes or "
                            "wheel tags say which GPUs a release supports), or build it from source for these GPUs.")
        assert not any("torch" in f for f in fixes)
    (k,) = explain_text(CORRIDORKEY_87, rtx5080, db)
    assert any("torch" in format_text(f, "en") for f in k.fixes)


def test_flash_attention_refusing_a_gpu_older_or_newer_than_it_knows(db: CompatDB) -> None:
    """Ampere's first compute capability is the database's [[gpu]] rows': a T4 (7.5) below it needs another attention;
    an RTX 5090 (12.0) above it needs another flash-attn build, not the advice for an old GPU."""
    data = copy.deepcopy(_DB)
    data["gpu"].append({"name": "NVIDIA A100-SXM4-80GB", "aliases": ["A100"], "cc": "8.0", "arch": "Ampere",
                        "datacenter": True, "source": "https://developer.nvidia.com/cuda-gpus"})
    ampere = CompatDB.from_dict(data)
    (old,) = explain_text(VLLM_8189, _target(("Tesla T4", "7.5")), ampere)
    assert format_text(old.cause, "en") == (
        "flash-attn runs only on Ampere and newer GPUs (compute capability 8.0 and up); the target's GPUs of compute "
        "capability 7.5 are older, and no flash-attn 2 build runs on them.")
    assert [f.key for f in old.fixes] == ["fix.flash-attn-sdpa"]
    (new,) = explain_text(FLASH_ATTN_1540, _target(("NVIDIA GeForce RTX 5090", "12.0")), ampere)
    assert format_text(new.cause, "en").startswith(
        "The target's GPUs (NVIDIA GeForce RTX 5090 (12.0)) are Ampere or newer (compute capability 8.0 and up), so "
        "the flash-attn that raised this predates them")
    assert [f.key for f in new.fixes] == ["fix.upgrade-flash-attn", "fix.flash-attn-sdpa", "fix.doctor"]
    (plain,) = explain_text(VLLM_8189, None, ampere)
    assert [f.key for f in plain.fixes] == ["fix.flash-attn-sdpa", "fix.rerun-with-target"]


def test_out_of_memory_and_a_kernel_fault_are_not_blamed_on_the_builds(db: CompatDB) -> None:
    """On any target: no release, variant or driver advice, and the cause says it is not a compatibility problem."""
    for text in (ECHOMIMIC_115, IIM_28, KRITA_930, DEEPSEEK_MOE_47):
        for target in (None, PASCAL):
            (e,) = explain_text(text, target, db)
            assert "not a compatibility problem" in format_text(e.cause, "en")
            assert {f.key for f in e.fixes} <= {"fix.less-memory", "fix.other-processes", "fix.launch-blocking",
                                                  "fix.xid"}  # fmt: skip
    # beside a real compatibility error, each is told apart, in the order of the log
    log = KRITA_930 + "\n" + CORRIDORKEY_87
    assert [m.code for m in match_errors(log)] == ["kernel-fault", "no-kernel-image"]


def test_no_kernel_image_without_a_target(db: CompatDB) -> None:
    cause_en = (
        "A CUDA library in this process has no kernel for this GPU: its wheel carries neither native code (SASS) "
        "nor PTX for the GPU's architecture."
    )
    cause_zh = "进程中的某个 CUDA 库没有适用于这块 GPU 的内核：它的 wheel 既不含该架构的原生代码（SASS），也不含 PTX。"
    assert _explain(CORRIDORKEY_87, None, db, "en") == [("no-kernel-image", cause_en, [RERUN_EN, DOCTOR_EN])]
    assert _explain(CORRIDORKEY_87, None, db, "zh") == [("no-kernel-image", cause_zh, [RERUN_ZH, DOCTOR_ZH])]


def test_no_kernel_image_on_a_mixed_host_needs_every_sm(db: CompatDB) -> None:
    ((_, cause, fixes),) = _explain(CORRIDORKEY_87, MIXED, db, "en")
    assert cause.endswith(
        "The target's GPUs: NVIDIA GeForce RTX 2080 (7.5), NVIDIA GeForce RTX 3090 (8.6); "
        "a build must carry code for sm_75, sm_86."
    )
    assert fixes == [
        "torch releases with native code for sm_75, sm_86: 2.8.0 (cu126, cu128); 2.7.1 (cu118, cu126, cu128).",
        'Build torch from source with TORCH_CUDA_ARCH_LIST="7.5;8.6" so that it carries code for these GPUs.',
        DOCTOR_EN,
    ]


def test_driver_too_old_with_the_target_driver(db: CompatDB) -> None:
    assert _explain(FOOOCUS_1313, LAPTOP_470, db, "en") == [
        (
            "driver-insufficient",
            "The NVIDIA driver supports CUDA 11.4 at most; the installed build needs a newer CUDA runtime.",
            [
                "Install builds for cu118 (CUDA 11.8); this driver runs them only through minor-version "
                "compatibility, so code JIT-compiled from PTX may fail: "
                "cudaresolve install torch (with the GPU packages you use) takes them from PyPI or "
                "https://download.pytorch.org/whl/cu118, whichever serves "
                "them and answers, and keeps each paired with torch",
                UPGRADE_EN,
                LOCK_EN,
            ],
        )
    ]
    assert _explain(FOOOCUS_1313, LAPTOP_470, db, "zh") == [
        (
            "driver-insufficient",
            "NVIDIA 驱动最高只支持 CUDA 11.4，而已安装的构建需要更新的 CUDA 运行时。",
            [
                "安装 cu118（CUDA 11.8）构建；该驱动只能借助小版本兼容性运行它们，需要从 PTX 即时编译的代码可能失败："
                "cudaresolve install torch（连同所用的其他 GPU 包）会从 PyPI 或 "
                "https://download.pytorch.org/whl/cu118 中提供这些构建且能访问的那个安装它们，"
                "并让每个包与 torch 保持配对",
                UPGRADE_ZH,
                LOCK_ZH,
            ],
        )
    ]


def test_driver_message_alone_names_the_variant_through_the_reported_cuda(db: CompatDB) -> None:
    # found version 11040 = CUDA 11.4: such a driver is at least 470.42.01, enough for cu118 (11.x floor 450.80.02).
    ((_, _, fixes),) = _explain(FOOOCUS_1313, None, db, "en")
    assert fixes[0].startswith("Install builds for cu118 (CUDA 11.8); this driver runs them only through")


def test_driver_new_enough_for_a_full_variant(db: CompatDB) -> None:
    assert _explain(YOLOV3_12, PASCAL, db, "en") == [
        (
            "driver-insufficient",
            "The NVIDIA driver supports CUDA 12.2 at most; the installed build needs a newer CUDA runtime.",
            [
                "Install builds for cu118 (CUDA 11.8), the newest variant this driver fully supports: "
                "cudaresolve install torch (with the GPU packages you use) takes them from PyPI or "
                "https://download.pytorch.org/whl/cu118, whichever serves "
                "them and answers, and keeps each paired with torch",
                UPGRADE_EN,
                LOCK_EN,
            ],
        )
    ]
    assert _explain(YOLOV3_12, PASCAL, db, "zh")[0][2][0] == (
        "安装 cu118（CUDA 11.8）构建，这是该驱动完全支持的最新变体："
        "cudaresolve install torch（连同所用的其他 GPU 包）会从 PyPI 或 "
        "https://download.pytorch.org/whl/cu118 中提供这些构建且能访问的那个安装它们，并让每个包与 torch 保持配对"
    )


def test_driver_too_old_for_every_variant(db: CompatDB) -> None:
    old = _target(("Tesla K80", "3.7"), driver="418.87.01")
    ((_, _, fixes),) = _explain(BLADEBIT_431, old, db, "en")
    assert fixes[0] == "No variant in the database runs on driver 418.87.01; upgrade the driver."
    ((_, _, fixes),) = _explain(BLADEBIT_431, old, db, "zh")
    assert fixes[0] == "数据库中没有能在驱动 418.87.01 上运行的变体，请升级驱动。"


def test_driver_insufficient_without_target_or_database() -> None:
    assert _explain(YOLOV3_12, None, None, "en") == [
        ("driver-insufficient", "The NVIDIA driver is older than the CUDA runtime this build needs.",
         [RERUN_EN, UPGRADE_EN, LOCK_EN]),
    ]  # fmt: skip
    ((_, _, fixes),) = _explain(FOOOCUS_1313, None, None, "zh")
    assert fixes[0] == "安装针对 CUDA 11.4 或更早版本构建的软件包。"


def test_abi_mismatch_fbgemm(db: CompatDB) -> None:
    assert _explain(FBGEMM_2715, None, db, "en") == [
        (
            "abi-mismatch",
            "fbgemm-gpu is a compiled extension built against another torch than the one installed: it needs "
            "torch::autograd::Node::name() const (_ZNK5torch8autograd4Node4nameEv), which this torch does not export.",
            [
                "Install the fbgemm-gpu release paired with your torch: fbgemm-gpu 1.X is built for torch 2.(X+5), "
                "e.g. 1.2 for 2.7 and 1.3 for 2.8, and torchrec X.Y needs fbgemm-gpu X.Y.",
                "Install torch and fbgemm-gpu together: cudaresolve "
                "install torch fbgemm-gpu (with the other GPU packages "
                "you use) takes a matching set from one index, PyPI or "
                "https://download.pytorch.org/whl/<variant>, whichever serves "
        "it and answers.",
                DOCTOR_EN,
            ],
        )
    ]
    assert _explain(FBGEMM_2715, None, db, "zh") == [
        (
            "abi-mismatch",
            "fbgemm-gpu 是针对另一个 torch 版本编译的扩展，与当前安装的 torch 不匹配：它需要 "
            "torch::autograd::Node::name() const（_ZNK5torch8autograd4Node4nameEv），而这个 torch 没有导出该符号。",
            [
                "安装与当前 torch 配套的 fbgemm-gpu：fbgemm-gpu 1.X 是针对 torch 2.(X+5) 构建的，"
                "例如 1.2 对应 2.7、1.3 对应 2.8；torchrec X.Y 需要 fbgemm-gpu X.Y。",
                "一起安装 torch 和 fbgemm-gpu：cudaresolve install torch fbgemm-gpu"
                "（连同所用的其他 GPU 包）会从同一个索引"
                "（PyPI 或 https://download.pytorch.org/whl/<variant> 中提供它们且能访问的那个）取得相互匹配的一组。",
                DOCTOR_ZH,
            ],
        )
    ]


def test_abi_mismatch_xformers(db: CompatDB) -> None:
    pair_en = (
        "Install the xformers release made for your torch: up to 0.0.34 each release pins one exact torch "
        "version; 0.0.35 works with torch 2.10 and newer."
    )
    ((code, cause, fixes),) = _explain(INVOKEAI_6590, None, db, "en")
    assert code == "abi-mismatch"
    assert cause == "xFormers was built for torch 2.1.2+cu121, but torch 2.0.1+cu118 is installed."
    assert fixes[0] == pair_en
    ((_, cause, fixes),) = _explain(INVOKEAI_6590, None, db, "zh")
    assert cause == "xFormers 是针对 torch 2.1.2+cu121 构建的，但当前安装的是 torch 2.0.1+cu118。"
    assert fixes[0] == (
        "安装为当前 torch 构建的 xformers：0.0.34 及之前的每个版本都固定依赖一个确切的 torch 版本；"
        "0.0.35 适用于 torch 2.10 及更高版本。"
    )
    ((_, cause, fixes),) = _explain(A1111_3930, None, db, "en")
    assert cause.startswith("xformers is a compiled extension built against another torch")
    assert fixes[0] == pair_en


def test_xformers_built_for_another_sm() -> None:
    cause_en = (
        "This xFormers was compiled for sm_75 only, but the kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 needs "
        "sm_80 to sm_100: it was built from source on another GPU than the one it runs on."
    )
    prebuilt_en = "Or install a prebuilt xformers wheel, which carries code for 7.5, 8.0 (with PTX) and newer GPUs."
    assert _explain(XFORMERS_1045, MIXED, None, "en") == [
        (
            "xformers-built-for-other-sm",
            cause_en,
            [
                'Rebuild xFormers with every GPU of this machine listed: TORCH_CUDA_ARCH_LIST="7.5;8.6" '
                "(xformers#1045).",
                prebuilt_en,
            ],
        )
    ]
    assert _explain(XFORMERS_1045, None, None, "en")[0][2] == [
        "Rebuild xFormers with TORCH_CUDA_ARCH_LIST naming the compute capability of every GPU it runs on, "
        'e.g. "7.5 8.6" for an RTX 2080 and an RTX 3090 (xformers#1045).',
        prebuilt_en,
    ]
    assert _explain(XFORMERS_1045, MIXED, None, "zh") == [
        (
            "xformers-built-for-other-sm",
            "这个 xFormers 只针对 sm_75 编译，而内核 fmha_cutlassF_f16_aligned_64x128_rf_sm80 需要 sm_80 到 sm_100："
            "它是在另一块 GPU 上从源码构建的，与运行它的 GPU 不同。",
            [
                '重新构建 xFormers，并列出本机的每一种 GPU：TORCH_CUDA_ARCH_LIST="7.5;8.6"（xformers#1045）。',
                "或者安装预编译的 xformers wheel，它包含 7.5、8.0（带 PTX）及更新 GPU 的代码。",
            ],
        )
    ]


def test_flashinfer_old_check_on_new_gpus() -> None:
    l20 = _target(("NVIDIA L20", "8.9"), driver="550.54.15")
    assert _explain(FLASHINFER_371, l20, None, "en") == [
        (
            "flashinfer-requires-sm75",
            "flashinfer before 0.3.0 checked the architectures in TORCH_CUDA_ARCH_LIST, not the GPUs: any entry "
            "below 7.5 there fails the check, even on a newer GPU (flashinfer#1115, fixed in 0.3.0). "
            "Every GPU here is 7.5 or newer (8.9), so an architecture list, not the hardware, triggers this.",
            [
                'Unset TORCH_CUDA_ARCH_LIST and FLASHINFER_CUDA_ARCH_LIST, or set them to this machine\'s GPUs: "8.9".',
                "Upgrade flashinfer to 0.3.0 or newer, which checks the GPUs actually present.",
            ],
        )
    ]
    assert _explain(FLASHINFER_371, l20, None, "zh") == [
        (
            "flashinfer-requires-sm75",
            "0.3.0 之前的 flashinfer 检查的是 TORCH_CUDA_ARCH_LIST 中的架构，而不是 GPU 本身：只要其中有低于 7.5 的项，"
            "即使 GPU 更新也会检查失败（flashinfer#1115，已在 0.3.0 修复）。"
            "本机每块 GPU 的计算能力都不低于 7.5（8.9），因此触发该错误的是架构列表，而不是硬件。",
            [
                '取消设置 TORCH_CUDA_ARCH_LIST 和 FLASHINFER_CUDA_ARCH_LIST，或将它们设为本机的 GPU："8.9"。',
                "将 flashinfer 升级到 0.3.0 或更高版本，新版本检查的是实际存在的 GPU。",
            ],
        )
    ]


def test_flashinfer_new_check() -> None:
    cause_en = (
        "flashinfer found no target GPU of compute capability 7.5 or newer: it reads FLASHINFER_CUDA_ARCH_LIST "
        "if set, otherwise the visible GPUs."
    )
    assert _explain(FREETOKEN_119, None, None, "en") == [
        (
            "flashinfer-requires-sm75",
            cause_en,
            [
                "Unset TORCH_CUDA_ARCH_LIST and FLASHINFER_CUDA_ARCH_LIST, or list only architectures 7.5 and "
                "newer in them."
            ],
        )
    ]
    assert _explain(VLLM_42393, V100, None, "en") == [
        (
            "flashinfer-requires-sm75",
            cause_en + " Tesla V100-SXM2-16GB (7.0) is below flashinfer's minimum compute capability 7.5; "
            "no flashinfer build runs on it.",
            [DOCTOR_EN],
        )
    ]
    assert _explain(VLLM_42393, V100, None, "zh")[0][1] == (
        "flashinfer 没有找到计算能力 7.5 或更高的目标 GPU：设置了 FLASHINFER_CUDA_ARCH_LIST 时它读取该变量，"
        "否则读取可见的 GPU。Tesla V100-SXM2-16GB（7.0） 低于 flashinfer 要求的最低计算能力 7.5，"
        "任何 flashinfer 构建都无法在其上运行。"
    )


def test_torch_without_sm_120(db: CompatDB) -> None:
    assert _explain(XINFERENCE_3603, None, db, "en") == [
        (
            "torch-sm-unsupported",
            "This torch build has no kernels for NVIDIA GeForce RTX 5090 (sm_120); it carries sm_50 sm_60 sm_70 "
            "sm_75 sm_80 sm_86 sm_90. The GPU is newer than every architecture in the build: a torch built with "
            "CUDA 12.8 or newer is needed to compile for sm_120.",
            [
                "torch releases with native code for sm_120: 2.8.0 (cu128); 2.7.1 (cu128).",
                'Build torch from source with TORCH_CUDA_ARCH_LIST="12.0" so that it carries code for these GPUs.',
                LOCK_EN,
            ],
        )
    ]
    assert _explain(XINFERENCE_3603, None, db, "zh") == [
        (
            "torch-sm-unsupported",
            "这个 torch 构建没有适用于 NVIDIA GeForce RTX 5090（sm_120）的内核；它只包含 sm_50 sm_60 sm_70 sm_75 "
            "sm_80 sm_86 sm_90。这块 GPU 比构建中的所有架构都新：需要用 CUDA 12.8 或更高版本构建的 torch 才能包含 "
            "sm_120 的代码。",
            [
                "包含 sm_120 原生代码的 torch 版本：2.8.0（cu128）；2.7.1（cu128）。",
                '设置 TORCH_CUDA_ARCH_LIST="12.0" 后从源码构建 torch，使其包含这些 GPU 的代码。',
                LOCK_ZH,
            ],
        )
    ]


def test_torch_without_sm_61(db: CompatDB) -> None:
    ((_, cause, fixes),) = _explain(UV_14742, None, db, "en")
    assert cause == (
        "This torch build has no kernels for NVIDIA GeForce GTX 1080 Ti (sm_61); it carries sm_75 sm_80 sm_86 "
        "sm_90 sm_100 sm_120 compute_120."
    )
    assert fixes[0] == "torch releases with native code for sm_61: 2.8.0 (cu126); 2.7.1 (cu118, cu126)."
    ((_, cause, _),) = _explain(A1111_3003, None, None, "en")
    assert cause == "NVIDIA GTX TITAN Black has compute capability 3.5; this torch build supports 3.7 and newer only."
    ((_, cause, _),) = _explain(A1111_3003, None, None, "zh")
    assert cause == "NVIDIA GTX TITAN Black 的计算能力为 3.5；这个 torch 构建只支持 3.7 及以上。"


def test_cuda_not_available(db: CompatDB) -> None:
    check_en = (
        'Check the build: python -c "import torch; print(torch.__version__, torch.version.cuda)"; a +cpu version '
        "or None means a CPU-only build."
    )
    assert _explain(PYTORCH_16936, PASCAL, db, "en") == [
        (
            "cuda-not-available",
            "torch cannot use a GPU: the installed torch is a CPU-only build, no working NVIDIA driver or GPU is "
            "visible, or the driver is older than the torch build's CUDA.",
            [
                check_en,
                "Install builds for cu118 (CUDA 11.8), the newest variant this driver fully supports: "
                "cudaresolve install torch (with the GPU packages you use) takes them from PyPI or "
                "https://download.pytorch.org/whl/cu118, whichever serves "
                "them and answers, and keeps each paired with torch",
                "Check that nvidia-smi lists the GPU; if nvidia-smi fails too, the driver is the problem.",
                DOCTOR_EN,
            ],
        )
    ]
    assert _explain(MOCKINGBIRD_394, CPU_ONLY, db, "zh") == [
        (
            "cuda-not-available",
            "torch 无法使用 GPU：可能安装的是仅 CPU 的构建，可能看不到可用的 NVIDIA 驱动或 GPU，"
            "也可能驱动版本低于该 torch 构建所用的 CUDA。",
            [
                '检查构建：python -c "import torch; print(torch.__version__, torch.version.cuda)"；'
                "版本带 +cpu 或输出 None 即表示仅 CPU 的构建。",
                "目标机器没有 NVIDIA GPU，只能使用 cpu 变体。",
            ],
        )
    ]


def test_torch_cpu_build(db: CompatDB) -> None:
    cpu_device_en = "If the machine has no NVIDIA GPU, the code must not ask for 'cuda': run it on the CPU device."
    assert _explain(DETECTRON2_460, None, db, "en") == [
        (
            "torch-cpu-build",
            "The installed torch is a CPU-only build (a +cpu wheel, or the PyPI wheel on Windows and macOS).",
            [
                "Reinstall torch as a CUDA build, with the GPU packages "
                "beside it: cudaresolve install torch (with them) "
                "picks the variant for this machine and takes it from "
                "PyPI or https://download.pytorch.org/whl/<variant>, "
                "whichever serves it and answers, keeping each paired with torch.",
                cpu_device_en,
            ],
        )
    ]
    ((_, cause, fixes),) = _explain(DETECTRON2_460, MIXED, db, "zh")
    assert cause == "当前安装的 torch 是仅 CPU 的构建（+cpu 的 wheel，或 Windows 和 macOS 上来自 PyPI 的 wheel）。"
    assert fixes == [
        "安装 cu118（CUDA 11.8）构建，这是该驱动完全支持的最新变体："
        "cudaresolve install torch（连同所用的其他 GPU 包）会从 PyPI 或 "
        "https://download.pytorch.org/whl/cu118 中提供这些构建且能访问的那个安装它们，并让每个包与 torch 保持配对",
        "如果机器没有 NVIDIA GPU，代码就不应请求 'cuda'：请改在 CPU 设备上运行。",
    ]


def test_ptx_from_a_newer_toolchain(db: CompatDB) -> None:
    assert _explain(LIDAR_289, PASCAL, db, "en") == [
        (
            "ptx-unsupported-toolchain",
            "A kernel shipped as PTX was compiled by a newer CUDA toolkit than this driver supports, so the driver "
            "cannot JIT-compile it.",
            [
                "Install builds for cu118 (CUDA 11.8), the newest variant this driver fully supports: "
                "cudaresolve install torch (with the GPU packages you use) takes them from PyPI or "
                "https://download.pytorch.org/whl/cu118, whichever serves "
                "them and answers, and keeps each paired with torch",
                UPGRADE_EN,
                "A build with native code for sm_61 needs no JIT compilation and avoids this error.",
            ],
        )
    ]
    assert _explain(POWERINFER_229, None, None, "zh") == [
        (
            "ptx-unsupported-toolchain",
            "某个以 PTX 形式发布的内核是用比该驱动所支持的更新的 CUDA 工具包编译的，因此驱动无法即时编译它。",
            [UPGRADE_ZH, "包含该 GPU 原生代码（SASS）的构建无需即时编译，可以避免这个错误。"],
        )
    ]


def test_aoti_device_mismatch() -> None:
    expected_en = [
        (
            "aoti-device-mismatch",
            "An AOTInductor model runs on another device than it was compiled for: a CPU-compiled model loaded by a "
            "CUDA runner, or CPU tensors passed to a CUDA-compiled model.",
            [
                "Compile the model for the device it runs on: export and package it with the model and the example "
                "inputs on that device.",
                "Give the runner the device explicitly instead of letting it assume CUDA (torchchat added '-d DEVICE' "
                "for this, pytorch/torchchat#858).",
                "Move the inputs to the model's device before calling run().",
            ],
        )
    ]
    assert _explain(TORCHCHAT_709, None, None, "en") == expected_en
    assert _explain(TORCHCHAT_840, PASCAL, None, "en") == expected_en
    assert _explain(TORCHCHAT_709, None, None, "zh") == [
        (
            "aoti-device-mismatch",
            "AOTInductor 模型运行的设备与编译时的设备不同：用 CUDA runner 加载了为 CPU 编译的模型，"
            "或者把 CPU 张量传给了为 CUDA 编译的模型。",
            [
                "为实际运行的设备编译模型：导出和打包时，把模型和示例输入都放在该设备上。",
                "显式告诉 runner 要用的设备，不要让它默认使用 CUDA（torchchat 为此加入了 '-d DEVICE'，"
                "pytorch/torchchat#858）。",
                "调用 run() 之前，先把输入移到模型所在的设备上。",
            ],
        )
    ]


FIXED = [
    (
        PYMORESANE_22,
        "no-driver",
        "torch found no NVIDIA driver: none is installed, its kernel module is not loaded, or the container was "
        "started without GPU access.",
        [
            "Check that nvidia-smi lists the GPU; if nvidia-smi fails too, the driver is the problem.",
            "In Docker, start the container with --gpus all (NVIDIA Container Toolkit).",
            "Without an NVIDIA GPU, install the cpu variant: cudaresolve install torch --cpu (with the packages you "
            "use) takes it from https://download.pytorch.org/whl/cpu or PyPI, whichever answers",
        ],
        "torch 没有找到 NVIDIA 驱动：可能没有安装驱动、内核模块没有加载，或者容器启动时没有开放 GPU 访问。",
        [
            "确认 nvidia-smi 能列出这块 GPU；如果 nvidia-smi 也失败，问题出在驱动。",
            "在 Docker 中，用 --gpus all 启动容器（需要 NVIDIA Container Toolkit）。",
            "没有 NVIDIA GPU 时，请安装 cpu 变体：cudaresolve install torch --cpu（连同所用的包）会从 "
            "https://download.pytorch.org/whl/cpu 或 PyPI 中能访问的那个安装它",
        ],
    ),
    (
        WENET_700,
        "driver-init-failed",
        "An NVIDIA driver is installed, but CUDA could not initialise it (cuInit failed).",
        [
            "Run nvidia-smi: if it fails too, the driver is broken; after a driver upgrade, reboot so that the "
            "kernel module and the user-space libraries match.",
            "Check that this user can open /dev/nvidia*; a container needs those devices passed in.",
            "Run 'cudaresolve detect' to see what the driver reports.",
        ],
        "已安装 NVIDIA 驱动，但 CUDA 无法完成初始化（cuInit 失败）。",
        [
            "运行 nvidia-smi：如果它也失败，说明驱动已损坏；升级驱动后请重启，使内核模块与用户态库的版本一致。",
            "确认当前用户能打开 /dev/nvidia*；容器需要把这些设备传进去。",
            "运行 'cudaresolve detect' 查看驱动报告的信息。",
        ],
    ),
    (
        COMOSVC_6,
        "no-cuda-device",
        "CUDA sees no usable GPU: CUDA_VISIBLE_DEVICES hides them or names a missing index, or no GPU is attached "
        "to this process or container.",
        [
            "Check CUDA_VISIBLE_DEVICES: an empty value, or an index that does not exist, hides every GPU.",
            "List the GPUs with nvidia-smi -L.",
            "In Docker, start the container with --gpus all (NVIDIA Container Toolkit).",
        ],
        "CUDA 看不到可用的 GPU：可能是 CUDA_VISIBLE_DEVICES 屏蔽了它们或指定了不存在的编号，"
        "也可能这个进程或容器没有挂载 GPU。",
        [
            "检查 CUDA_VISIBLE_DEVICES：值为空或指定了不存在的编号时，所有 GPU 都会被屏蔽。",
            "用 nvidia-smi -L 列出 GPU。",
            "在 Docker 中，用 --gpus all 启动容器（需要 NVIDIA Container Toolkit）。",
        ],
    ),
    (
        CHATTTS_341,
        "triton-gpu-too-old",
        "Triton, which torch.compile uses to generate GPU code, needs compute capability 7.0 or newer; "
        "NVIDIA GeForce GTX 1080 Ti is 6.1.",
        [
            "Run the model without torch.compile (eager mode), or with a backend that generates no Triton code, "
            'e.g. torch.compile(backend="aot_eager").'
        ],
        "torch.compile 用 Triton 生成 GPU 代码，而 Triton 需要计算能力 7.0 或更高；"
        "NVIDIA GeForce GTX 1080 Ti 的计算能力为 6.1。",
        [
            "不使用 torch.compile（即 eager 模式）运行模型，或者使用不生成 Triton 代码的后端，"
            '例如 torch.compile(backend="aot_eager")。'
        ],
    ),
]


@pytest.mark.parametrize(
    ("text", "code", "cause_en", "fixes_en", "cause_zh", "fixes_zh"), FIXED, ids=[r[1] for r in FIXED]
)
def test_target_independent_explanations(
    text: str, code: str, cause_en: str, fixes_en: list[str], cause_zh: str, fixes_zh: list[str], db: CompatDB
) -> None:
    assert _explain(text, None, db, "en") == [(code, cause_en, fixes_en)]
    assert _explain(text, PASCAL, db, "en") == [(code, cause_en, fixes_en)]
    assert _explain(text, None, db, "zh") == [(code, cause_zh, fixes_zh)]


def test_missing_cuda_runtime(db: CompatDB) -> None:
    match_en = (
        "Install the build of the failing package that matches your torch's CUDA "
        '(python -c "import torch; print(torch.version.cuda)").'
    )
    assert _explain(AUTOTRAIN_292, MIXED, db, "en") == [
        (
            "missing-cuda-library",
            "libcudart.so.12 is missing: a compiled package was built for CUDA 12, and this environment has no "
            "CUDA 12 runtime (its torch comes from another CUDA major version, or is a CPU build).",
            [
                match_en,
                "Or install torch for cu128 (CUDA 12.8), a CUDA 12 build this driver runs: cudaresolve install torch "
                "(with the GPU packages you use) takes it from PyPI or https://download.pytorch.org/whl/cu128, "
                "whichever serves it and answers, and keeps each paired with torch",
                DOCTOR_EN,
            ],
        )
    ]
    assert _explain(AUTOTRAIN_292, MIXED, db, "zh") == [
        (
            "missing-cuda-library",
            "缺少 libcudart.so.12：某个编译好的软件包是针对 CUDA 12 构建的，而当前环境没有 CUDA 12 运行时"
            "（其中的 torch 来自另一个 CUDA 主版本，或是仅 CPU 的构建）。",
            [
                "为出错的软件包安装与当前 torch 的 CUDA 版本相符的构建"
                '（python -c "import torch; print(torch.version.cuda)"）。',
                "或者安装 cu128（CUDA 12.8）的 torch，这是该驱动能运行的 CUDA 12 构建："
                "cudaresolve install torch（连同所用的其他 GPU 包）会从 PyPI 或 https://download.pytorch.org/whl/cu128 "
                "中提供它且能访问的那个安装，并让每个包与 torch 保持配对",
                DOCTOR_ZH,
            ],
        )
    ]
    assert _explain(FACEFUSION_9, None, None, "en") == [
        (
            "missing-cuda-library",
            "libnvrtc.so is missing: a compiled package needs a CUDA library that this environment does not provide.",
            [match_en, DOCTOR_EN],
        )
    ]


def test_whole_log_explained_in_order(db: CompatDB) -> None:
    rtx5090 = _target(("NVIDIA GeForce RTX 5090", "12.0"), driver="570.124.06")
    explanations = explain_matches(match_errors(SDWEBUI_NIX_9), rtx5090, db)
    assert [e.code for e in explanations] == ["torch-sm-unsupported", "no-kernel-image"]
    assert format_text(explanations[1].fixes[0]) == (
        "torch releases with native code for sm_120: 2.8.0 (cu128); 2.7.1 (cu128)."
    )


def test_explain_text_and_unknown_text(db: CompatDB) -> None:
    assert explain_text(XFORMERS_692, None, db)[0].code == "xformers-built-for-other-sm"
    with pytest.raises(NoKnownError) as info:
        explain_text("ModuleNotFoundError: No module named 'numpy'", None, db)
    assert isinstance(info.value, CudaResolveError)
    assert info.value.code == "no-known-error"
    assert info.value.message == "no known CUDA error in the text"
    assert info.value.hint == "run 'cudaresolve doctor' to check the installed packages against this machine"
    assert info.value.exit_code == 1
    with pytest.raises(NoKnownError) as info:
        explain_text("", None, db)
    assert info.value.hint_text is not None
    assert (format_text(info.value.text, "zh"), format_text(info.value.hint_text, "zh")) == (
        "文本中没有已知的 CUDA 错误",
        "运行 'cudaresolve doctor'，对照本机检查已安装的软件包",
    )


def test_explanation_to_dict() -> None:
    cause, fixes = Text("sig.no-driver.cause"), (Text("fix.nvidia-smi"), Text("fix.docker-gpus"))
    explanation = Explanation(code="no-driver", cause=cause, fixes=fixes)
    assert explanation.to_dict() == {"code": "no-driver", "cause": cause, "fixes": list(fixes)}


def test_abi_mismatch_flashinfer_is_not_sent_to_the_pytorch_index() -> None:
    assert _explain(FLASHINFER_911, None, None, "en") == [
        (
            "abi-mismatch",
            "flashinfer is a compiled extension built against another torch than the one installed: it needs "
            "torch::jit::parseSchemaOrName(std::string const&, bool) (_ZN5torch3jit17parseSchemaOrNameERKSsb), "
            "which this torch does not export.",
            [
                "Install a flashinfer made for your torch: 0.4 and newer do not depend on torch's ABI "
                "(flashinfer-python with flashinfer-jit-cache for your CUDA version); older AOT wheels from "
                "https://flashinfer.ai/whl/<cuda>/<torch>/ each fit one torch minor version.",
                DOCTOR_EN,
            ],
        )
    ]
    assert _explain(FLASHINFER_911, None, None, "zh")[0][2][0] == (
        "安装与当前 torch 相匹配的 flashinfer：0.4 及更高版本不依赖 torch 的 ABI（flashinfer-python 加上与 CUDA "
        "版本对应的 flashinfer-jit-cache）；更早的 AOT wheel 来自 https://flashinfer.ai/whl/<cuda>/<torch>/，"
        "每个只适用于一个 torch 小版本。"
    )


def test_remaining_chinese_texts(db: CompatDB) -> None:
    assert _explain(YOLOV3_12, None, db, "zh") == [
        (
            "driver-insufficient",
            "NVIDIA 驱动版本过旧，不支持该构建所需的 CUDA 运行时。",
            [RERUN_ZH, UPGRADE_ZH, LOCK_ZH],
        ),
    ]
    assert _explain(FACEFUSION_9, None, None, "zh")[0][1] == (
        "缺少 libnvrtc.so：某个编译好的软件包需要一个当前环境没有提供的 CUDA 库。"
    )
    assert _explain(XFORMERS_692, None, None, "zh")[0][2][0] == (
        "重新构建 xFormers，并在 TORCH_CUDA_ARCH_LIST 中写明它要运行的每种 GPU 的计算能力，"
        '例如 RTX 2080 加 RTX 3090 写 "7.5 8.6"（xformers#1045）。'
    )
    assert _explain(DETECTRON2_460, None, db, "zh")[0][2][0] == (
        "把 torch 连同旁边的 GPU 包重新安装为 CUDA 构建：cudaresolve install torch（连同这些包）会为本机选出变体，"
        "并从 PyPI 或 https://download.pytorch.org/whl/<variant> 中提供它且能访问的那个安装，"
        "让每个包与 torch 保持配对。"
    )
    assert (
        _explain(LIDAR_289, MIXED, None, "zh")[0][2][-1]
        == "包含 sm_75、sm_86 原生代码的构建无需即时编译，可以避免这个错误。"
    )


def test_reported_cuda_without_a_database() -> None:
    ((_, _, fixes),) = _explain(FOOOCUS_1313, None, None, "en")
    assert fixes == ["Install builds made for CUDA 11.4 or older.", UPGRADE_EN, LOCK_EN]


def test_gpu_name_comes_from_the_message_else_the_target_else_a_word() -> None:
    first_two_lines = "\n".join(XINFERENCE_3603.splitlines()[:2])
    by_cc = _target(("sm_120", "12.0"))
    named = _target(("NVIDIA GeForce RTX 5090", "12.0"))
    assert _explain(first_two_lines, by_cc, None, "en")[0][1].startswith(
        "This torch build has no kernels for this GPU (sm_120); it carries sm_50"
    )
    assert _explain(first_two_lines, by_cc, None, "zh")[0][1].startswith(
        "这个 torch 构建没有适用于 这块 GPU（sm_120）的内核"
    )
    assert _explain(first_two_lines, named, None, "en")[0][1].startswith(
        "This torch build has no kernels for NVIDIA GeForce RTX 5090 (sm_120);"
    )


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("CUDA driver version is insufficient", "driver-insufficient"),
        ("RuntimeError: CUDA error: no kernel image is available", "no-kernel-image"),
        ("The NVIDIA driver on your system is too old", "driver-insufficient"),
    ],
)
def test_short_phrases_users_paste_are_recognised(text: str, code: str) -> None:
    assert [m.code for m in match_errors(text)] == [code]


def test_a_kernel_from_a_database_package_other_than_torch_is_blamed_on_it() -> None:
    """flashinfer's frame before the error: the kernel is flashinfer's (the database knows the package); a frame of a
    package without kernels of its own in the database (transformers) leaves it to torch."""
    from cudaresolve.db.database import load_compat

    shipped = load_compat()
    rtx5090 = Target(gpus=(Gpu(name="NVIDIA GeForce RTX 5090", cc=parse_cc("12.0")),),
                     driver=parse_driver("575.51.03"), platform="linux_x86_64", python="3.12")  # fmt: skip
    error = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    frame = '  File "/v/lib/python3.12/site-packages/{}/x.py", line 5, in f\n'
    ((_, cause, _),) = _explain(frame.format("flashinfer") + error, rtx5090, shipped, "en")
    assert cause.startswith("The failing kernel comes from flashinfer,")
    ((_, cause, _),) = _explain(frame.format("transformers") + error, rtx5090, shipped, "en")
    assert cause.startswith("A CUDA library in this process has no kernel for this GPU")


def test_an_xformers_kernel_older_than_the_gpu_is_not_told_to_rebuild() -> None:
    """'is for sm80-sm100, but was built for sm120' on an RTX 5090: the GPU runs its own code and the kernel has none
    for it (xformers#1279), so no rebuild; 'built for sm75' on an A100 is the source build for another GPU (#1045)."""
    from cudaresolve.db.database import load_compat

    shipped = load_compat()
    newer = "FATAL: kernel `fmha_cutlassB_f32_aligned_64x64_k65536_sm80` is for sm80-sm100, but was built for sm120"
    ((code, cause, fixes),) = _explain(newer, _target(("RTX 5090", "12.0"), driver="575.51.03"), shipped, "en")
    assert code == "xformers-built-for-other-sm" and "rebuilding it for sm_120 does not help" in cause
    assert not any("TORCH_CUDA_ARCH_LIST" in f for f in fixes) and "scaled_dot_product_attention" in fixes[-1]
    older = newer.replace("sm120", "sm75")
    ((_, cause, fixes),) = _explain(older, _target(("A100", "8.0"), driver="575.51.03"), shipped, "en")
    assert "built from source on another GPU" in cause and 'TORCH_CUDA_ARCH_LIST="8.0"' in fixes[0]


def test_xformers_with_no_operator_for_the_call_says_why() -> None:
    """'No operator found for memory_efficient_attention_forward': the extension not loaded (xformers#800: another
    torch's build) and the capability an operator needs, in either direction; the fixes pair xformers with torch."""
    log = (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "`fa2F@0.0.0` is not supported because:\n    xFormers wasn't build with CUDA support\n"
        "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
    )
    from cudaresolve.db.database import load_compat

    shipped = load_compat()
    ((code, cause, fixes),) = _explain(log, None, shipped, "en")
    assert code == "xformers-no-operator"
    assert "CUDA extension did not load" in cause and "compute capability > 8.0; this one has 7.5" in cause
    assert fixes[0].startswith("Install the xformers release made for your torch")
    newer = log.replace("> (8, 0)", "<= (9, 0)").replace("(7, 5) (too old)", "(12, 0) (too new)")
    newer = newer.replace("    xFormers wasn't build with CUDA support\n", "")
    ((_, cause, fixes),) = _explain(newer, None, shipped, "en")
    assert "compute capability <= 9.0; this one has 12.0" in cause and "did not load" not in cause
    assert not fixes[0].startswith("Install the xformers release")
