"""Live checks of errata witnesses: the spec's answer and the seed's, through the reference.
A witness states a whole error ({"error": code}) or the result fields that tell the two apart.
A model witness names the machine builder and the invariant: the seed's machine must break it
(its shortest counterexample is shown) and the spec's must not."""

from __future__ import annotations

import importlib

from .engine import Implementation
from .proofs.core.model import explore
from .spec.core.errata import profile_errata, result_witnesses
from .spec.core.errors import SpecError
from .spec.core.registry import Erratum


def answer(impl: Implementation, op: str, args: dict) -> dict:
    """An op's answer as a witness states it: the result object, or {"error": code}."""
    try:
        return impl.call(op, args)
    except SpecError as e:
        return {"error": e.code}


def model_counterexample(e: Erratum) -> tuple[str | None, list[str] | None, str | None]:
    """For a model erratum: (the invariant the seed's machine breaks, the shortest trace, what
    the spec's machine breaks or None)."""
    module, name = e.witness["machine"].rsplit(".", 1)
    build = getattr(importlib.import_module(f"crucible_spec.spec.{module}"), name)
    seed = explore(build(profile_errata(e.seed)))
    spec = explore(build(frozenset()))
    return seed.violation, seed.trace, spec.violation


def check(e: Erratum) -> str:
    """'reproduced' (every runnable witness, on its op), 'n/a' (none), or what each side
    answered instead on the first witness that fails."""
    if e.flag == "model":
        broken, trace, spec = model_counterexample(e)
        if broken != e.witness["invariant"] or spec is not None:
            return f"NOT reproduced (seed's machine breaks {broken}, the spec's {spec})"
        return f"reproduced: {' -> '.join(trace or [])}"
    witnesses = result_witnesses(e)
    if not witnesses:
        return "n/a"
    for op, w in witnesses:
        spec = answer(Implementation("reference"), op, w["args"])
        seed = answer(Implementation("reference", profile_errata(e.seed)), op, w["args"])
        if not (matches(spec, w["spec"]) and matches(seed, w["seed"])):
            return f"NOT reproduced on {op} (spec answers {spec}, seed profile answers {seed})"
    return "reproduced"


def matches(got: dict, stated: dict) -> bool:
    """An error must be the stated one; a result must agree on every field the witness states."""
    if "error" in stated or "error" in got:
        return got == stated
    return all(got.get(k) == v for k, v in stated.items())
