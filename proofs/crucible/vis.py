"""Chapter 6 obligations of the block detector: the family cascade against a restatement of
the header's pattern lists, and the blocks as a partition of the trace.

The cascade's rows are restated here by hand from the header (with "expand" tested before the
elementwise row, E6.7); a name's family is then the family of the earliest row, in that order,
with a pattern in the name. Nothing is read from the spec's own table."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.crucible.vis import (
    Detection,
    OpFamily,
    Phase,
    TraceOp,
    classify_family,
    detect_blocks,
    detect_edges,
    family_table,
    traces,
)
from ..core.obligation import Property, property_obligation

ROWS = (
    (3, ("attention", "sdp")),
    (9, ("loss", "nll", "mse_loss")),
    (8, ("foreach", "fused_adam", "addcmul", "addcdiv", "lerp")),
    (0, ("mm", "matmul", "linear")),
    (1, ("conv",)),
    (2, ("norm",)),
    (4, ("gelu", "silu", "relu", "sigmoid", "softmax", "dropout")),
    (7, ("sum", "mean", "argmax", "topk")),
    (6, ("expand",)),
    (5, ("add", "mul", "sub", "div", "neg", "exp", "log", "sqrt", "pow", "sin", "cos")),
    (6, ("view", "reshape", "permute", "transpose", "squeeze", "clone", "detach", "cat",
         "split", "slice", "select", "arange", "zeros", "ones", "copy", "to_copy")),
    (10, ("embedding",)),
    (11, ("upsample", "pool")),
)
"""(family ordinal, patterns) in cascade order, from the header's classify_family."""
PATTERNS = tuple((p, fam) for fam, ps in ROWS for p in ps)
NO_PATTERN = ("", "threshold", "where", "t", "fill_", "index", "aten::gather", "_unique2")


def expected_family(name: str) -> int:
    """The family of the earliest row with a pattern in `name` (12, OTHER, when none has)."""
    return next((fam for fam, ps in ROWS if any(p in name for p in ps)), 12)


def _own_family(case: tuple[str, int]) -> None:
    pattern, fam = case
    assert classify_family(pattern) == fam, (pattern, classify_family(pattern), fam)


def _first_match(name: str) -> None:
    assert classify_family(name) == expected_family(name), \
        (name, classify_family(name), expected_family(name))


def _reachable(_case: None) -> None:
    got = {classify_family(p) for p, _ in PATTERNS}
    assert got == set(OpFamily) - {OpFamily.OTHER}, sorted(got)
    assert all(classify_family(n) == OpFamily.OTHER for n in NO_PATTERN)


@property_obligation(
    "PO6.163",
    "classify_family is a first-match cascade: each of the header's patterns alone classifies "
    "to its own row's family (expand to MOVE, E6.7), a name holding patterns of several rows "
    "classifies to the earliest row's family, a name with none to OTHER, and every family but "
    "OTHER is reached.",
    covers=("vis.classify_family",),
    subject=family_table,
    mutants=(
        Mutant.edit("attention as activation", "the first row gives ACT", family_table,
                    '("attention", "sdp"), OpFamily.ATTN', '("attention", "sdp"), OpFamily.ACT'),
        Mutant.edit("expand shadowed", "the seed's bug: expand reaches the ELEM row first",
                    family_table, '(() if E6_7 in errata else ("expand",), OpFamily.MOVE)',
                    '((), OpFamily.MOVE)'),
        Mutant.edit("last match wins", "the cascade is read from its last row",
                    classify_family, "in family_table(errata):",
                    "in reversed(family_table(errata)):"),
        Mutant.edit("prefix match", "a pattern must start the name", classify_family,
                    "any(p in name for p in patterns)",
                    "any(name.startswith(p) for p in patterns)"),
        Mutant.edit("GEMM before OPTIM", "the GEMM row swapped above the optimizer row",
                    family_table,
                    '(("foreach", "fused_adam", "addcmul", "addcdiv", "lerp"), OpFamily.OPTIM)',
                    '(("mm", "matmul", "linear"), OpFamily.GEMM), (("foreach", "fused_adam", '
                    '"addcmul", "addcdiv", "lerp"), OpFamily.OPTIM)'),
    ),
)
def family_cascade(_subject):
    pairs = [f"{p}_{q}" for (p, _), (q, _) in itertools.permutations(PATTERNS, 2)]
    pieces = st.sampled_from([p for p, _ in PATTERNS] + ["_", "x", "aten::", "backward"])
    return [
        Property("each pattern alone", _own_family, cases=lambda: PATTERNS),
        Property("two patterns of any rows", _first_match, cases=lambda: pairs),
        Property("names joined from patterns", _first_match,
                 strategy=lambda: st.lists(pieces, max_size=5).map("".join)),
        Property("every family reached, OTHER without a pattern", _reachable,
                 cases=lambda: [None]),
    ]


