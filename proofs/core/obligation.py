"""Proof obligations: a PO is a function from its subject to a list of checks, of one kind.

- z3: a `Query` is a formula handed to z3. With `expect="unsat"` it is the negation of the
  property (a counterexample search): unsat means proved. With `expect="sat"` it asks for a
  witness (used for errata): sat means the witness exists.
- model: a spec `Machine` whose every interleaving is explored.
- property: a `Property`, a predicate over every case of a finite enumeration, or over
  seeded (derandomized) hypothesis draws from a strategy.
- contract: a `Contract`, a function whose leading asserts are preconditions and whose other
  asserts are postconditions, analysed symbolically by crosshair within a budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...spec.core.registry import REGISTRY, Mutant, Obligation

DEFAULT_RLIMIT = 30_000_000
"""z3 resource units per query unless the obligation says otherwise: a deterministic budget,
so a query answers the same on an idle machine and a loaded one."""


BIT_BLAST = "bit-blast"
"""A Query logic: simplify, bit-blast and solve with SAT alone (a 64-bit divider by 3 is
proved two to three times faster so than by z3's general solver)."""


@dataclass(frozen=True)
class Query:
    """One z3 check of an obligation, within `rlimit` resource units (None: the default), by
    z3's solver for `logic` (an SMT-LIB logic name, or BIT_BLAST for a pure bit-vector formula;
    None: z3's general solver). The logic picks how z3 searches, never what is asked: the
    formula and its expected answer stay."""

    label: str
    formula: Any
    expect: str = "unsat"
    rlimit: int | None = None
    logic: str | None = None


@dataclass(frozen=True)
class Property:
    """`check(case)` returns normally when the property holds and raises AssertionError (or
    anything else) when it does not. The cases are `cases()` (every one is checked), or
    `examples` seeded draws from `strategy()` (hypothesis, derandomized, shrunk on failure)."""

    label: str
    check: Callable[[Any], None]
    cases: Callable[[], Any] | None = None
    strategy: Callable[[], Any] | None = None
    examples: int = 200


@dataclass(frozen=True)
class Contract:
    """`fn`'s leading asserts are its preconditions, its other asserts the postconditions;
    crosshair searches for inputs that meet the first and break the second, for at most
    `iterations` paths (and `seconds` as a safety limit). `query_seconds`, where set, caps
    one z3 query of a path: for a contract some of whose paths z3 answers unknown at any limit,
    so that waiting on them buys nothing."""

    label: str
    fn: Callable
    iterations: int = 200
    seconds: float = 60.0
    query_seconds: float | None = None


def z3_obligation(id: str, statement: str, *, covers: tuple[str, ...], subject: Any,
                  mutants: tuple[Mutant, ...], timeout_s: float = 60.0
                  ) -> Callable[[Callable[[Any], list[Query]]], Callable[[Any], list[Query]]]:
    """Register `build(subject) -> [Query]` as z3 proof obligation `id`."""

    def deco(build: Callable[[Any], list[Query]]) -> Callable[[Any], list[Query]]:
        REGISTRY.add_obligation(Obligation(id, statement, "z3", covers, build, subject,
                                           mutants, timeout_s))
        return build

    return deco


def model_obligation(id: str, statement: str, *, covers: tuple[str, ...], subject: Any,
                     mutants: tuple[Mutant, ...], timeout_s: float = 120.0
                     ) -> Callable[[Callable[[Any], list]], Callable[[Any], list]]:
    """Register `build(subject) -> [Machine]` as model-checking obligation `id`: every
    interleaving of each machine is explored."""

    def deco(build: Callable[[Any], list]) -> Callable[[Any], list]:
        REGISTRY.add_obligation(Obligation(id, statement, "model", covers, build, subject,
                                           mutants, timeout_s))
        return build

    return deco


def property_obligation(id: str, statement: str, *, covers: tuple[str, ...], subject: Any,
                        mutants: tuple[Mutant, ...], timeout_s: float = 300.0
                        ) -> Callable[[Callable[[Any], list[Property]]],
                                      Callable[[Any], list[Property]]]:
    """Register `build(subject) -> [Property]` as property obligation `id`."""

    def deco(build: Callable[[Any], list[Property]]) -> Callable[[Any], list[Property]]:
        REGISTRY.add_obligation(Obligation(id, statement, "property", covers, build, subject,
                                           mutants, timeout_s))
        return build

    return deco


def contract_obligation(id: str, statement: str, *, covers: tuple[str, ...], subject: Any,
                        mutants: tuple[Mutant, ...], timeout_s: float = 300.0
                        ) -> Callable[[Callable[[Any], list[Contract]]],
                                      Callable[[Any], list[Contract]]]:
    """Register `build(subject) -> [Contract]` as crosshair contract obligation `id`."""

    def deco(build: Callable[[Any], list[Contract]]) -> Callable[[Any], list[Contract]]:
        REGISTRY.add_obligation(Obligation(id, statement, "contract", covers, build, subject,
                                           mutants, timeout_s))
        return build

    return deco
