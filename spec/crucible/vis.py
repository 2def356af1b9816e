"""Chapter 6: the trace visualiser's block detector (vis/BlockDetector.h).

An op's family comes from its schema's short name by a first-match cascade of substring
tests. A trace is cut into blocks in three phases: the forward pass grouped by module scope
path (truncated to `depth` components), the backward pass chunked by op count (the scope
hashes are stale during autograd), and the optimizer, found by its first OPTIM-family op at
or after the backward's start. Whatever follows the last `addcdiv_` is the epilogue. The
spatial heights of the forward blocks' 4-D outputs then guess the architecture.

A trace op carries what the detector reads of a recorded op: the schema's short name (empty
when the schema table does not know it), its module scope path (empty outside any module) and
the sizes of its first output (empty when it has none or no metas). The detector keeps at
most 4 of them: the shape text of a 5-D or wider output lists its first four sizes.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.bits import to_signed
from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import I32, I64, U32, Enum, Field, Json, List, Utf8, record
from ..core.strategies import st

E6_6, E6_7, E6_8, E6_9 = "E6.6", "E6.7", "E6.8", "E6.9"
NONE_TEXT = "(root)"
"""The label of a block whose scope path is empty."""
BWD_CHUNK = 30
"""A backward block [start, i] closes once i - start reaches 30: 31 ops per full chunk."""
PARAM_OP = "addcdiv_"
"""The optimizer counts one parameter per op of exactly this name (Adam's update)."""
MAX_SHAPE_DIMS = 4
"""Sizes of the first output the detector keeps."""


class OpFamily(enum.IntEnum):
    GEMM = 0
    CONV = 1
    NORM = 2
    ATTN = 3
    ACT = 4
    ELEM = 5
    MOVE = 6
    REDUCE = 7
    OPTIM = 8
    LOSS = 9
    EMBED = 10
    POOL = 11
    OTHER = 12


class BlockKind(enum.IntEnum):
    MODULE = 0
    MODULE_BWD = 1
    OPTIMIZER = 2
    EPILOGUE = 3
    ROOT = 4
    """Declared by the header; the detector never makes one."""


class Phase(enum.IntEnum):
    FORWARD = 0
    BACKWARD = 1
    OPTIMIZER = 2


class Architecture(enum.IntEnum):
    UNET = 0
    VIT = 1
    GENERIC = 2


FamilyRow = tuple[tuple[str, ...], OpFamily]
"""(patterns, family): a name containing any of the patterns has the family."""


def family_table(errata: frozenset[str] = NO_ERRATA) -> tuple[FamilyRow, ...]:
    """The cascade in the header's order, first row first (with "expand" before ELEM)."""
    return (
        (("attention", "sdp"), OpFamily.ATTN),
        (("loss", "nll", "mse_loss"), OpFamily.LOSS),
        (("foreach", "fused_adam", "addcmul", "addcdiv", "lerp"), OpFamily.OPTIM),
        (("mm", "matmul", "linear"), OpFamily.GEMM),
        (("conv",), OpFamily.CONV),
        (("norm",), OpFamily.NORM),
        (("gelu", "silu", "relu", "sigmoid", "softmax", "dropout"), OpFamily.ACT),
        (("sum", "mean", "argmax", "topk"), OpFamily.REDUCE),
        # E6.7: the seed lists "expand" with the moves below, where "exp" has already taken it.
        (() if E6_7 in errata else ("expand",), OpFamily.MOVE),
        (("add", "mul", "sub", "div", "neg", "exp", "log", "sqrt", "pow", "sin", "cos"),
         OpFamily.ELEM),
        (("view", "reshape", "permute", "transpose", "expand", "squeeze", "clone", "detach",
          "cat", "split", "slice", "select", "arange", "zeros", "ones", "copy", "to_copy"),
         OpFamily.MOVE),
        (("embedding",), OpFamily.EMBED),
        (("upsample", "pool"), OpFamily.POOL),
    )


def classify_family(name: str, errata: frozenset[str] = NO_ERRATA) -> OpFamily:
    """The family of the first row with a pattern in `name`; OTHER when none has one."""
    for patterns, family in family_table(errata):
        if any(p in name for p in patterns):
            return family
    return OpFamily.OTHER


@dataclass(frozen=True)
class TraceOp:
    """What the detector reads of one recorded op."""

    name: str = ""
    scope: str = ""
    out_sizes: tuple[int, ...] = ()


@dataclass(frozen=True)
class Block:
    """A run of ops [start_op, end_op] shown as one box (the header's Block)."""

    kind: BlockKind
    phase: Phase
    start_op: int
    end_op: int
    num_ops: int
    label: str
    scope_path: str
    out_shape: str
    spatial_h: int
    spatial_w: int


@dataclass
class Detection:
    """The blocks in op order, the architecture guess and the phase boundaries."""

    blocks: list[Block] = field(default_factory=list)
    architecture: Architecture = Architecture.GENERIC
    fwd_end: int = 0
    bwd_end: int = 0
    optim_start: int = 0


def truncate_scope(path: str, depth: int) -> str:
    """The first `depth` dot-separated components of `path` ("a.b.c", 2 -> "a.b")."""
    return ".".join(path.split(".")[:depth])


def scope_tail(path: str, errata: frozenset[str] = NO_ERRATA) -> str:
    """The last two components of `path` ("a.b.c" -> "b.c"); "(root)" when it is empty."""
    if not path:
        return NONE_TEXT
    if E6_8 in errata and path.count(".") == 1 and path[0] == ".":
        return path[1:]  # E6.8: the seed's backward search finds the leading dot twice
    return ".".join(path.split(".")[-2:])


def shape_text(sizes: Sequence[int]) -> str:
    """The kept sizes joined by 'x' ("2x3x32x32"); empty when there is no output."""
    return "x".join(str(s) for s in sizes[:MAX_SHAPE_DIMS])


def make_block(ops: Sequence[TraceOp], start: int, end: int, kind: BlockKind, phase: Phase,
               label: str, scope_path: str = "") -> Block:
    """A block over [start, end] labelled with the shape of its last op that has an output."""
    shape, h, w = "", 0, 0
    for op in reversed(ops[start:end + 1]):  # 1. the last op with an output
        if op.out_sizes:
            shape = shape_text(op.out_sizes)
            if len(op.out_sizes) == 4:  # 2. a 4-D output gives the spatial extent (as i32)
                h = to_signed(op.out_sizes[2] & 0xFFFFFFFF, 32)
                w = to_signed(op.out_sizes[3] & 0xFFFFFFFF, 32)
            break
    if shape:  # 3. the label ends with the shape
        label += f" [{shape}]"
    return Block(kind, phase, start, end, end - start + 1, label, scope_path, shape, h, w)


def guess_architecture(blocks: Sequence[Block],
                       errata: frozenset[str] = NO_ERRATA) -> Architecture:
    """UNET when forward heights span a factor of 2 (5 or more), VIT when they are near-equal."""
    heights = [b.spatial_h for b in blocks if b.phase == Phase.FORWARD and b.spatial_h > 0]
    if not heights:
        return Architecture.GENERIC
    lo, hi = min(heights), max(heights)
    twice = to_signed(2 * lo, 32) if E6_9 in errata else 2 * lo  # E6.9: an int32 product
    if len(heights) >= 5 and hi >= twice:
        return Architecture.UNET
    return Architecture.VIT if hi - lo <= 1 else Architecture.GENERIC


def detect_blocks(ops: Sequence[TraceOp], depth: int = 4,
                  errata: frozenset[str] = NO_ERRATA) -> Detection:
    """Cut a trace into forward, backward, optimizer and epilogue blocks."""
    out, n = Detection(), len(ops)
    if n == 0:  # 1. an empty trace: no blocks, every boundary 0
        return out
    first_bwd = next((i for i, op in enumerate(ops) if "backward" in op.name), n)  # 2.
    out.fwd_end = first_bwd - 1 if first_bwd > 0 else 0
    out.optim_start = next((i for i in range(first_bwd, n)  # 3. optimizer: first OPTIM op
                            if classify_family(ops[i].name, errata) == OpFamily.OPTIM), n)
    out.bwd_end = out.optim_start - 1 if out.optim_start > 0 else n - 1

    def forward(start: int, end: int) -> None:
        path = truncate_scope(ops[start].scope, depth)
        out.blocks.append(make_block(ops, start, end, BlockKind.MODULE, Phase.FORWARD,
                                     scope_tail(path, errata), path))

    if first_bwd > 0 or E6_6 in errata:  # 4. forward: a new block where the path changes
        start = 0
        for i in range(1, out.fwd_end + 1):
            if truncate_scope(ops[i].scope, depth) != truncate_scope(ops[i - 1].scope, depth):
                forward(start, i - 1)
                start = i
        forward(start, out.fwd_end)
    start = first_bwd  # 5. backward: chunks of 31 ops, the last one shorter
    for i in range(first_bwd, out.optim_start):
        if i - start >= BWD_CHUNK or i == out.optim_start - 1:
            out.blocks.append(make_block(ops, start, i, BlockKind.MODULE_BWD, Phase.BACKWARD,
                                         "Backward"))
            start = i + 1
    if out.optim_start < n:  # 6. optimizer up to the last addcdiv_, then the epilogue
        params = [i for i in range(out.optim_start, n) if ops[i].name == PARAM_OP]
        last = params[-1] if params else out.optim_start
        out.blocks.append(make_block(ops, out.optim_start, last, BlockKind.OPTIMIZER,
                                     Phase.OPTIMIZER, f"Optimizer ({len(params)} params)"))
        if last + 1 < n:
            out.blocks.append(make_block(ops, last + 1, n - 1, BlockKind.EPILOGUE,
                                         Phase.OPTIMIZER, "Epilogue"))
    out.architecture = guess_architecture(out.blocks, errata)  # 7.
    return out


# ── wire forms ────────────────────────────────────────────────────────────────────────────────


def classify_family_op(name: str, errata: frozenset[str] = NO_ERRATA) -> dict:
    return {"family": classify_family(name, errata)}


def check_sizes(args: dict) -> None:
    """An output's sizes are non-negative, as in a TensorMeta."""
    for i, op in enumerate(args["ops"]):
        if any(s < 0 for s in op["out_sizes"]):
            raise InvalidInput(f"args.ops[{i}].out_sizes: a size is negative")


def detect_blocks_op(ops: list[dict], depth: int = 4,
                     errata: frozenset[str] = NO_ERRATA) -> dict:
    trace = [TraceOp(o["name"], o["scope"], tuple(o["out_sizes"])) for o in ops]
    d = detect_blocks(trace, depth, errata)
    blocks = [vars(b) | {"kind": int(b.kind), "phase": int(b.phase)} for b in d.blocks]
    return {"architecture": d.architecture, "fwd_end": d.fwd_end, "bwd_end": d.bwd_end,
            "optim_start": d.optim_start, "blocks": blocks}


# ── errata ────────────────────────────────────────────────────────────────────────────────────

_SEED = "crucible@8d2680a2"
_WHERE = "include/crucible/vis/BlockDetector.h"


def _block(kind: int, phase: int, start: int, end: int, label: str, scope_path: str = "",
           shape: str = "", h: int = 0, w: int = 0) -> dict:
    """A block as the wire carries it (witnesses and tests)."""
    return {"kind": kind, "phase": phase, "start_op": start, "end_op": end,
            "num_ops": end - start + 1, "label": label, "scope_path": scope_path,
            "out_shape": shape, "spatial_h": h, "spatial_w": w}


def _op(name: str, scope: str = "", sizes: tuple[int, ...] = ()) -> dict:
    return {"name": name, "scope": scope, "out_sizes": list(sizes)}


erratum(
    E6_6, "A trace that starts in backward gets its first op in a forward block as well",
    seed=_SEED, location=f"{_WHERE} detect_blocks", ops=("vis.detect_blocks",),
    witness={"args": {"ops": [_op("threshold_backward")]},
             "spec": {"blocks": [_block(1, 1, 0, 0, "Backward")]},
             "seed": {"blocks": [_block(0, 0, 0, 0, NONE_TEXT), _block(1, 1, 0, 0, "Backward")]}},
    flag="result",
    detail="fwd_end is first_bwd - 1, clamped to 0 when the first op is a backward one so the "
           "unsigned index does not wrap; the forward loop then runs over [0, fwd_end] = [0, 0] "
           "and makes a Module block of op 0, which the first backward chunk also holds. The "
           "blocks are meant to partition the ops: the spec makes no forward block then "
           "(fwd_end stays 0, as the field cannot say 'none').",
)

erratum(
    E6_7, "expand is listed as a move but classifies as elementwise",
    seed=_SEED, location=f"{_WHERE} classify_family", ops=("vis.classify_family",),
    witness={"args": {"name": "expand"}, "spec": {"family": int(OpFamily.MOVE)},
             "seed": {"family": int(OpFamily.ELEM)}},
    flag="result",
    detail="The MOVE row names \"expand\", but the ELEM row before it tests \"exp\", a "
           "substring of it, so expand (and expand_copy, expand_as) can never be MOVE: the only "
           "pattern that a row of another family shadows. The spec tests \"expand\" just "
           "before the ELEM row; every other name classifies as the seed's.",
)

erratum(
    E6_8, "A scope path whose only dot leads it loses the dot in its label",
    seed=_SEED, location=f"{_WHERE} scope_tail", ops=("vis.detect_blocks",),
    witness={"args": {"ops": [_op("relu", ".a")]},
             "spec": {"blocks": [_block(0, 0, 0, 0, ".a", ".a")]},
             "seed": {"blocks": [_block(0, 0, 0, 0, "a", ".a")]}},
    flag="result",
    detail="scope_tail searches backwards from pos - 1, clamped to 0; after finding a dot at "
           "index 0 the second search starts at 0 and finds the same dot, so \".a\" gives \"a\" "
           "(and \".\" gives \"\") where its last two components are \".a\". Paths with any "
           "other dot are right. The spec labels with the last two components.",
)

erratum(
    E6_9, "The U-Net test doubles the least height in int32",
    seed=_SEED, location=f"{_WHERE} detect_blocks (architecture)", ops=("vis.detect_blocks",),
    witness={"args": {"ops": [_op("convolution", f"m.b{i}", (1, 1, 2**30, 1))
                              for i in range(5)]},
             "spec": {"architecture": int(Architecture.VIT)},
             "seed": {"architecture": int(Architecture.UNET)}},
    flag="result",
    detail="hi >= 2 * lo multiplies an int32_t, which overflows once the least forward height "
           "reaches 2^30: undefined behaviour. The seed built by clang 19 (-O2, x86-64) wraps "
           "the product to int32 (2 * 2^30 = -2^31), so five heights of 2^30 pass the U-Net "
           "test; the faithful profile reproduces that build. The spec compares the exact "
           "product: VIT.",
)


# ── ops ───────────────────────────────────────────────────────────────────────────────────────

FORWARD_NAMES = (
    "convolution", "addmm", "mm", "bmm", "linear", "native_layer_norm", "native_batch_norm",
    "group_norm", "relu_", "gelu", "silu", "sigmoid", "_softmax", "log_softmax",
    "native_dropout", "add", "mul", "div", "rsqrt", "view", "_unsafe_view", "permute",
    "transpose", "t", "expand", "clone", "cat", "split", "slice", "select", "embedding",
    "max_pool2d_with_indices", "avg_pool2d", "upsample_nearest2d",
    "_scaled_dot_product_flash_attention", "mean", "sum", "argmax", "nll_loss_forward",
    "mse_loss", "_to_copy", "arange", "zeros", "ones_like", "threshold", "where", "")
BACKWARD_FIRST = (
    "mse_loss_backward", "nll_loss_backward", "_log_softmax_backward_data",
    "threshold_backward", "convolution_backward")
BACKWARD_NAMES = (
    "convolution_backward", "mm", "native_layer_norm_backward", "native_batch_norm_backward",
    "threshold_backward", "gelu_backward", "silu_backward", "_softmax_backward_data",
    "embedding_dense_backward", "max_pool2d_with_indices_backward",
    "upsample_nearest2d_backward", "_scaled_dot_product_flash_attention_backward",
    "native_dropout_backward", "sum", "view", "t", "add", "mul", "expand", "fill_", "detach",
    "")
ADAM_STEP = ("lerp_", "mul_", "addcmul_", "sqrt", "div", "add_", "addcdiv_")
OPTIM_NAMES = ("_foreach_add_", "_foreach_mul_", "_fused_adam_", "lerp_", "addcmul_",
               "addcdiv_", "_foreach_sqrt", "div", "copy_", "zero_")
SCOPES = ("", "model", "model.encoder.layers.0.attn", "model.encoder.layers.0.mlp.fc1",
          "model.encoder.layers.1.attn", "model.down.0.conv1", "model.down.1.conv1",
          "model.up.0.conv2", "model.head", "features.3", ".a", "a..b")


def names(pool: tuple[str, ...]) -> st.SearchStrategy:
    """Mostly real short names from `pool`, sometimes arbitrary ones."""
    return st.sampled_from(pool) | st.text(st.sampled_from("abcdegklmnoprstuw_"), max_size=24)


def out_sizes() -> st.SearchStrategy:
    """A first output: none, NCHW with a common height, or any shape of up to 8 sizes."""
    side = st.sampled_from((7, 8, 14, 15, 16, 28, 32, 64, 128))
    nchw = st.tuples(st.integers(1, 64), st.integers(1, 512), side, side).map(list)
    return st.just([]) | nchw | st.lists(st.integers(0, 4096), min_size=1, max_size=8)


@st.composite
def traces(draw) -> dict:
    """A training step: forward runs of ops under module scopes, often a backward pass (up to
    three chunks), then often Adam's per-parameter updates and an epilogue."""
    op = st.builds(_op, names(FORWARD_NAMES), st.sampled_from(SCOPES), out_sizes())
    ops = []
    for scope, k in draw(st.lists(st.tuples(st.sampled_from(SCOPES), st.integers(1, 6)),
                                  max_size=8)):
        ops += [{**draw(op), "scope": scope} for _ in range(k)]
    if draw(st.integers(0, 3)):
        stale = ops[-1]["scope"] if ops else ""
        ops.append(_op(draw(st.sampled_from(BACKWARD_FIRST)), stale, draw(out_sizes())))
        ops += [_op(draw(names(BACKWARD_NAMES)), stale, draw(out_sizes()))
                for _ in range(draw(st.integers(0, 75)))]
        if draw(st.integers(0, 2)):
            for _ in range(draw(st.integers(0, 4))):
                ops += [_op(n) for n in ADAM_STEP]
            ops += [_op(draw(st.sampled_from(OPTIM_NAMES)))
                    for _ in range(draw(st.integers(0, 4)))]
    depth = draw(st.sampled_from((4, 4, 4, 0, 1, 2, 3, 6)) | st.integers(0, 2**32 - 1))
    return {"ops": ops, "depth": depth}


def _run(scope_heights: list[tuple[str, int]]) -> list[dict]:
    """One convolution per (scope, height): forward blocks with those spatial heights."""
    return [_op("convolution", s, (8, 64, h, h)) for s, h in scope_heights]


def detect_edges() -> list[dict]:
    """Empty, forward only, the witnesses, 70 backward ops, optimizers and the architectures."""
    bwd = [_op("convolution_backward" if i == 0 else "mm", "model.fc", (4, 4))
           for i in range(70)]
    adam = [_op(n) for n in ADAM_STEP * 2] + [_op("copy_", "", (4,)), _op("zero_")]
    unet = [(f"m.down.{i}", h) for i, h in enumerate((64, 32, 16))] + [
        (f"m.up.{i}", h) for i, h in enumerate((32, 64))]
    return [
        {"ops": []},
        {"ops": [_op("addmm", "model.encoder.layers.0.attn.q_proj", (2, 16, 64)),
                 _op("view", "model.encoder.layers.0.attn.k_proj"),
                 _op("relu_", "model.encoder.layers.1.mlp")]},
        {"ops": [_op("threshold_backward")]},
        {"ops": [_op("relu", ".a")]},
        {"ops": [_op("linear", "model.fc", (4, 10)), *bwd, *adam]},
        {"ops": [_op("mse_loss", "m", (1,)), _op("mse_loss_backward"), _op("_foreach_add_"),
                 _op("copy_")]},
        {"ops": [_op("sum", "m"), _op("convolution_backward"), _op("lerp_backward")]},
        {"ops": _run(unet)},
        {"ops": _run([(f"vit.blocks.{i}", 14) for i in range(5)])},
        {"ops": _run([("a", 14), ("b", 15), ("c", 14)])},
        {"ops": _run([("a", 8), ("b", 32)])},
        {"ops": _run([(f"b{i}", h) for i, h in enumerate((10, 12, 15, 18, 19))])},
        {"ops": _run([(f"m.b{i}", 2**30) for i in range(5)])},
        {"ops": [_op("conv3d", "a.b.c.d.e.f", (1, 2, 3, 4, 5)), _op("add", "a.b.c.d.x")],
         "depth": 0},
        {"ops": [_op("conv3d", "a.b.c.d.e.f", (1, 2, 3, 4, 5)), _op("add", "a.b.c.d.x")],
         "depth": 5},
    ]


CLASSIFY_EDGES = ("", "addmm", "mse_loss_backward", "embedding_dense_backward", "aten::relu_",
                  "expand", "_scaled_dot_product_flash_attention", "nll_loss_forward",
                  "_foreach_add_", "convolution", "native_layer_norm", "log_softmax",
                  "logsumexp", "_to_copy", "max_pool2d_with_indices", "threshold_backward")

declare(
    "vis.classify_family", chapter=6,
    summary="The op family of a schema's short name: a first-match cascade of substrings.",
    args=record(name=Field(Utf8(c_string=True), "the schema's short name, e.g. addmm")),
    result=record(family=Field(Enum(OpFamily), "OpFamily ordinal")),
    spec=(classify_family,), errata=(E6_7,),
    domain=lambda: st.fixed_dictionaries({"name": names(FORWARD_NAMES + BACKWARD_NAMES
                                                        + OPTIM_NAMES)}),
    invalid=(InvalidCase("a name with a NUL", lambda: st.just({"name": "add\x00mm"})),),
    edges=lambda: [{"name": n} for n in CLASSIFY_EDGES],
    not_applicable={"numba": "a dozen substring tests per distinct schema name, done once a "
                             "trace: nothing worth a kernel",
                    "cupy": "a dozen substring tests per distinct schema name: nothing to "
                            "spread over a device"},
)

_TRACE_OP = record(name=Field(Utf8(c_string=True), "the schema's short name", ""),
                   scope=Field(Utf8(c_string=True), "module scope path, dot-separated", ""),
                   out_sizes=Field(List(I64, 8), "sizes of the first output; [] when none",
                                   []))
_BLOCK = record(kind=Enum(BlockKind), phase=Enum(Phase), start_op=U32, end_op=U32, num_ops=U32,
                label=Utf8(), scope_path=Utf8(), out_shape=Utf8(), spatial_h=I32, spatial_w=I32)

declare(
    "vis.detect_blocks", chapter=6,
    summary="Cut a trace into forward (by scope), backward (31-op chunks), optimizer and "
            "epilogue blocks; guess U-Net or ViT from the forward heights.",
    args=record(ops=Field(List(_TRACE_OP), "the trace's ops in order"),
                depth=Field(U32, "scope components a forward block keeps", 4)),
    result=record(architecture=Field(Enum(Architecture), "Architecture ordinal"),
                  fwd_end=Field(U32, "last forward op (0 when none)"),
                  bwd_end=Field(U32, "optim_start - 1 (n - 1 when optim_start is 0)"),
                  optim_start=Field(U32, "first optimizer op; n when none"),
                  blocks=Json("[block]", List(_BLOCK))),
    spec=(detect_blocks,), errata=(E6_6, E6_8, E6_9), check=check_sizes, domain=traces,
    invalid=(
        InvalidCase("a negative depth", lambda: st.just({"ops": [], "depth": -1})),
        InvalidCase("a depth past u32", lambda: st.just({"ops": [], "depth": 2**32})),
        InvalidCase("a negative size", lambda: st.just({"ops": [_op("mm", "", (2, -1))]})),
        InvalidCase("nine sizes", lambda: st.just({"ops": [_op("mm", "", (1,) * 9)]})),
        InvalidCase("a scope with a NUL", lambda: st.just({"ops": [_op("mm", "a\x00b")]})),
    ),
    edges=detect_edges,
    not_applicable={"numba": "string scopes compared op by op and a handful of blocks out: "
                             "no numeric core to compile",
                    "cupy": "each block's end depends on the ops before it, in order"},
)
