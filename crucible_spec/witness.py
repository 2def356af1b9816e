"""Live checks of errata witnesses: the spec's answer and the seed's, through the reference.
A witness states a whole error ({"error": code}) or the result fields that tell the two apart."""

from __future__ import annotations

from .engine import Implementation
from .spec.errata import profile_errata
from .spec.errors import SpecError
from .spec.registry import Erratum


def answer(impl: Implementation, op: str, args: dict) -> dict:
    """An op's answer as a witness states it: the result object, or {"error": code}."""
    try:
        return impl.call(op, args)
    except SpecError as e:
        return {"error": e.code}


def check(e: Erratum) -> str:
    """'reproduced', 'n/a' (no runnable witness), or what each side answered instead."""
    if e.flag != "result" or "args" not in e.witness:
        return "n/a"
    op = e.witness.get("op", e.ops[0])
    spec = answer(Implementation("reference"), op, e.witness["args"])
    seed = answer(Implementation("reference", profile_errata(e.seed)), op, e.witness["args"])
    if matches(spec, e.witness["spec"]) and matches(seed, e.witness["seed"]):
        return "reproduced"
    return f"NOT reproduced (spec answers {spec}, seed profile answers {seed})"


def matches(got: dict, stated: dict) -> bool:
    """An error must be the stated one; a result must agree on every field the witness states."""
    if "error" in stated or "error" in got:
        return got == stated
    return all(got.get(k) == v for k, v in stated.items())
