"""Build a tiny torch CUDA extension for sm_80 only (TORCH_CUDA_ARCH_LIST=8.0) on a real GPU machine
and call it on the GPU there, to record torch's own text for a kernel with no code for the device
(tools/gpu_proof/probe.py runs this).

    python3 ext_probe.py OUT_DIR      -> OUT_DIR/ext.json
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void add_one_kernel(float *x, int64_t n) {
    int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
torch::Tensor add_one(torch::Tensor x) {
    add_one_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return x;
}
"""
CPP_SOURCE = "torch::Tensor add_one(torch::Tensor x);"


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"
    import torch
    from torch.utils.cpp_extension import load_inline

    result: dict[str, object] = {
        "torch": torch.__version__,
        "arch_list": "8.0",
        "device_capability": list(torch.cuda.get_device_capability(0)),
        "torch_arch_list": torch.cuda.get_arch_list(),
    }
    try:
        module = load_inline(
            name="cr_add_one_sm80",
            cpp_sources=CPP_SOURCE,
            cuda_sources=CUDA_SOURCE,
            functions=["add_one"],
            build_directory=str(out),
            verbose=False,
            extra_cuda_cflags=["-gencode", "arch=compute_80,code=sm_80"],
        )
        result["built"] = True
    except BaseException as exc:
        result.update(built=False, type=type(exc).__name__, text=str(exc)[-20000:])
        (out / "ext.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
        return 1
    try:
        value = module.add_one(torch.zeros(16, device="cuda"))
        torch.cuda.synchronize()
        result.update(ok=True, value=float(value.sum()))
    except BaseException as exc:
        result.update(
            ok=False,
            type=type(exc).__name__,
            text=str(exc)[-20000:],
            traceback_tail="".join(traceback.format_exception(exc))[-4000:],
        )
    (out / "ext.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
