"""The background thread's pipeline (ch. 6) as properties: over generated streams of repeated
iterations, the regions `run_pipeline` makes sit where the spec's own iteration detector puts
its boundaries, and each region's hashes are the content hash of its window's ops; and the
seed's two pipeline runs of the facts (§27) are reproduced. The expected windows and hashes are
computed from the detector and the content hash alone, never from the pipeline's own code."""

from __future__ import annotations

from hypothesis import strategies as st

from ...spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from ...spec.core.registry import Mutant
from ...spec.crucible.build_trace import E6_1
from ...spec.crucible.content_hash import compute_content_hash, trace_ops_from_wire
from ...spec.crucible.iteration_detector import K, run_detector
from ...spec.crucible.pipeline import (
    Window,
    build_region,
    iteration_windows,
    plan_slots_of,
    run_pipeline,
)
from ...spec.crucible.pipeline_ops import pipeline_run, region_to_wire
from ...spec.crucible.trace_build_ops import kernels_from_wire, recorded_ops, traces
from ..core.obligation import Property, property_obligation

SEED = profile_errata(SEEDS["crucible"])
PROFILES = st.sampled_from([NO_ERRATA, SEED])


@st.composite
def iterated_streams(draw) -> dict:
    """An iteration of K or more ops with distinct schema hashes, entered at any op and
    repeated 2-4 times, then 0-3 repetitions of a variant sharing its first K ops (another
    iteration length), then a partial iteration: several boundaries, warm-ups included."""
    first = draw(traces(max_ops=10))
    body = first["ops"] + [{"schema_hash": "0x0"} for _ in range(K - len(first["ops"]))]
    for k, op in enumerate(body):
        op["schema_hash"] = hex(0x1000 + k)
    rest = draw(traces(max_ops=6))["ops"]
    for k, op in enumerate(rest):
        op["schema_hash"] = hex(0x2000 + k)
    stream = body[draw(st.integers(0, len(body))):] + body * draw(st.integers(2, 4))
    stream += (body[:K] + rest) * draw(st.integers(0, 3))
    stream += body[:draw(st.integers(0, len(body)))]
    return {"ops": stream, "kernels": first["kernels"]}


def _run(args: dict, errata: frozenset[str]):
    recorded = recorded_ops(args["ops"])
    found, _ = run_detector([r.schema_hash for r in recorded], errata)
    return recorded, found, run_pipeline(recorded, kernels_from_wire(args["kernels"]), errata)


def _windows_follow_the_detector(case: tuple[dict, frozenset[str]]) -> None:
    args, errata = case
    recorded, found, run = _run(args, errata)
    assert run.boundaries == [b["index"] for b in found]
    expected = [Window(b["index"], b["index"] + 1 - K - b["last_completed_len"],
                       b["last_completed_len"]) for b in found if b["last_completed_len"]]
    made = sorted([r.window for r in run.regions] + run.skipped, key=lambda w: w.boundary)
    assert made == expected, (made, expected)
    kept = len(recorded) if not found else len(recorded) - (found[-1]["index"] + 1 - K)
    assert run.retained == kept


@property_obligation(
    "PO6.50",
    "Over streams of repeated iterations (both profiles), pipeline.run reports the spec "
    "detector's boundaries; the boundary at stream index i with last_completed_len L > 0 makes "
    "one region (or a skipped window) of the L ops [i + 1 - K - L, i + 1 - K), the ops just "
    "before the K signature ops; and the current trace keeps the ops from the last boundary's "
    "signature on (all of them when there is none).",
    covers=("pipeline.run",),
    subject=run_pipeline,
    mutants=(Mutant.edit("keeps K + 1 ops", "at a boundary the current trace keeps one op "
                         "more than the K signature ops", iteration_windows,
                         "lo = max(lo, i + 1 - K)", "lo = max(lo, i - K)"),
             Mutant.edit("warm-up kept", "the ops before the detector's last iteration stay in "
                         "the region", iteration_windows,
                         "warmup = sat(sat(total - K) - length)", "warmup = 0"),
             Mutant.edit("signature in the region", "the region ends with the K signature "
                         "ops of the next iteration", iteration_windows,
                         "completed = sat(total - K)", "completed = sat(total)")),
)
def regions_follow_the_detector(_subject):
    return [Property("a stream of repeated iterations and a profile",
                     _windows_follow_the_detector,
                     strategy=lambda: st.tuples(iterated_streams(), PROFILES), examples=80)]