# ── detect_blocks: a partition ────────────────────────────────────────────────────────────────


def _trace(args: dict) -> tuple[list[TraceOp], int]:
    ops = [TraceOp(o["name"], o["scope"], tuple(o["out_sizes"])) for o in args["ops"]]
    return ops, args.get("depth", 4)


def check_partition(ops: list[TraceOp], d: Detection) -> None:
    """Blocks in order cover 0..n-1 once; phases never go back; backward chunks are 31 ops
    but the last; forward ends at fwd_end and the optimizer starts at optim_start."""
    n, blocks = len(ops), d.blocks
    assert (n == 0) == (not blocks), (n, blocks)
    nxt = 0
    for b in blocks:
        assert b.start_op == nxt and b.start_op <= b.end_op, (nxt, b)
        assert b.num_ops == b.end_op - b.start_op + 1, b
        nxt = b.end_op + 1
    assert nxt == n, (nxt, n)
    phases = [b.phase for b in blocks]
    assert phases == sorted(phases), phases
    bwd = [b.num_ops for b in blocks if b.phase == Phase.BACKWARD]
    assert all(k == 31 for k in bwd[:-1]) and all(1 <= k <= 31 for k in bwd[-1:]), bwd
    fwd = [b for b in blocks if b.phase == Phase.FORWARD]
    if fwd:
        assert fwd[-1].end_op == d.fwd_end, (fwd[-1], d.fwd_end)
    opt = [b for b in blocks if b.phase == Phase.OPTIMIZER]
    assert (opt[0].start_op if opt else n) == d.optim_start, (opt, d.optim_start)


def _partition(args: dict) -> None:
    ops, depth = _trace(args)
    check_partition(ops, detect_blocks(ops, depth))


def _lengths(n_bwd: int) -> None:
    ops = [TraceOp("mm", "m")] + [TraceOp("convolution_backward")] * n_bwd
    sizes = [b.num_ops for b in detect_blocks(ops).blocks if b.phase == Phase.BACKWARD]
    assert sizes == [31] * (n_bwd // 31) + ([n_bwd % 31] if n_bwd % 31 else []), (n_bwd, sizes)


@property_obligation(
    "PO6.164",
    "detect_blocks partitions the ops: its blocks are contiguous and in phase order, cover "
    "0..n-1 exactly once (a trace that starts in backward has no forward block, E6.6), the "
    "forward blocks end at fwd_end, the optimizer starts at optim_start, and every backward "
    "block holds 31 ops but the last, which holds 1 to 31.",
    covers=("vis.detect_blocks",),
    subject=detect_blocks,
    mutants=(
        Mutant.edit("chunks of 32", "a backward block closes past 30", detect_blocks,
                    "i - start >= BWD_CHUNK", "i - start > BWD_CHUNK"),
        Mutant.edit("chunks of 30", "a backward block closes at 29", detect_blocks,
                    "i - start >= BWD_CHUNK", "i - start >= BWD_CHUNK - 1"),
        Mutant.edit("forward op 0 from backward", "the seed's bug: a forward block of op 0",
                    detect_blocks, "if first_bwd > 0 or E6_6 in errata:", "if True:"),
        Mutant.edit("forward overlaps", "a forward block ends where the next starts",
                    detect_blocks, "forward(start, i - 1)", "forward(start, i)"),
        Mutant.edit("backward restart", "the next chunk starts at the last one's end",
                    detect_blocks, "start = i + 1", "start = i"),
        Mutant.edit("fwd_end at first backward", "fwd_end is first_bwd, not first_bwd - 1",
                    detect_blocks, "out.fwd_end = first_bwd - 1", "out.fwd_end = first_bwd"),
    ),
)
def block_partition(_subject):
    return [
        Property("the edge traces", _partition, cases=detect_edges),
        Property("backward runs of 1..100 ops", _lengths, cases=lambda: range(1, 101)),
        Property("generated training steps", _partition, strategy=traces),
    ]
