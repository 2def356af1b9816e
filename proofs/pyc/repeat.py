"""Chapter 14 obligation of PyC's stable-repeat fast path: a check is skipped only for what
repeats the last successful run."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.pyc.repeat import (
    BACKEND,
    CACHED_BY,
    CUDA,
    cached_by,
    repeat_domain,
    repeat_edges,
    repeat_op,
    same_run,
    skips_controller,
)
from ..core.obligation import Property, property_obligation


def _skips_hold(wire: dict) -> None:
    backend = wire["backend"]
    backend = BACKEND.names.index(backend) if isinstance(backend, str) else backend
    out = repeat_op(**wire | {"backend": backend})
    how = CACHED_BY.names[out["cached_by"]]
    last = wire["last"]
    repeats = last is not None and len(wire["inputs"]) <= 8 and len(wire["outputs"]) <= 8 \
        and wire["inputs"] == last["inputs"] and wire["outputs"] == last["outputs"]
    off = not wire["speculative"] and not wire["phantom"]
    fast = off and wire["fastpath_env"] and backend == CUDA and not wire["autotune"]
    assert how != "shape_hash", out
    assert (how == "exact_repeat") == (repeats and fast), (wire, out)
    assert (how == "descriptors") == (repeats and off and not fast), (wire, out)
    assert out["input_guard"] == (how == "none") and out["fingerprint_guard"] == (
        how != "exact_repeat"), out
    assert out["controller"] == (how != "exact_repeat"), out


@property_obligation(
    "PO14.212",
    "pyc.repeat skips the input guard only when the run's inputs and outputs equal the last "
    "successful run's, field by field and pointers included, with speculative plans and "
    "phantom graph off; and skips the fingerprint guard, controller and kernel reselection "
    "only for such a repeat on the CUDA backend with the switch on and autotune off.",
    covers=("pyc.repeat",),
    subject=cached_by,
    mutants=(
        Mutant.edit("outputs ignored", "the repeat compares inputs only", same_run,
                    "inputs == last.inputs and outputs == last.outputs",
                    "inputs == last.inputs"),
        Mutant.edit("any backend", "the exact repeat also on CPU", cached_by,
                    "cfg.backend == CUDA and not cfg.autotune", "not cfg.autotune"),
        Mutant.edit("hash repeat", "the shape hash decides (E14.6 always on)", cached_by,
                    "if E14_6 in errata and", "if"),
        Mutant.edit("phantom remembered", "a model with a phantom graph remembers runs",
                    cached_by, "if last is None or not remembers(cfg):", "if last is None:"),
        Mutant.edit("controller on a hash", "a run cached by the shape hash skips the "
                    "controller without the switch", skips_controller,
                    "not failed and cfg.fastpath_env", "not failed"),
    ),
)
def repeat_holds(_subject):
    return [Property("the edges", _skips_hold, cases=repeat_edges),
            Property("generated runs", _skips_hold, strategy=repeat_domain, examples=300)]
