// The same kernel with C linkage, built as a bare cubin/PTX file for CuPy's RawModule: the driver
// API's own error text when a module has no code for the GPU (tools/gpu_proof/probe.py).
extern "C" __global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
