"""Chapter 12 obligation of the counters a sequence of PyC runs leaves in pyc_run_stats: each
counter moves only for the event it names."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.pyc.guard import REASONS
from ...spec.pyc.repeat import BACKEND, CUDA
from ...spec.pyc.run_stats import (
    STATUS,
    executes,
    run,
    run_stats_op,
    stats_domain,
    stats_edges,
)
from ..core.obligation import Property, property_obligation


def _counters_hold(wire: dict) -> None:
    backend = wire["backend"]
    backend = BACKEND.names.index(backend) if isinstance(backend, str) else backend
    out = run_stats_op(**wire | {"backend": backend})
    plans, cuda = out["plan_count"], backend == CUDA
    prev = {"guard_miss_count": 0, "fallback_count": 0, "speculative_plan_miss_count": 0,
            "speculative_guard_miss_count": 0, "phantom_graph_reshape_count": 0}
    was_failed = False
    for k, (r, given) in enumerate(zip(out["runs"], wire["runs"], strict=True)):
        step = {key: r[key] - prev[key] for key in prev}
        failed = STATUS[r["status"]] == "runtime_failed"
        guard_failed = REASONS[r["contract_reason"]] != "ok"
        assert r["contract_ok"] == (not guard_failed) and (failed or not guard_failed), r
        assert step["guard_miss_count"] == guard_failed, (k, r)
        assert step["speculative_guard_miss_count"] == (guard_failed and plans > 0), (k, r)
        assert step["fallback_count"] == (cuda and not failed), (k, r)
        assert step["speculative_plan_miss_count"] == (plans > 0 and not
                                                       r["speculative_plan_hit"]), (k, r)
        assert not r["stable_repeat"] or (cuda and not plans and not wire["phantom"]
                                          and not guard_failed), (k, r)
        counted = r["phantom_graph_match_count"] + r["phantom_graph_mismatch_count"]
        assert counted == (k + 1 if wire["phantom"] else 0), (k, r)
        assert step["phantom_graph_reshape_count"] <= 1 and (
            not step["phantom_graph_reshape_count"] or not failed), (k, r)
        assert not (was_failed and r["stable_repeat"]), (k, r)
        if not guard_failed and _too_small(given):
            assert failed, (k, r)
        prev, was_failed = {key: r[key] for key in prev}, failed


def _too_small(given: dict) -> bool:
    """A matmul run of two rank-2 inputs whose first output cannot hold [m, n] floats."""
    ins, outs = given["inputs"], given["outputs"]
    if len(ins) != 2 or any(len(t["shape"]) != 2 for t in ins):
        return False
    return outs[0]["size_bytes"] < 4 * ins[0]["shape"][0] * ins[1]["shape"][1]


@property_obligation(
    "PO12.211",
    "pyc.run_stats: per run, the guard miss count grows by one exactly when the contract "
    "reason is not ok (and then the run fails), the speculative guard miss count likewise "
    "only when the model has plans, the plan miss count by one exactly when a model with "
    "plans takes none, the fallback count by one for each successful CUDA run without a "
    "GPU; a stable repeat is a CUDA run with plans and phantom graph off that passed its "
    "guard and never follows a failed run; a run whose output cannot hold its result fails; "
    "the phantom graph counts every run once and reshapes at most once, never on a failed "
    "run.",
    covers=("pyc.run_stats",),
    subject=run,
    mutants=(
        Mutant.edit("second miss", "the second lookup counts a miss (E12.20 always on)", run,
                    "elif E12_20 in errata:", "else:"),
        Mutant.edit("guard miss without plans", "E12.21 always on", run,
                    "(bool(model.plans) or E12_21 in errata)", "True"),
        Mutant.edit("fallback on CPU", "every successful run counts a fallback", run,
                    "not failed and cfg.backend == CUDA", "not failed"),
        Mutant.edit("failure remembered", "a failed run is not forgotten", run,
                    "model.last = None", "pass"),
        Mutant.edit("outputs unchecked", "the executor does not check the outputs", executes,
                    "if t is None or not t.data or not 0 < need <= t.size_bytes:\n"
                    "                return False", "pass"),
    ),
)
def counters_hold(_subject):
    return [Property("the edges", _counters_hold, cases=stats_edges),
            Property("generated sequences", _counters_hold, strategy=stats_domain,
                     examples=120)]
