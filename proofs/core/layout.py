"""Layout obligations, one per declared struct, numbered from 100 in each chapter (Crucible's
structs by name, then each other seed's): the spec's layout rule (spec/core/layout.py `place`),
applied now to the declaration's members, gives the sizeof, alignof and member offsets that
the real compiler measured (golden file crucible-8d2680a2-layouts.json), or else those a facts
sheet states (layouts-facts.json). A struct known to neither is checked only against its own
static_assert, and says so. Mutants swap two adjacent members, or plant a bug in the placement
and rounding of `place`."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from importlib import resources

from ...spec.core.layout import Member, Struct, place
from ...spec.core.registry import REGISTRY, Mutant, Obligation
from .obligation import Property

LAYOUT_OPS = ("layout.info", "layout.decode", "layout.encode")
COMPILER_FILE = "crucible-8d2680a2-layouts.json"
FACTS_FILE = "layouts-facts.json"
COMPILER = "the compiler (crucible 8d2680a2)"
MEMBERS = "member names"
NO_FACTS = "its static_assert (no compiler facts)"


@dataclass(frozen=True)
class Known:
    """What is known of a struct outside the spec: sizeof, alignof, the offsets of its own
    members (None: nothing but its static_assert) and where that comes from."""

    size: int
    align: int
    offsets: dict[str, int] | None
    source: str


def golden_data(name: str) -> object:
    """A data file of the conformance golden folder."""
    return json.loads(resources.files("crucible_spec.conformance")
                      .joinpath("golden", name).read_text())


@functools.cache
def known_layouts() -> dict[str, tuple[Known, ...]]:
    """Declared struct name -> every compiler measurement of it, else what a facts sheet says.
    An entry's name may carry a parenthetical note; an undeclared struct is keyed as written."""
    measured: dict[str, list[Known]] = {}
    for e in golden_data(COMPILER_FILE):
        measured.setdefault(declared_name(e["struct"]), []).append(
            Known(e["sizeof"], e["alignof"], e["offsets"], COMPILER))
    stated = {declared_name(e["struct"]): [Known(e["sizeof"], e["alignof"], e["offsets"],
                                                 f"the facts sheet ({e['source']})")]
              for e in golden_data(FACTS_FILE)["structs"]}
    return {name: tuple(k for i, k in enumerate(ks) if k not in ks[:i])
            for name, ks in (stated | measured).items()}


def declared_name(name: str) -> str:
    """The declared struct a golden entry names (its aliases and notes resolved)."""
    s = REGISTRY.layout(name)
    return s.name if s is not None else name


def known_for(s: Struct) -> tuple[Known, ...]:
    """The facts `s` is checked against; its static_assert when nothing else is known."""
    return known_layouts().get(s.name) or (Known(s.size, s.align, None, NO_FACTS),)


def own_offsets(s: Struct) -> tuple[int, int, dict[str, int]]:
    """sizeof, alignof and own member offsets of `s` as the spec's layout rule places it now."""
    laid = place(s.members, s.base, s.alignas)
    return laid.size, laid.align, {p.name: p.offset for p in laid.placed}


def check_case(s: Struct, known: Known, case: str) -> None:
    """One fact (sizeof, alignof, the member names, one member's offset) of `known` holds of
    the spec's placement of `s`."""
    size, align, offsets = own_offsets(s)
    if case == "sizeof":
        spec, fact = size, known.size
    elif case == "alignof":
        spec, fact = align, known.align
    elif case == MEMBERS:
        spec, fact = sorted(offsets), sorted(known.offsets or ())
    else:
        spec, fact = offsets.get(case), (known.offsets or {}).get(case)
    if spec != fact:
        raise AssertionError(f"{case}: the spec gives {spec}, {known.source} {fact}")


def cases_of(known: Known) -> tuple[str, ...]:
    """sizeof, alignof, then (when known) the member names and each member's offset."""
    if known.offsets is None:
        return ("sizeof", "alignof")
    return ("sizeof", "alignof", MEMBERS, *sorted(known.offsets, key=known.offsets.get))


def layout_properties(s: Struct, known: tuple[Known, ...]) -> list[Property]:
    """One property per source of facts; its label carries the facts, so changed data is
    never answered from the cache."""
    out = []
    for k in known:
        offsets = "" if k.offsets is None else ", offsets " + " ".join(
            f"{n}@{o}" for n, o in sorted(k.offsets.items(), key=lambda x: x[1]))
        out.append(Property(f"{s.name} against {k.source}: sizeof {k.size}, alignof {k.align}"
                            f"{offsets}", functools.partial(check_case, s, k),
                            functools.partial(cases_of, k)))
    return out


