"""numba kernels: serial loops over preallocated outputs (design §7)."""
