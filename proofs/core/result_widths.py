"""Widths hold on every path (chapter 8): on every op's generated inputs, under every profile,
each integer of the result fits the width its schema declares, and the 64-bit mixers (wymix,
fmix64) are only ever handed operands below 2^64. The second half finds a value that leaves
its width on an erratum path where it is made (E8.4 once packed a 72-bit meta into wymix),
before a final fmix64 folds it back into 64 bits and hides it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import cache, partial
from typing import Any
from unittest.mock import patch

from ...spec.core.errata import profile_errata, profiles
from ...spec.core.errors import SpecError
from ...spec.core.optional import MissingPackage
from ...spec.core.registry import REGISTRY, Mutant
from ...spec.core.schema import Array, Int, List, Optional, Record, Type
from ...spec.crucible import hashing
from ...spec.crucible.content_hash import packed_meta
from .obligation import Property, property_obligation

MIXERS = ("wymix", "fmix64")
"""The spec's 64-bit hash mixers: both take and give u64 values."""
CHECKED_PACKAGES = ("crucible_spec.spec.", "crucible_spec.reference.")
EXAMPLES_PER_OP = 10


def out_of_range(t: Type, value: Any, path: str) -> list[str]:
    """Each integer of `value` (nested in lists, arrays, optionals and records) that does not
    fit its declared Int type, as `path = value`."""
    if isinstance(t, Int):
        return [] if t.lo <= value <= t.hi else [f"{path} = {value:#x} exceeds {t.describe()}"]
    if isinstance(t, Optional):
        return [] if value is None else out_of_range(t.inner, value, path)
    if isinstance(t, (List, Array)):
        return [p for k, v in enumerate(value) for p in out_of_range(t.item, v, f"{path}[{k}]")]
    if isinstance(t, Record):
        return [p for name, f in t.fields.items()
                for p in out_of_range(f.type, value[name], f"{path}.{name}")]
    return []


def _guarded(name: str, fn: Any, bad: list[str]) -> Any:
    def call(*operands: Any) -> Any:
        bad.extend(f"{name} operand {x:#x}" for x in operands
                   if isinstance(x, int) and not 0 <= x < 1 << 64)
        return fn(*operands)
    return call


_SITES: dict[tuple, list[tuple[Any, str]]] = {}


def mixer_sites() -> list[tuple[Any, str]]:
    """Each (module, name) of spec or reference code that holds one of the mixers, found once
    per set of loaded modules and mixer functions (a planted bug may replace a mixer)."""
    fns = tuple(getattr(hashing, name) for name in MIXERS)
    key = (len(sys.modules), *map(id, fns))
    if key not in _SITES:
        _SITES[key] = [(module, name) for module_name, module in list(sys.modules.items())
                       if module_name.startswith(CHECKED_PACKAGES)
                       for name, fn in zip(MIXERS, fns, strict=True)
                       if getattr(module, name, None) is fn]
    return _SITES[key]


@contextmanager
def operands_checked() -> Iterator[list[str]]:
    """While open, each mixer called from spec or reference code notes every operand outside
    [0, 2^64) in the list it yields."""
    bad: list[str] = []
    wrappers = {name: _guarded(name, getattr(hashing, name), bad) for name in MIXERS}
    with ExitStack() as stack:
        for module, name in mixer_sites():
            stack.enter_context(patch.object(module, name, wrappers[name]))
        yield bad


def width_problems(op_name: str, profile: str, value: dict) -> list[str]:
    """What leaves its width when the reference answers `value` (domain form) under `profile`;
    an input the spec rejects has none. An op whose package is missing raises MissingPackage:
    its widths are not checked, so the obligation is skipped, not proved."""
    from ...engine import decode_args, run_reference

    op = REGISTRY.ops[op_name]
    try:
        args = decode_args(op, op.args.encode(value))
        with operands_checked() as bad:
            result = run_reference(op, args, profile_errata(profile))
    except MissingPackage:
        raise
    except SpecError:
        return []
    return bad + out_of_range(op.result, result, "result")


@cache
def distinct_profiles(op_name: str) -> list[str]:
    """Every profile, less those the reference cannot tell from an earlier one for this op
    (it hands the op the same errata, so it gives the same answer: `errata_seen`)."""
    from ...engine import errata_seen

    op, seen, chosen = REGISTRY.ops[op_name], set(), []
    for profile in sorted(profiles()):
        key = errata_seen(op, profile_errata(profile))
        if key not in seen:
            seen.add(key)
            chosen.append(profile)
    return chosen


def check_widths(op_name: str, value: dict) -> None:
    """The widths hold for op `op_name` on `value` under every profile (one of each set of
    profiles the op cannot tell apart)."""
    for profile in distinct_profiles(op_name):
        problems = width_problems(op_name, profile, value)
        assert not problems, f"{op_name} under {profile}: {'; '.join(problems[:3])}"


@property_obligation(
    "PO8.64",
    "On every op's generated inputs, under every profile, every integer of the result fits "
    "its schema's width (an unsigned one, a hash included, lies in [0, 2^64) or narrower) "
    "and wymix and fmix64 are handed only operands below 2^64.",
    covers=("dag.content_hash", "cdag.encode", "trace.build"),
    subject=packed_meta,
    mutants=(Mutant.edit("unmasked seed packing", "the seed's packed meta is not cut to 64 "
                         "bits, so a negative device type reaches wymix 72 bits wide",
                         packed_meta, ") & mask(64)", ")"),),
)
def results_fit_their_widths(_subject):
    return [Property(f"{name} results and mixer operands", partial(check_widths, name),
                     strategy=REGISTRY.ops[name].strategy, examples=EXAMPLES_PER_OP)
            for name in sorted(REGISTRY.ops)]
