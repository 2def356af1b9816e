"""Chapter 6 and 7 obligations from the Lean formalization's TraceGraph and Detector modules:
the trace graph's CSR and edge order on graphs built by the spec's own build_trace, and the
iteration detector's phases, counters and batching on the spec's own check."""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.crucible import build_trace as bt
from ...spec.crucible import iteration_detector as det
from ...spec.crucible.trace_build_ops import recorded_ops, traces
from ...spec.crucible.trace_graph import EdgeKind
from ..core.obligation import Property, property_obligation

PRODUCED_KINDS = (EdgeKind.DATA_FLOW, EdgeKind.ALIAS)


def _check_csr(args: dict) -> None:
    g = bt.build_trace(recorded_ops(args["ops"]))
    n = len(g.ops)
    for by in ("src", "dst"):
        edges, offsets = g.csr(by)
        assert len(offsets) == n + 1 and offsets[0] == 0, f"{by} offsets {offsets}"
        assert offsets[n] == len(g.edges), "the degrees do not add up to the edge count"
        for i in range(n):
            group = edges[offsets[i]:offsets[i + 1]]
            assert all(getattr(e, by) == i for e in group), f"{by} group {i} holds {group}"
    key = lambda e: (e.src, e.dst, e.src_port, e.dst_port, e.kind)  # noqa: E731
    assert sorted(map(key, g.csr("src")[0])) == sorted(map(key, g.csr("dst")[0]))


def _check_edge_order(args: dict) -> None:
    g = bt.build_trace(recorded_ops(args["ops"]))
    for e in g.edges:
        assert 0 <= e.src < e.dst < len(g.ops), f"edge {e} does not go forward in the trace"
        assert e.kind in PRODUCED_KINDS, f"edge kind {e.kind}"


def _check_empty(_: object) -> None:
    g = bt.build_trace([])
    assert g.edges == [] and g.csr("src") == ([], [0]) and g.csr("dst") == ([], [0])


@property_obligation(
    "PO6.40",
    "build_trace's graphs (random op streams over a few shared pointers): forward and reverse "
    "CSR offsets have n + 1 entries from 0 to the edge count and group every edge under its "
    "src (dst), both hold the same edges; every edge goes from an earlier op to a later one "
    "(so data flow has no cycle or self loop and trace order is topological) and is DATA_FLOW "
    "or ALIAS; the empty trace has no edges.",
    covers=("trace.build",),
    subject=bt.build_trace,
    mutants=(
        Mutant.edit("offset not shifted", "a group's count is added at its own index",
                    bt.TraceGraph.csr, "offsets[getattr(e, by) + 1] += 1",
                    "offsets[getattr(e, by)] += 1"),
        Mutant.edit("flow reversed", "a DATA_FLOW edge from consumer to producer",
                    bt.build_trace, "Edge(e.op, i, e.port, j & 0xFF, EdgeKind.DATA_FLOW)",
                    "Edge(i, e.op, e.port, j & 0xFF, EdgeKind.DATA_FLOW)"),
        Mutant.edit("self alias", "a rewrite by the same op makes an ALIAS self loop",
                    bt.build_trace, "alias, old = e.op != i,", "alias, old = True,"),
    ),
)
def trace_graph_csr(subject):
    return [Property("CSR offsets and groups", _check_csr, strategy=traces, examples=60),
            Property("edges go forward", _check_edge_order, strategy=traces, examples=60),
            Property("empty trace", _check_empty, cases=lambda: [None])]


def _stream_steps(stream: list[int]) -> None:
    d = det.Detector()
    for i, h in enumerate(stream):
        before = det.Detector(**{**asdict(d), "signature": list(d.signature)})
        hit = det.check(d, h)
        assert len(d.signature) == det.K and d.signature_len == min(i + 1, det.K)
        if i < det.K:
            assert not hit and d.signature[i] == h, "the first K hashes only build"
        assert not hit or before.confirmed, "a boundary before the first full match"
        assert d.boundaries_detected == before.boundaries_detected + hit
        assert d.ops_since_boundary in (before.ops_since_boundary + 1, det.K)
        if hit:
            assert d.ops_since_boundary == det.K and d.match_pos == 0
        matched = before.signature_len == det.K and h == before.expected_hash
        if matched and before.match_pos + 1 < det.K:
            assert d.match_pos == before.match_pos + 1 and not hit, "a match did not advance"


def _sig_three_times(sig: list[int]) -> None:
    boundaries, d = det.run_detector(sig * 3)
    assert [b["index"] for b in boundaries] == [3 * det.K - 1], boundaries
    assert d.boundaries_detected == 1 and d.confirmed


def _batched(case: tuple[list[int], int]) -> None:
    stream, cut = case
    cut = min(cut, len(stream))
    whole, d_whole = det.run_detector(stream)
    first, d = det.run_detector(stream[:cut])
    rest, d = det.run_detector(stream[cut:], d=d)
    assert asdict(d) == asdict(d_whole), "batching changed the detector's state"
    shifted = [b["index"] for b in first] + [b["index"] + cut for b in rest]
    assert shifted == [b["index"] for b in whole], "batching moved a boundary"


def _streams():
    return det.periodic_streams().map(lambda a: a["stream"])


_SIGS = st.lists(st.integers(0, 3), min_size=det.K, max_size=det.K)


@property_obligation(
    "PO7.40",
    "The iteration detector (K = 5) on periodic and random streams: the first K hashes only "
    "build the signature; no boundary comes before the first full match; the boundary count "
    "never decreases and grows exactly at a boundary; ops_since_boundary becomes old + 1 or "
    "K; a matching hash advances the match; a fresh detector fed any signature three times "
    "reports exactly one boundary, at its last hash; a stream fed in two batches ends in the "
    "state and boundaries of the whole.",
    covers=("detector.run",),
    subject=det.check,
    mutants=(
        Mutant.edit("confirm counts", "the confirming match is reported as a boundary",
                    det.check, "if not d.confirmed:", "if d.confirmed:"),
        Mutant.edit("ops reset to 0", "a boundary resets ops_since_boundary to 0",
                    det.check, "d.ops_since_boundary = K\n    d.boundaries_detected",
                    "d.ops_since_boundary = 0\n    d.boundaries_detected"),
        Mutant.edit("one short", "the match completes one hash early", det.check,
                    "if d.match_pos + 1 < K:", "if d.match_pos + 2 < K:"),
    ),
)
def detector_phases(subject):
    return [Property("step by step", _stream_steps, strategy=_streams, examples=150),
            Property("sig three times", _sig_three_times, strategy=lambda: _SIGS,
                     examples=100),
            Property("batching is a fold", _batched,
                     strategy=lambda: st.tuples(_streams(), st.integers(0, 60)),
                     examples=100)]
