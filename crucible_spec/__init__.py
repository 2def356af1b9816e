"""crucible-spec: the executable, machine-checked yellowpaper of Crucible."""

from __future__ import annotations

import importlib
import pkgutil

__version__ = "0.1.0"
SPEC_VERSION = "0.1.0"
"""Version of the spec; vectors and reports carry it."""
PROTOCOL_VERSION = 2
"""Version of the wire protocol (design §4), stated by `hello`: 1 is one request per line; 2
adds the optional batch form, which an implementation declares with `"batch": true`."""

_LAYERS = ("spec", "reference", "fast", "proofs")
_loaded: set[str] = set()


def load_all(layers: tuple[str, ...] = _LAYERS) -> None:
    """Import every module of the given packages so all their registrations happen.

    The default is all of spec/, reference/, fast/ and proofs/. A command that needs less names
    less (`serve --impl numba` loads spec, reference and fast.numba: no proofs, no cupy), which
    is what keeps its start-up short; a package already loaded is not walked again."""
    for layer in layers:
        if layer in _loaded:
            continue
        pkg = importlib.import_module(f"{__name__}.{layer}")
        for info in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}."):
            importlib.import_module(info.name)
        _loaded.add(layer)