def _hashed_scalars(op: dict, errata: frozenset[str]) -> list[int]:
    """The first five scalars; none for an op without tensors under E6.1."""
    tensorless = not op.get("inputs") and not op.get("outputs")
    return [] if E6_1 in errata and tensorless else op.get("scalars", [])[:5]


def _hashes_are_the_windows(case: tuple[dict, frozenset[str]]) -> None:
    args, errata = case
    _, _, run = _run(args, errata)
    for r in run.regions:
        w = r.window
        ops = [{"schema_hash": o["schema_hash"], "inputs": o.get("inputs", []),
                "scalar_args": _hashed_scalars(o, errata)}
               for o in args["ops"][w.start:w.start + w.count]]
        content = compute_content_hash(trace_ops_from_wire(ops), errata)
        assert len(r.graph.ops) == w.count
        assert r.graph.content_hash == content == r.merkle_hash, (w, hex(content))
        assert (r.plan is None) == (not r.graph.slots)
        if r.plan is not None:
            assert len(r.plan.offsets) == len(r.graph.slots)


@property_obligation(
    "PO6.51",
    "Over streams of repeated iterations (both profiles), each region pipeline.run makes holds "
    "its window's ops, its content hash is the region content hash of those ops (schema, "
    "inputs, first five scalars) and its Merkle hash equals its content hash (no "
    "continuation); it has a plan of its slots exactly when it has slots.",
    covers=("pipeline.run", "dag.content_hash"),
    subject=run_pipeline,
    mutants=(Mutant.edit("window one op long", "the region is built from its window and the "
                         "op after it", run_pipeline,
                         "recorded[w.start:w.start + w.count]",
                         "recorded[w.start:w.start + w.count + 1]"),
             Mutant.edit("merkle with a terminal", "the region's Merkle hash chains a "
                         "terminal continuation (merkle 0)", build_region,
                         "chained(graph.content_hash, None)", "chained(graph.content_hash, 0)")),
)
def region_hashes_are_their_windows(_subject):
    return [Property("a stream of repeated iterations and a profile", _hashes_are_the_windows,
                     strategy=lambda: st.tuples(iterated_streams(), PROFILES), examples=60)]


def _seed_runs() -> list[tuple[str, list[dict], dict]]:
    from ...conformance.seed_runs import PIPELINE_RUNS

    return [(name, stream(), expected) for name, (stream, expected) in PIPELINE_RUNS.items()]


def _seed_run(case: tuple[str, list[dict], dict]) -> None:
    _, stream, expected = case
    assert pipeline_run(stream, [], SEED) == expected


@property_obligation(
    "PO6.52",
    "Under the seed profile pipeline.run reproduces the real code's two pipeline runs of the "
    "facts (§27): the 8-op chain of the end-to-end test (boundary 20, content = merkle "
    "0x1b2e4e507403cbdd, 7 edges, 8 slots, pool 8192) and the 10-op MLP (boundary 24, "
    "0x54b300b4f0a5396f, 10 edges, 18 slots of which 8 external, pool 768), each keeping K ops.",
    covers=("pipeline.run",),
    subject=run_pipeline,
    mutants=(Mutant.edit("externals planned", "the planner is told no slot is external",
                         plan_slots_of, "s.is_external, s.meta", "False, s.meta"),
             Mutant.edit("edges and slots swapped", "a region's summary gives its slot count "
                         "as its edge count and the reverse", region_to_wire,
                         "len(g.edges), len(g.slots)", "len(g.slots), len(g.edges)"),
             Mutant.edit("boundary one late", "the region's boundary is the op after the "
                         "signature", iteration_windows, "windows.append(Window(i, lo, "
                         "completed))", "windows.append(Window(i + 1, lo, completed))")),
)
def seed_pipeline_runs(_subject):
    return [Property("the facts' pipeline runs", _seed_run, cases=_seed_runs)]