def statement(s: Struct, known: tuple[Known, ...]) -> str:
    """What the obligation says, naming where its facts come from (or that there are none)."""
    if known[0].offsets is None:
        return (f"Layout of {s.name}: no compiler facts: checked only for its static_assert, "
                f"sizeof {s.size} and alignof {s.align}.")
    return (f"Layout of {s.name}: sizeof {s.size}, alignof {s.align} and every member offset "
            f"as the spec places them match {known[0].source}.")


def swapped(s: Struct, offsets_known: bool) -> Mutant | None:
    """The declaration with two adjacent members swapped and placed again by the spec's layout
    rule. With offsets to check: the first swap that moves members but keeps sizeof (only the
    offsets catch it), else the first that moves members; without: the first that changes
    sizeof. None when there is no such swap."""
    found = []
    for i in range(len(s.members) - 1):
        ms = list(s.members)
        ms[i], ms[i + 1] = ms[i + 1], ms[i]
        laid = place(ms, s.base, s.alignas)
        resized = laid.size != s.size
        if {p.name: p.offset for p in laid.placed} != s.offsets and (offsets_known or resized):
            found.append((resized, i, tuple(ms), laid))
    if not found:
        return None
    _, i, ms, laid = min(found, key=lambda f: f[:2])
    return Mutant("swapped members", f"{ms[i + 1].name} and {ms[i].name} swapped",
                  replace(s, members=ms, placed=laid.placed, size=laid.size, align=laid.align))


def has_interior_padding(s: Struct) -> bool:
    """Some own member starts after the end of the one before it (or of the base)."""
    cursor = s.base.size if s.base else 0
    for p in s.placed:
        if p.offset > cursor:
            return True
        cursor = p.end
    return False


def raised_by_alignas(m: Member) -> bool:
    """The member's alignas is stricter than its type's alignment."""
    return m.alignas > m.ctype.align


def rule_bugs(s: Struct) -> list[Mutant]:
    """Bugs in the layout rule that change this struct's layout: an off-by-one round-up
    always; the others where the declaration has what they break."""
    out = [Mutant.edit("round-up off by one", "a member goes to (cursor + a) // a * a", place,
                       "(cursor + a - 1) // a * a", "(cursor + a) // a * a")]
    if has_interior_padding(s):
        out.append(Mutant.edit("member not aligned", "a member goes right after the previous",
                               place, "(cursor + a - 1) // a * a", "cursor"))
    if s.placed and s.size > s.placed[-1].end:
        out.append(Mutant.edit("tail padding dropped", "sizeof is the end of the last member",
                               place, "total = (cursor + max_align - 1) // max_align * max_align",
                               "total = cursor"))
    if any(raised_by_alignas(m) for m in s.members):
        out.append(Mutant.edit("member alignas ignored", "a member aligned to its type only",
                               place, "a = max(m.ctype.align, m.alignas)", "a = m.ctype.align"))
    if s.alignas > max((p.align for p in s.all_placed()), default=1):
        out.append(Mutant.edit("struct alignas ignored", "alignof from the members only",
                               place, "max(alignas, base.align if base else 1)",
                               "base.align if base else 1"))
    return out


def register_layout_obligations() -> None:
    """One obligation per struct, numbered PO<chapter>.100, .101, ...: Crucible's structs by
    name, then each other seed's (so a seed's structs never renumber Crucible's)."""
    structs = sorted({s.name: s for s in REGISTRY.layouts.values()}.values(),
                     key=lambda s: (s.chapter, s.seed != "crucible", s.seed, s.name))
    number: dict[int, int] = {}
    for s in structs:
        n = number.get(s.chapter, 100)
        number[s.chapter] = n + 1
        known = known_for(s)
        swap = swapped(s, known[0].offsets is not None)
        REGISTRY.add_obligation(Obligation(
            f"PO{s.chapter}.{n}", statement(s, known), "property",
            (f"layout:{s.name}", *LAYOUT_OPS),
            functools.partial(layout_properties, known=known), s,
            (*([swap] if swap else []), *rule_bugs(s)), 10.0))


register_layout_obligations()
