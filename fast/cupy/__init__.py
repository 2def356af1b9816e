"""cupy kernels, written against an array module `xp`: cupy on a CUDA machine, numpy
elsewhere, so the same code is checked on CPU ("cpu-emulated")."""
