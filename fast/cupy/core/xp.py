"""The array module of the cupy backend: cupy when a CUDA device is usable, else numpy.

cupy is imported lazily (its import alone takes seconds). CRUCIBLE_SPEC_CUPY=emulate forces
numpy even on a GPU machine.

On a real GPU the float32 kernels are not yet bit-exact: CuPy compiles every kernel with
-ftz=true, after any option a caller gives, so subnormal inputs read as zero and subnormal
results are flushed (relu(1e-45) is 0, 1 * 6.1e-41 is 0), some zero signs are lost, and a NaN
the GPU makes is 0x7fffffff where the reference's is 0xffc00000. Measured on an NVIDIA H200
(cupy 14.2, driver 580): 25 of 198 cupy tests fail, every one for these reasons. CPU emulation
cannot show it; computing in integers or float64 on the device is the fix still to make.
"""

from __future__ import annotations

import os
from functools import cache
from types import ModuleType

import numpy as np


@cache
def _probe() -> tuple[ModuleType, str]:
    if os.environ.get("CRUCIBLE_SPEC_CUPY") == "emulate":
        return np, "cpu-emulated (CRUCIBLE_SPEC_CUPY=emulate)"
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            props = cupy.cuda.runtime.getDeviceProperties(0)
            return cupy, f"cuda:0 ({props['name'].decode()})"
    except Exception as e:  # no cupy, no driver, no device: all mean "emulate"
        return np, f"cpu-emulated ({type(e).__name__}: {str(e)[:80]})"
    return np, "cpu-emulated (no CUDA device)"


def xp() -> ModuleType:
    """cupy or numpy."""
    return _probe()[0]


def device() -> str:
    """'cuda:0 (NAME)' or 'cpu-emulated (why)'."""
    return _probe()[1]


def to_device(a: np.ndarray):
    return xp().asarray(a)


def to_host(a) -> np.ndarray:
    m = xp()
    return a if m is np else m.asnumpy(a)
