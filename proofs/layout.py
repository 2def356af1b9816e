"""Layout obligations, one per declared struct, generated from the declarations: members are
naturally aligned, pairwise disjoint and inside the struct, whose size is a multiple of its
alignment and at least its last member's end. Numbered from 100 in each chapter, by name."""

from __future__ import annotations

from dataclasses import dataclass, replace

import z3

from ..spec.layout import Struct
from ..spec.registry import REGISTRY, Mutant, Obligation
from .obligation import Query

LAYOUT_OPS = ("layout.info", "layout.decode", "layout.encode")


@dataclass(frozen=True)
class Facts:
    """What a declaration says: each member's (name, offset, size, alignment); sizeof, alignof."""

    members: tuple[tuple[str, int, int, int], ...]
    size: int
    align: int


def facts_of(s: Struct) -> Facts:
    return Facts(tuple((p.name, p.offset, p.member.ctype.size, p.align) for p in s.all_placed()),
                 s.size, s.align)


def moved_down(f: Facts) -> Facts:
    """Mutant: the last member declared one byte lower than it is."""
    *rest, (name, off, size, align) = f.members
    return replace(f, members=(*rest, (name, off - 1, size, align)))


def layout_queries(f: Facts) -> list[Query]:
    """Counterexample searches over the declared numbers. Intervals sorted by offset are
    pairwise disjoint exactly when each one ends before the next begins."""
    ms = sorted(f.members, key=lambda m: (m[1], m[1] + m[2]))
    off = [z3.IntVal(m[1]) for m in ms]
    end = [z3.IntVal(m[1] + m[2]) for m in ms]
    return [
        Query("members pairwise disjoint",
              z3.Or([end[i] > off[i + 1] for i in range(len(ms) - 1)] or [z3.BoolVal(False)])),
        Query("members inside the struct",
              z3.Or([z3.Or(o < 0, e > f.size) for o, e in zip(off, end, strict=True)])),
        Query("members naturally aligned",
              z3.Or([o % m[3] != 0 for o, m in zip(off, ms, strict=True)])),
        Query("sizeof a multiple of alignof, alignof the largest member alignment",
              z3.Or(z3.IntVal(f.size) % f.align != 0,
                    z3.IntVal(f.align) < max(m[3] for m in f.members))),
    ]


def register_layout_obligations() -> None:
    """One obligation per struct, numbered PO<chapter>.100, .101, ... by struct name."""
    structs = sorted({s.name: s for s in REGISTRY.layouts.values()}.values(),
                     key=lambda s: (s.chapter, s.name))
    number: dict[int, int] = {}
    for s in structs:
        n = number.get(s.chapter, 100)
        number[s.chapter] = n + 1
        REGISTRY.add_obligation(Obligation(
            f"PO{s.chapter}.{n}",
            f"Layout of {s.name}: members aligned, disjoint, inside; sizeof {s.size}, "
            f"alignof {s.align}.",
            "z3", (f"layout:{s.name}", *LAYOUT_OPS), layout_queries, facts_of(s),
            (Mutant("member moved down", "the last member one byte lower", moved_down(
                facts_of(s))),),
            10.0))


register_layout_obligations()
