// A host program that launches one tiny kernel and prints what the CUDA runtime answered, as
// "launch <error name>: <error string>". tools/gpu_proof/probe.py builds it for several targets
// (SASS only, PTX only, a newer SM) to record on a real GPU which builds run and the real texts.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

int main() {
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 32 * sizeof(float));
    if (e != cudaSuccess) {
        printf("malloc %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
        return 2;
    }
    add_one<<<1, 32>>>(d, 32);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    printf("launch %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
