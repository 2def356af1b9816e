"""What the paper reads from the spec modules themselves: their docstrings, their constants
with the docstrings that follow them, and every top-level definition with its source lines."""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

SPEC_PACKAGE = "crucible_spec.spec"


@dataclass(frozen=True)
class Constant:
    """A public module-level number or byte string, with the docstring written under it."""

    module: str
    name: str
    value: Any
    doc: str
    line: int


@dataclass(frozen=True)
class Definition:
    """A top-level function or class of a spec module: its source and where it starts."""

    module: str
    name: str
    obj: Any
    doc: str
    source: str
    line: int


def spec_module(name: str) -> ModuleType:
    return importlib.import_module(f"{SPEC_PACKAGE}.{name}")


def module_path(name: str) -> str:
    """The module's path as a reader of the repository finds it (`spec/crucible/hashing.py`,
    `spec/ringkernel/hlc/clock.py`)."""
    folder = name.rpartition(".")[0].replace(".", "/")
    return "/".join(p for p in ("spec", folder, Path(spec_module(name).__file__).name) if p)


@cache
def module_source(name: str) -> str:
    return inspect.getsource(spec_module(name))


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(module_source(name))


def module_doc(name: str) -> str:
    return inspect.cleandoc(spec_module(name).__doc__ or "")


def tool_doc(dotted: str) -> tuple[str, str]:
    """(repository path, docstring) of a module outside spec/, e.g. `proofs.model`."""
    module = importlib.import_module(f"crucible_spec.{dotted}")
    path = "/".join([*dotted.split(".")[:-1], Path(module.__file__).name])
    return path, inspect.cleandoc(module.__doc__ or "")


def _is_constant(value: Any) -> bool:
    return (isinstance(value, (int, float, bytes)) and not isinstance(value, (bool, enum.Enum)))


def constants(name: str) -> list[Constant]:
    """Public UPPER_CASE numbers and byte strings assigned at the top of module `name`."""
    module, body, out = spec_module(name), _tree(name).body, []
    for i, node in enumerate(body):
        target = (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1
                  else node.target if isinstance(node, ast.AnnAssign) else None)
        if not isinstance(target, ast.Name):
            continue
        ident = target.id
        if ident.startswith("_") or not ident.isupper() or not _is_constant(
                getattr(module, ident, None)):
            continue
        after = body[i + 1] if i + 1 < len(body) else None
        doc = (inspect.cleandoc(after.value.value) if isinstance(after, ast.Expr)
               and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)
               else "")
        out.append(Constant(name, ident, getattr(module, ident), doc, node.lineno))
    return out


def definitions(name: str) -> list[Definition]:
    """Every function and class defined at the top of module `name`, in source order."""
    module, out = spec_module(name), []
    lines = inspect.getsource(module).splitlines()
    for node in _tree(name).body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        obj = getattr(module, node.name, None)
        if obj is None:
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        source = "\n".join(lines[start - 1:node.end_lineno])
        out.append(Definition(name, node.name, obj, inspect.cleandoc(ast.get_docstring(node)
                                                                     or ""), source, start))
    return out


def spec_module_name(obj: Any) -> str:
    """The spec module `obj` (a function, class or instance) was defined in, or ''."""
    mod = getattr(obj, "__module__", "") or ""
    return mod.removeprefix(SPEC_PACKAGE + ".") if mod.startswith(SPEC_PACKAGE + ".") else ""


def defined_in(fn: Any) -> tuple[str, str] | None:
    """(spec module, top-level name) of a spec function (a method's class), or None when it
    lives elsewhere."""
    mod = getattr(fn, "__module__", "") or ""
    if not mod.startswith(SPEC_PACKAGE + "."):
        return None
    return mod.removeprefix(SPEC_PACKAGE + "."), fn.__qualname__.split(".")[0]
