"""The array module of the cupy backend: cupy when a CUDA device is usable, else numpy.

cupy is imported lazily (its import alone takes seconds). CRUCIBLE_SPEC_CUPY=emulate forces
numpy even on a GPU machine.
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
