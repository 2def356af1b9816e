"""Fast paths: numba (CPU) and cupy (GPU, CPU-emulated without one) batch kernels."""
