"""z3 proof obligations: a PO is a function from its subject to a list of queries.

A query is a formula handed to z3. With `expect="unsat"` it is the negation of the property
(a counterexample search): unsat means proved. With `expect="sat"` it asks for a witness
(used for errata): sat means the witness exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..spec.registry import REGISTRY, Mutant, Obligation


@dataclass(frozen=True)
class Query:
    """One z3 check of an obligation."""

    label: str
    formula: Any
    expect: str = "unsat"


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
