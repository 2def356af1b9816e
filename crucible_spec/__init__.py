"""crucible-spec: the executable, machine-checked yellowpaper of Crucible."""

from __future__ import annotations

import importlib
import pkgutil

__version__ = "0.1.0"
SPEC_VERSION = "0.1.0"
"""Version of the spec and its wire protocol; vectors and reports carry it."""

_LAYERS = ("spec", "reference", "fast", "proofs")
_loaded = False


def load_all() -> None:
    """Import every module of spec/, reference/, fast/ and proofs/ so all registrations happen."""
    global _loaded
    if _loaded:
        return
    for layer in _LAYERS:
        pkg = importlib.import_module(f"{__name__}.{layer}")
        for info in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}."):
            importlib.import_module(info.name)
    _loaded = True
