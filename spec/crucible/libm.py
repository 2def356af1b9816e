"""Chapter 12: which expf, erff, logf and sqrtf the CPU kernels mean.

1. The seed's kernels call the C library's binary32 functions; its golden values were made
   with glibc (2.36 here). The spec means glibc's `expf`, `erff` and `logf`, called through
   ctypes where the process has glibc's libm.
2. `sqrtf` is correctly rounded in every libm, so the spec computes it as the binary64 root
   rounded once to binary32 (exact: binary64 has more than 2 x 24 + 2 bits).
3. Without glibc the spec falls back to the binary64 function rounded once to binary32. That
   is not always glibc's answer (measured over 2 x 10^5 inputs: 101 expf, 1,366 erff and 457
   logf results differ, each by 1 ulp), so an op that calls these functions is compared within
   its declared envelope, never bit for bit.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from functools import cache

import numpy as np

GLIBC_LIBM = "libm.so.6"


@cache
def _glibc() -> dict[str, Callable[[float], float]] | None:
    try:
        lib = ctypes.CDLL(GLIBC_LIBM)
        ctypes.CDLL(None).gnu_get_libc_version  # noqa: B018 - glibc, not another libc
    except (OSError, AttributeError):
        return None
    out = {}
    for name in ("expf", "erff", "logf"):
        f = getattr(lib, name)
        f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
        out[name] = f
    return out


def libm_name() -> str:
    """Which transcendentals this process computes: glibc's, or the binary64 fallback."""
    return "glibc" if _glibc() is not None else "binary64 rounded once (fallback)"


def _call(name: str, fallback: Callable[[float], float], x: np.float32) -> np.float32:
    fns = _glibc()
    if fns is not None:
        return np.float32(fns[name](float(x)))
    try:
        return np.float32(fallback(float(x)))
    except OverflowError:
        return np.float32(np.inf)
    except ValueError:
        return np.float32(np.nan) if x == x and x < 0 else np.float32(-np.inf)


def expf(x: np.float32) -> np.float32:
    """e^x in binary32 (step 1 or 3)."""
    return _call("expf", math.exp, x)


def erff(x: np.float32) -> np.float32:
    """erf(x) in binary32 (step 1 or 3)."""
    return _call("erff", math.erf, x)


def logf(x: np.float32) -> np.float32:
    """ln x in binary32 (step 1 or 3); logf(0) = -inf, logf of a negative is NaN."""
    return _call("logf", math.log, x)


def sqrtf(x: np.float32) -> np.float32:
    """The correctly rounded square root (step 2)."""
    return np.float32(np.sqrt(np.float64(x)))
