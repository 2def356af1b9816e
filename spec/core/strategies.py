"""`st`: hypothesis.strategies, imported on first use rather than when a spec module loads.

Op declarations name their argument domains with hypothesis strategies, mostly inside lambdas,
but `@st.composite` runs when the module loads. A command that never draws a value (`serve`,
`--version`) should not pay for importing hypothesis, so the spec modules use this `st`:

1. Any attribute of `st` (`st.integers`, `st.SearchStrategy`, ...) imports hypothesis.strategies
   and returns that attribute itself: the strategies built are the real ones.
2. `st.composite(fn)` returns a `LazyComposite`: calling it builds `hypothesis.strategies
   .composite(fn)` once, keeps it, and forwards the call, so it returns a real strategy as the
   decorated function would have.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any


def _real() -> Any:
    return importlib.import_module("hypothesis.strategies")


class LazyComposite:
    """A `@st.composite` function whose hypothesis wrapper is built on its first call."""

    def __init__(self, fn: Callable[..., Any]):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._built: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._built is None:
            self._built = _real().composite(self._fn)
        return self._built(*args, **kwargs)


class _Strategies:
    """Stands for the module hypothesis.strategies (see the module docstring)."""

    def composite(self, fn: Callable[..., Any]) -> LazyComposite:
        return LazyComposite(fn)

    def __getattr__(self, name: str) -> Any:
        return getattr(_real(), name)


st = _Strategies()
