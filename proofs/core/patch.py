"""Planting a bug in a spec function in place: its code object is replaced by one compiled
from an edited copy of its own source, so every caller (imported names, methods, closures
over it) runs the bug until the patch is undone. Mutants of proof obligations and the
`mutate` command both plant bugs this way; nothing is copied by hand."""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class PatchError(ValueError):
    """An edit that cannot be planted: the text is not in the function, or it does not
    compile to a function of the same shape."""


def unwrap(fn: Callable) -> types.FunctionType:
    """The plain function behind decorators (functools.cache, wraps), properties and
    bound methods."""
    if isinstance(fn, property):
        fn = fn.fget
    if isinstance(fn, staticmethod | classmethod):
        fn = fn.__func__
    fn = getattr(fn, "__func__", fn)
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    if not isinstance(fn, types.FunctionType):
        raise PatchError(f"{fn!r} is not a Python function")
    return fn


def qualified_name(fn: Callable) -> str:
    """module:qualname of a function, the name mutants and reports use."""
    f = unwrap(fn)
    return f"{f.__module__}:{f.__qualname__}"


def resolve(name: str) -> types.FunctionType:
    """The function named module:qualname."""
    module, _, qual = name.partition(":")
    obj = sys.modules.get(module) or __import__(module, fromlist=["_"])
    for part in qual.split("."):
        obj = inspect.getattr_static(obj, part)
    return unwrap(obj)


@dataclass(frozen=True)
class Source:
    """A function's source as it stands in its file: the text (dedented), its first line
    and its file name."""

    text: str
    first_line: int
    filename: str


@functools.cache
def source_of(fn: types.FunctionType) -> Source:
    lines, first = inspect.getsourcelines(fn)
    return Source(textwrap.dedent("".join(lines)), first, fn.__code__.co_filename)


def compile_function(fn: types.FunctionType, tree: ast.Module) -> types.CodeType:
    """Compile a parsed function definition (one statement) to the code object of `fn`'s
    replacement, with `fn`'s line numbers, file name and free variables."""
    src = source_of(fn)
    ast.increment_lineno(tree, src.first_line - 1)
    freevars = fn.__code__.co_freevars
    if freevars:
        # Compile inside an enclosing function that binds the same names, so they stay free.
        outer = ast.parse(f"def _outer():\n {' = '.join(freevars)} = None\n")
        outer.body[0].body.append(tree.body[0])
        tree = ast.fix_missing_locations(outer)
    module_code = compile(tree, src.filename, "exec")
    code = _find_code(module_code, fn.__code__.co_name)
    if code is None or code.co_freevars != freevars:
        raise PatchError(f"{qualified_name(fn)}: the edit does not compile to the same function")
    return code


def _find_code(code: types.CodeType, name: str) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                return const
            inner = _find_code(const, name)
            if inner is not None:
                return inner
    return None


def edited_code(fn: types.FunctionType, old: str, new: str, occurrence: int = 1
                ) -> types.CodeType:
    """The code of `fn` with the `occurrence`-th `old` of its source replaced by `new`."""
    text = source_of(fn).text
    at = -1
    for _ in range(occurrence):
        at = text.find(old, at + 1)
        if at < 0:
            raise PatchError(f"{qualified_name(fn)}: {old!r} (occurrence {occurrence}) "
                             "is not in its source")
    edited = text[:at] + new + text[at + len(old):]
    try:
        tree = ast.parse(edited)
    except SyntaxError as e:
        raise PatchError(f"{qualified_name(fn)}: the edit is not valid Python: {e}") from e
    return compile_function(fn, tree)


def clear_caches() -> None:
    """Empty every functools cache of this package (spec tables, seeded input pools, golden
    data), so no result computed before (or under) a patch outlives it."""
    for name, module in list(sys.modules.items()):
        if not name.startswith(CACHED_PACKAGE) or module is None:
            continue
        for value in list(vars(module).values()):
            for obj in (value, *_class_members(value)):
                clear = getattr(obj, "cache_clear", None)
                if callable(clear):
                    clear()


CACHED_PACKAGE = "crucible_spec."


def _class_members(value) -> tuple:
    return tuple(vars(value).values()) if isinstance(value, type) else ()


PLANTED: list[str] = []
"""What is planted in this process now, innermost last: only a forked worker inherits it."""


@contextlib.contextmanager
def holding(what: str) -> Iterator[None]:
    """Record `what` as planted while the block runs."""
    PLANTED.append(what)
    try:
        yield
    finally:
        PLANTED.remove(what)


@contextlib.contextmanager
def planted(fn: Callable, code: types.CodeType) -> Iterator[None]:
    """Run the block with `fn`'s code replaced by `code`, then put the original back."""
    target = unwrap(fn)
    original = target.__code__
    target.__code__ = code
    clear_caches()
    try:
        with holding(qualified_name(target)):
            yield
    finally:
        target.__code__ = original
        clear_caches()


@contextlib.contextmanager
def edited(fn: Callable, old: str, new: str, occurrence: int = 1) -> Iterator[None]:
    """Run the block with the source edit old -> new planted in `fn`."""
    with planted(fn, edited_code(unwrap(fn), old, new, occurrence)):
        yield
