"""Packages an op or an obligation may need that an installation can lack. A missing one is
the installation's limit, never a wrong spec: an op answers `unsupported` naming the package
and the extra that installs it, and `prove` reports the obligation as skipped."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .errors import UNSUPPORTED, SpecError

EXTRAS = {"egglog": "egraph", "torch": "torch", "cupy": "gpu", "matplotlib": "paper",
          "crosshair": "dev"}
"""Each optional package and the extra of crucible-spec that installs it."""


class MissingPackage(SpecError):
    """An op or a check needs `package`, which is not installed."""

    def __init__(self, package: str):
        extra = EXTRAS.get(package)
        how = f"pip install 'crucible-spec[{extra}]'" if extra else f"pip install {package}"
        super().__init__(UNSUPPORTED, f"needs the package {package}, which is not installed "
                                      f"({how})")
        self.package = package


def installed(package: str) -> bool:
    """Whether `package` can be imported here."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def load(module: str) -> ModuleType:
    """Import `module` of an optional package, or raise MissingPackage naming the package."""
    package = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or e.name.partition(".")[0] != package:
            raise
        raise MissingPackage(package) from None
