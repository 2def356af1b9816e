"""Obligation of RingKernel's CheckpointManager (chapter 19): a saved checkpoint is the
actor's latest until the next, retention keeps max_snapshots per actor across restarts, and an
actor's checkpoints are ordered by step (PO19.70)."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.ringkernel import checkpoint_manager as cm
from ..core.obligation import Property, property_obligation

SLOTS = range(3)


def _probed(steps: list[dict]) -> list[dict]:
    """The steps with a load of every slot after each completion, and a list and a load of
    every slot after each restart."""
    out: list[dict] = []
    for s in steps:
        out.append(s)
        if s["op"] == "complete":
            out += [{"op": "load", "actor_slot": slot, "probe": "saved"} for slot in SLOTS]
        if s["op"] == "restart":
            for slot in SLOTS:
                out += [{"op": "list", "actor_slot": slot, "probe": "restart"},
                        {"op": "load", "actor_slot": slot, "probe": "restart"}]
    return out


def _step_of(name: str) -> int:
    return int(name.rsplit("_", 1)[1])


def _slot_of(name: str) -> int:
    return int(name.split("_")[1])


def _check(args: dict) -> None:
    """Each probe's answer, and at the end at most max_snapshots stored per actor."""
    probed = _probed(args["steps"])
    steps = [{k: v for k, v in s.items() if k != "probe"} for s in probed]
    out = cm.manager_op(args["max_snapshots"], steps)
    last_saved: dict | None = None
    listed: list[str] = []
    for s, got in zip(probed, out["results"], strict=True):
        if s["op"] == "complete":
            last_saved = s | {"slot": _slot_of(got["name"])} if got["outcome"] == "saved" \
                else None
        elif s.get("probe") == "saved" and last_saved and s["actor_slot"] == last_saved["slot"]:
            want = {"outcome": "ok", "step": last_saved["step"], "data": last_saved["data"],
                    "request_id": last_saved["request_id"]}
            assert {k: got.get(k) for k in want} == want, (s, got, last_saved)
        elif s.get("probe") == "restart" and s["op"] == "list":
            listed = got["names"]
            assert [_step_of(n) for n in listed] == sorted(map(_step_of, listed)), listed
        elif s.get("probe") == "restart":
            want = max(map(_step_of, listed), default=None)
            assert got.get("step") == want and (want is not None or got["outcome"] == "none"), \
                (listed, got)
    if args["max_snapshots"]:
        for slot in SLOTS:
            mine = [n for n in out["stored"] if n.startswith(f"checkpoint_{slot}_")]
            assert len(mine) <= args["max_snapshots"], (slot, out["stored"])


@property_obligation(
    "PO19.70",
    "checkpoint.manager: right after a snapshot is saved, loading its actor gives that "
    "snapshot (step, data, request id); after a restart each actor's checkpoints list in "
    "step order and load gives the highest step; and no actor ever keeps more than "
    "max_snapshots checkpoints, restarts included.",
    covers=("checkpoint.manager",),
    subject=cm.manager_op,
    mutants=(
        Mutant.edit("name listed twice", "E19.80: a re-saved name stays in its old place too",
                    cm.retain, "if name in history and E19_80 not in errata:", "if False:"),
        Mutant.edit("string order", "E19.81 always on", cm.stored_names,
                    "sorted(names) if E19_81 in errata", "sorted(names) if True"),
        Mutant.edit("history forgets storage", "E19.82 always on", cm.history_of,
                    "[] if E19_82 in errata else", "[] if True else"),
        Mutant.edit("keeps one too many", "retention stops at max_snapshots + 1", cm.retain,
                    "len(history) > m.max_snapshots", "len(history) > m.max_snapshots + 1"),
        Mutant.edit("oldest loaded", "load takes the first of the history", cm.load,
                    "names[-1]", "names[0]"),
    ),
)
def manager_keeps_the_latest(_subject):
    return [Property("generated requests, completions and restarts", _check,
                     strategy=cm.manager_domain, examples=400)]
