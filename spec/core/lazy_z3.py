"""`z3`: the z3 module, imported on the first attribute use rather than when a spec module loads.

Only the ops and obligations that ask z3 a question need it; serving a hello or parsing a command
line should not pay for importing it. `z3.X` imports z3 once and returns its `X`, which is then
kept on the stand-in so later uses are one attribute lookup.
"""

from __future__ import annotations

import importlib
from typing import Any


class _LazyModule:
    """Stands for the module `name`, imported on first attribute use."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value


z3 = _LazyModule("z3")
