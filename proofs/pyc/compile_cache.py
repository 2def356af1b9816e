"""Chapter 14 obligation of PyC's compile cache: against a model written from the chapter's
text (round robin over 32 slots, a hit only for an equal compile among the last 32 stores),
independent of the cache's own slot array."""

from __future__ import annotations

import json

from ...spec.core.registry import REGISTRY, Mutant
from ...spec.pyc.cache import CompileOptions, normalized
from ...spec.pyc.compile_cache import (
    COMPILE_CACHE_MAX,
    _steps,
    compile_step,
    edges,
    find,
    simulate_op,
    store,
)
from ..core.obligation import Property, property_obligation


def _model(steps: list[dict]) -> list[dict]:
    """Per step: hit, slot and plan_of as the chapter states them, from the list of stores."""
    stored: list[tuple[int, tuple]] = []  # (step, identity) of every store, in order
    out = []
    for s, step in enumerate(steps):
        o = normalized(CompileOptions(**step["options"]))
        if o.cache_mode != 1:
            out.append({"hit": False, "slot": -1, "plan_of": s})
            continue
        identity = (json.dumps(step["module"], sort_keys=True), step["backend"], o)
        live = range(max(0, len(stored) - COMPILE_CACHE_MAX), len(stored))
        found = [n for n in live if stored[n][1] == identity]
        if found:
            out.append({"hit": True, "slot": found[0] % COMPILE_CACHE_MAX,
                        "plan_of": stored[found[0]][0]})
        else:
            out.append({"hit": False, "slot": len(stored) % COMPILE_CACHE_MAX, "plan_of": s})
            stored.append((s, identity))
    return out


def _decoded(args: dict) -> dict:
    """Wire args (an edge) with every default filled in, as the op receives them."""
    return REGISTRY.ops["pyc.cache.simulate"].args.decode(args, "args")


def _agrees(args: dict) -> None:
    args = _decoded(args)
    got = [{k: r[k] for k in ("hit", "slot", "plan_of")}
           for r in simulate_op(args["steps"])["results"]]
    assert got == _model(args["steps"]), (got, _model(args["steps"]))


def _same_plan(args: dict) -> None:
    args = _decoded(args)
    steps, results = args["steps"], simulate_op(args["steps"])["results"]
    for s, r in enumerate(results):
        mine, theirs = steps[s], steps[r["plan_of"]]
        assert mine["module"] == theirs["module"] and mine["backend"] == theirs["backend"], s


@property_obligation(
    "PO14.203",
    "The compile cache hands a compile a plan only from an equal compile (the same source "
    "module, backend and normalized options), even when another module has its key (E14.5); "
    "a compile hits exactly when an equal one is among the last 32 stores, and stores go "
    "round robin over the 32 slots; a disabled cache neither looks nor stores.",
    covers=("pyc.cache.simulate",),
    subject=compile_step,
    mutants=(
        Mutant.edit("key only", "the seed's lookup: a slot matches on the key alone", find,
                    "(E14_5 in errata or e.identity == identity)", "True"),
        Mutant.edit("one slot", "next is never counted up, so every store lands in slot 0",
                    store, "cache.next += 1", "cache.next += 0"),
        Mutant.edit("disabled looks", "a disabled cache still looks and stores",
                    compile_step, "if o.cache_mode != CACHE_IN_MEMORY:", "if False:"),
    ),
)
def cache_is_content_addressed(_subject):
    return [
        Property("the model, edges", _agrees, cases=edges),
        Property("the model", _agrees, strategy=_steps),
        Property("a plan from an equal module, edges", _same_plan, cases=edges),
    ]
