"""Synthetic training-loop traces, shaped like a recording but made without torch.

One iteration of a small model (`mlp`: three Linear layers with SGD and momentum;
`transformer`: a 2-block GPT with tied embeddings and AdamW) is written op by op as the native
Vessel records it: forward ops with grad, backward ops making grads, optimizer ops updating the
parameters and their state in place, views (the same data_ptr, another shape), in-place ops (an
output pointer equal to an input's), host batches copied to the GPU and a tensorless op with a
scalar. The iteration is repeated until `num_ops` (the last one may be cut).

Parameters, optimizer state and host batches are external: the same pointers in every
iteration. Activations get new storages from a bump allocator (512-byte blocks) reset at every
iteration, so every iteration has the same pointers, as a caching allocator hands them out; with
`fresh_storages` each iteration's activations get new addresses instead (as `crucible-spec
record` remaps storages). The seed picks the model's sizes, dtype and addresses, never its ops.
The first K = 5 schema hashes of an iteration occur nowhere else in it, so the iteration
detector finds every iteration. Output is a pure function of (num_ops, shape, seed, fresh).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import pairwise

import numpy as np

from .gc_pause import gc_paused
from .spec.crucible.crtrace import LoadedTrace, meta_starts_of
from .spec.crucible.tensor_meta import MAX_DIMS
from .spec.crucible.trace_ring import MAX_SCALARS
from .spec.crucible.types import (
    DeviceType,
    MetaFlag,
    ScalarType,
    TrainingPhase,
    element_size,
    pack_op_flags,
)
from .spec.crucible.vessel import schema_hash, scope_hash, shape_hash

SHAPES = ("mlp", "transformer")
BLOCK = 512
"""The caching allocator rounds every block up to 512 bytes."""
PARAM_BASE = 0x7F00_0000_0000
HOST_BASE = 0x7F80_0000_0000
ACT_BASE = 0x1000_0000_0000
"""Activations lie below the parameters; fresh storages climb from here."""

FORWARD, BACKWARD, OPTIMIZER = TrainingPhase.FORWARD, TrainingPhase.BACKWARD, \
    TrainingPhase.OPTIMIZER
CPU, CUDA = int(DeviceType.CPU), int(DeviceType.CUDA)
FLOAT, BF16, LONG = int(ScalarType.Float), int(ScalarType.BFloat16), int(ScalarType.Long)


def f64(x: float) -> int:
    """A double as the boxed stack holds it: its bits as an int64."""
    return struct.unpack("<q", struct.pack("<d", x))[0]


def contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    out, step = [], 1
    for s in reversed(sizes):
        out.append(step)
        step *= max(s, 1)
    return tuple(reversed(out))


def is_contiguous(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's rule: dimensions of size 1 may have any stride."""
    want = contiguous_strides(sizes)
    return all(s == 1 or st == w for s, st, w in zip(sizes, strides, want, strict=True))


def node_name(op: str) -> str:
    """The autograd node an op's output carries: aten::native_layer_norm ->
    NativeLayerNormBackward0."""
    base = op.split("::", 1)[1].split(".", 1)[0].strip("_")
    return "".join(p.capitalize() for p in base.split("_")) + "Backward0"


@dataclass(frozen=True)
class Tensor:
    """A tensor as the recorder reads it: its storage, view geometry and autograd state."""

    base: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: int
    device_type: int
    device_idx: int
    storage_nbytes: int
    offset: int = 0
    requires_grad: bool = False
    grad_fn: str | None = None
    output_nr: int = 0
    view: bool = False
    moves: bool = False
    """An activation: with fresh storages its address changes every iteration."""

    @property
    def data_ptr(self) -> int:
        return self.base + self.offset * element_size(self.dtype)


def tensor_meta(t: Tensor, version: int) -> dict:
    """The TensorMeta the recorder fills for `t`."""
    ndim = len(t.sizes)
    flags = (MetaFlag.IS_LEAF if t.grad_fn is None else MetaFlag.HAS_GRAD_FN) \
        | (MetaFlag.IS_CONTIGUOUS if is_contiguous(t.sizes, t.strides) else 0) \
        | (MetaFlag.IS_VIEW if t.view else 0)
    pad = [0] * (MAX_DIMS - ndim)
    return {"sizes": [*t.sizes, *pad], "strides": [*t.strides, *pad], "data_ptr": t.data_ptr,
            "ndim": ndim, "dtype": t.dtype, "device_type": t.device_type,
            "device_idx": t.device_idx, "layout": 0, "requires_grad": t.requires_grad,
            "flags": int(flags), "output_nr": t.output_nr & 0xFF, "storage_offset": t.offset,
            "version": version & 0xFFFFFFFF, "storage_nbytes": t.storage_nbytes & 0xFFFFFFFF,
            "grad_fn_hash": schema_hash(t.grad_fn) if t.grad_fn else 0}


@dataclass
class Iteration:
    """One iteration as ring entries and metas (with which metas are activations), scope
    hashes, the name table, and the bytes of activations it allocates (rounded to 2 MiB)."""

    entries: list[dict] = field(default_factory=list)
    metas: list[dict] = field(default_factory=list)
    moves: list[bool] = field(default_factory=list)
    scope_hashes: list[int] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)
    span: int = 0


class Tape:
    """An iteration being written: storages come from three regions (parameters and optimizer
    state, pinned host buffers, activations) and every call appends one ring entry."""

    def __init__(self, bases: tuple[int, int, int], device_idx: int) -> None:
        self.next = {"param": bases[0], "host": bases[1], "act": bases[2]}
        self.act_base = bases[2]
        self.device_idx = device_idx
        self.versions: dict[int, int] = {}
        self.scope: str | None = None
        self.phase = FORWARD
        self.out = Iteration()

    def _alloc(self, region: str, nbytes: int) -> int:
        base = self.next[region]
        self.next[region] += -(-max(nbytes, 1) // BLOCK) * BLOCK
        return base

    def _tensor(self, region: str, sizes: tuple[int, ...], dtype: int, device: int,
                **kw) -> Tensor:
        nbytes = math.prod(sizes) * element_size(dtype)
        return Tensor(self._alloc(region, nbytes), sizes, contiguous_strides(sizes), dtype,
                      device, self.device_idx if device == CUDA else -1, nbytes, **kw)

    def param(self, sizes: tuple[int, ...], dtype: int) -> Tensor:
        """A parameter: external, a leaf that requires grad."""
        return self._tensor("param", sizes, dtype, CUDA, requires_grad=True)

    def state(self, like: Tensor) -> Tensor:
        """Optimizer state shaped like a parameter: external, no grad."""
        return self._tensor("param", like.sizes, like.dtype, CUDA)

    def host(self, sizes: tuple[int, ...], dtype: int) -> Tensor:
        """A pinned host batch buffer, refilled in place every iteration."""
        return self._tensor("host", sizes, dtype, CPU)

    def new(self, sizes: tuple[int, ...], dtype: int, device: int = CUDA) -> Tensor:
        """A fresh activation storage."""
        return self._tensor("act", sizes, dtype, device, moves=True)

    def view(self, t: Tensor, sizes: tuple[int, ...], strides: tuple[int, ...] | None = None,
             offset: int | None = None) -> Tensor:
        """Another shape over t's storage (the same data_ptr unless the offset moves)."""
        return replace(t, sizes=sizes, strides=strides or contiguous_strides(sizes),
                       offset=t.offset if offset is None else offset, view=True,
                       requires_grad=False, grad_fn=None, output_nr=0)

    def call(self, name: str, inputs: list[Tensor], outputs: list[Tensor],
             scalars: list[int] | tuple[int, ...] = (), mutable: bool = False) -> list[Tensor]:
        """Record one op; returns its outputs as autograd leaves them (an out-of-place forward
        op on a tensor that requires grad gives outputs with its grad_fn)."""
        grad = self.phase == FORWARD and not mutable and any(t.requires_grad for t in inputs)
        if grad:
            outputs = [replace(t, requires_grad=True, grad_fn=node_name(name), output_nr=k)
                       for k, t in enumerate(outputs)]
        metas = [tensor_meta(t, self.versions.get(t.base, 0)) for t in inputs]
        if mutable:
            for t in outputs:
                self.versions[t.base] = self.versions.get(t.base, 0) + 1
        metas += [tensor_meta(t, self.versions.get(t.base, 0)) for t in outputs]
        kept = [int(s) for s in scalars][:MAX_SCALARS]
        it = self.out
        it.entries.append({
            "schema_hash": schema_hash(name), "shape_hash": shape_hash([t.sizes for t in inputs]),
            "num_inputs": len(inputs), "num_outputs": len(outputs), "num_scalar_args": len(kept),
            "grad_enabled": self.phase == FORWARD,
            "op_flags": pack_op_flags(False, mutable, self.phase, False),
            "scalar_values": kept + [0] * (MAX_SCALARS - len(kept))})
        it.metas += metas
        it.moves += [t.moves for t in (*inputs, *outputs)]
        it.scope_hashes.append(scope_hash(self.scope))
        it.names.setdefault(schema_hash(name), name)
        if self.scope is not None:
            it.names.setdefault(scope_hash(self.scope), self.scope)
        return outputs

    def op(self, name: str, inputs: list[Tensor], output: Tensor,
           scalars: list[int] | tuple[int, ...] = ()) -> Tensor:
        """An op with one output."""
        return self.call(name, inputs, [output], scalars)[0]

    def t(self, w: Tensor) -> Tensor:
        return self.op("aten::t", [w], self.view(w, w.sizes[::-1], w.strides[::-1]))

    def reshape(self, x: Tensor, sizes: tuple[int, ...]) -> Tensor:
        return self.op("aten::view", [x], self.view(x, sizes), list(sizes))

    def inplace(self, name: str, inputs: list[Tensor], scalars: list[int]) -> None:
        """An in-place update of inputs[0]: its output is the same storage."""
        self.call(name, inputs, [inputs[0]], scalars, mutable=True)

    def finish(self) -> Iteration:
        used = self.next["act"] - self.act_base
        self.out.span = -(-used // (1 << 21)) * (1 << 21)
        return self.out


@dataclass
class Linear:
    """A Linear layer's parameters and what its forward kept for the backward."""

    w: Tensor
    b: Tensor
    x2: Tensor | None = None
    wt: Tensor | None = None


def linear(tp: Tape, layer: Linear, x: Tensor) -> Tensor:
    """y = x @ w.T + b as torch records it: (view to 2-D), t, addmm, (view back)."""
    lead, d_in = x.sizes[:-1], x.sizes[-1]
    layer.x2 = x if len(lead) == 1 else tp.reshape(x, (math.prod(lead), d_in))
    layer.wt = tp.t(layer.w)
    out = layer.w.sizes[0]
    y = tp.op("aten::addmm", [layer.b, layer.x2, layer.wt],
              tp.new((layer.x2.sizes[0], out), x.dtype), [1, 1])
    return y if len(lead) == 1 else tp.reshape(y, (*lead, out))


def linear_backward(tp: Tape, layer: Linear, g: Tensor, grads: dict[int, Tensor],
                    need_input: bool = True) -> Tensor | None:
    """The grads of a Linear: input (mm with t(t(w))), weight (mm with t(g)), bias (sum, view)."""
    lead, out = g.sizes[:-1], g.sizes[-1]
    g2 = g if len(lead) == 1 else tp.reshape(g, (math.prod(lead), out))
    gx = None
    if need_input:
        w = tp.t(layer.wt)
        gx = tp.op("aten::mm", [g2, w], tp.new((g2.sizes[0], w.sizes[1]), g.dtype))
    gw = tp.op("aten::mm", [tp.t(g2), layer.x2], tp.new(layer.w.sizes, g.dtype))
    gb = tp.op("aten::sum.dim_IntList", [g2], tp.new((1, out), g.dtype), [0, 1])
    grads[layer.w.base], grads[layer.b.base] = gw, tp.reshape(gb, (out,))
    if gx is None or len(lead) == 1:
        return gx
    return tp.reshape(gx, (*lead, gx.sizes[1]))


@dataclass
class Norm:
    """A LayerNorm's parameters and its saved input, mean and rstd."""

    w: Tensor
    b: Tensor
    saved: tuple[Tensor, ...] = ()


def layer_norm(tp: Tape, n: Norm, x: Tensor) -> Tensor:
    lead = x.sizes[:-1]
    y, mean, rstd = tp.call("aten::native_layer_norm", [x, n.w, n.b],
                            [tp.new(x.sizes, x.dtype), tp.new((*lead, 1), FLOAT),
                             tp.new((*lead, 1), FLOAT)], [x.sizes[-1], f64(1e-5)])
    n.saved = (x, mean, rstd)
    return y


def layer_norm_backward(tp: Tape, n: Norm, g: Tensor, grads: dict[int, Tensor]) -> Tensor:
    x, mean, rstd = n.saved
    gx, gw, gb = tp.call("aten::native_layer_norm_backward", [g, x, mean, rstd, n.w, n.b],
                         [tp.new(x.sizes, x.dtype), tp.new(n.w.sizes, n.w.dtype),
                          tp.new(n.b.sizes, n.b.dtype)], [x.sizes[-1], 1, 1, 1])
    grads[n.w.base], grads[n.b.base] = gw, gb
    return gx


def add(tp: Tape, a: Tensor, b: Tensor) -> Tensor:
    return tp.op("aten::add.Tensor", [a, b], tp.new(a.sizes, a.dtype), [1])


def start(tp: Tape, hosts: list[Tensor]) -> list[Tensor]:
    """The iteration's first ops: the host batches copied to the GPU (non_blocking)."""
    return [tp.op("aten::_to_copy", [h], tp.new(h.sizes, h.dtype), [1]) for h in hosts]


def finish_step(tp: Tape, loss: Tensor) -> None:
    """loss.item(), then a tensorless check on the scalar it read."""
    tp.phase = FORWARD
    tp.call("aten::_local_scalar_dense", [loss], [])
    tp.call("aten::_assert_scalar", [], [], [1])


def mlp(tp: Tape, rng: np.random.Generator) -> None:
    """Linear-ReLU-Linear-ReLU-Linear, MSE loss, SGD with momentum: 51 ops."""
    batch, d_in, hidden, d_out = (int(rng.choice(c)) for c in
                                  ([32, 64, 128], [64, 128, 256], [256, 512, 1024], [10, 16]))
    dims = [d_in, hidden, hidden, d_out]
    layers = [Linear(tp.param((o, i), FLOAT), tp.param((o,), FLOAT)) for i, o in pairwise(dims)]
    tp.scope = "<root>"
    x, y = start(tp, [tp.host((batch, d_in), FLOAT), tp.host((batch, d_out), FLOAT)])
    relus = []
    for k, layer in enumerate(layers):
        tp.scope = f"net.{2 * k}"
        x = linear(tp, layer, x)
        if k + 1 < len(layers):
            tp.scope = f"net.{2 * k + 1}"
            x = tp.op("aten::relu", [x], tp.new(x.sizes, FLOAT))
            relus.append(x)
    loss = tp.op("aten::mse_loss", [x, y], tp.new((), FLOAT), [1])
    tp.phase = BACKWARD
    g = tp.op("aten::ones_like", [loss], tp.new((), FLOAT), [0, 1])
    g = tp.op("aten::mse_loss_backward", [g, x, y], tp.new(x.sizes, FLOAT), [1])
    grads: dict[int, Tensor] = {}
    for k in reversed(range(len(layers))):
        g = linear_backward(tp, layers[k], g, grads, need_input=k > 0)
        if k > 0:
            g = tp.op("aten::threshold_backward", [g, relus[k - 1]], tp.new(g.sizes, FLOAT), [0])
    tp.phase = OPTIMIZER
    for p in (t for layer in layers for t in (layer.w, layer.b)):
        buf = tp.state(p)
        tp.inplace("aten::mul_.Scalar", [buf], [f64(0.9)])
        tp.inplace("aten::add_.Tensor", [buf, grads[p.base]], [f64(1.0)])
        tp.inplace("aten::add_.Tensor", [p, buf], [f64(-0.01)])
    finish_step(tp, loss)


@dataclass
class Block:
    """One transformer block's layers."""

    ln1: Norm
    qkv: Linear
    proj: Linear
    ln2: Norm
    fc: Linear
    out: Linear
    saved: dict[str, Tensor] = field(default_factory=dict)


def attention(tp: Tape, blk: Block, y: Tensor, heads: int) -> Tensor:
    """qkv projection, split, per-head views, fused attention, output projection."""
    b, s, d = y.sizes
    qkv = linear(tp, blk.qkv, y)
    parts = tp.call("aten::split.Tensor", [qkv],
                    [tp.view(qkv, (b, s, d), qkv.strides, k * d) for k in range(3)], [d, 2])
    hd = d // heads
    qkvh = []
    for t in parts:
        t4 = tp.op("aten::view", [t], tp.view(t, (b, s, heads, hd), (s * 3 * d, 3 * d, hd, 1)),
                   [b, s, heads, hd])
        qkvh.append(tp.op("aten::transpose.int", [t4], tp.view(
            t4, (b, heads, s, hd), (s * 3 * d, hd, 3 * d, 1)), [1, 2]))
    out, lse, seed, offset = tp.call(
        "aten::_scaled_dot_product_efficient_attention", qkvh,
        [tp.new((b, heads, s, hd), y.dtype), tp.new((b, heads, s), FLOAT),
         tp.new((), LONG, CPU), tp.new((), LONG, CPU)], [1, f64(0.0), 1])
    blk.saved |= {"q": qkvh[0], "k": qkvh[1], "v": qkvh[2], "out": out, "lse": lse,
                  "seed": seed, "offset": offset}
    o = tp.op("aten::transpose.int", [out], tp.view(out, (b, s, heads, hd),
                                                    (heads * s * hd, hd, s * hd, 1)), [1, 2])
    o = tp.op("aten::clone", [o], tp.new((b, s, heads, hd), y.dtype), [0])
    return linear(tp, blk.proj, tp.reshape(o, (b, s, d)))


def block(tp: Tape, blk: Block, h: Tensor, heads: int) -> Tensor:
    h = add(tp, h, attention(tp, blk, layer_norm(tp, blk.ln1, h), heads))
    f = linear(tp, blk.fc, layer_norm(tp, blk.ln2, h))
    g = tp.op("aten::gelu", [f], tp.new(f.sizes, f.dtype))
    blk.saved["f"] = f
    return add(tp, h, linear(tp, blk.out, g))


def block_backward(tp: Tape, blk: Block, g: Tensor, grads: dict[int, Tensor],
                   heads: int) -> Tensor:
    gf = linear_backward(tp, blk.out, g, grads)
    f = blk.saved["f"]
    gf = tp.op("aten::gelu_backward", [gf, f], tp.new(f.sizes, f.dtype))
    g_mid = add(tp, g, layer_norm_backward(tp, blk.ln2, linear_backward(tp, blk.fc, gf, grads),
                                           grads))
    go = linear_backward(tp, blk.proj, g_mid, grads)
    b, s, d = go.sizes
    hd = d // heads
    go = tp.reshape(go, (b, s, heads, hd))
    go = tp.op("aten::transpose.int", [go], tp.view(go, (b, heads, s, hd),
                                                    (s * d, hd, d, 1)), [1, 2])
    sv = blk.saved
    gq, gk, gv = tp.call("aten::_scaled_dot_product_efficient_attention_backward",
                         [go, sv["q"], sv["k"], sv["v"], sv["out"], sv["lse"], sv["seed"],
                          sv["offset"]],
                         [tp.new((b, heads, s, hd), g.dtype) for _ in range(3)],
                         [f64(0.0), 1, 1, 1, 1])
    back = [tp.op("aten::transpose.int", [t], tp.view(t, (b, s, heads, hd),
                                                      (heads * s * hd, hd, s * hd, 1)), [1, 2])
            for t in (gq, gk, gv)]
    cat = tp.op("aten::cat", back, tp.new((b, s, 3 * heads, hd), g.dtype), [2])
    gy = linear_backward(tp, blk.qkv, tp.reshape(cat, (b, s, 3 * d)), grads)
    return add(tp, g_mid, layer_norm_backward(tp, blk.ln1, gy, grads))


def transformer(tp: Tape, rng: np.random.Generator, layers: int = 2) -> None:
    """A GPT: token and position embeddings, `layers` pre-norm blocks with fused attention, a
    tied head, cross-entropy, AdamW: 408 ops with 2 blocks."""
    batch, seq, d, vocab = (int(rng.choice(c)) for c in
                            ([4, 8], [128, 256], [256, 384, 512], [8192, 16384, 32000]))
    dtype, heads, max_pos = int(rng.choice([FLOAT, BF16])), d // 64, 1024
    wte, wpe = tp.param((vocab, d), dtype), tp.param((max_pos, d), dtype)

    def lin(i: int, o: int) -> Linear:
        return Linear(tp.param((o, i), dtype), tp.param((o,), dtype))

    def norm() -> Norm:
        return Norm(tp.param((d,), dtype), tp.param((d,), dtype))

    blocks = [Block(norm(), lin(d, 3 * d), lin(d, d), norm(), lin(d, 4 * d), lin(4 * d, d))
              for _ in range(layers)]
    ln_f = norm()
    tp.scope = "<root>"
    tok, tgt = start(tp, [tp.host((batch, seq), LONG), tp.host((batch, seq), LONG)])
    tp.call("aten::sym_constrain_range_for_size", [], [], [seq, 0, max_pos])
    pos = tp.op("aten::arange", [], tp.new((seq,), LONG), [seq])
    tp.scope = "transformer.wte"
    x = tp.op("aten::embedding", [wte, tok], tp.new((batch, seq, d), dtype), [-1, 0, 0])
    tp.scope = "transformer.wpe"
    h = add(tp, x, tp.op("aten::embedding", [wpe, pos], tp.new((seq, d), dtype), [-1, 0, 0]))
    for k, blk in enumerate(blocks):
        tp.scope = f"transformer.h.{k}"
        h = block(tp, blk, h, heads)
    tp.scope = "transformer.ln_f"
    y2 = tp.reshape(layer_norm(tp, ln_f, h), (batch * seq, d))
    tp.scope = "lm_head"
    wt = tp.t(wte)
    logits = tp.op("aten::mm", [y2, wt], tp.new((batch * seq, vocab), dtype))
    logp = tp.op("aten::_log_softmax", [logits], tp.new(logits.sizes, dtype), [1, 0])
    tv = tp.reshape(tgt, (batch * seq,))
    loss, total = tp.call("aten::nll_loss_forward", [logp, tv],
                          [tp.new((), dtype), tp.new((), dtype)], [1, -100])
    tp.phase = BACKWARD
    grads: dict[int, Tensor] = {}
    g = tp.op("aten::ones_like", [loss], tp.new((), dtype), [0, 1])
    g = tp.op("aten::nll_loss_backward", [g, logp, tv, total], tp.new(logp.sizes, dtype),
              [1, -100])
    g = tp.op("aten::_log_softmax_backward_data", [g, logp], tp.new(logp.sizes, dtype),
              [1, dtype])
    gy = tp.op("aten::mm", [g, tp.t(wt)], tp.new((batch * seq, d), dtype))
    g_head = tp.t(tp.op("aten::mm", [tp.t(y2), g], tp.new((d, vocab), dtype)))
    g = layer_norm_backward(tp, ln_f, tp.reshape(gy, (batch, seq, d)), grads)
    for blk in reversed(blocks):
        g = block_backward(tp, blk, g, grads, heads)
    gp = tp.op("aten::sum.dim_IntList", [g], tp.new((seq, d), dtype), [0, 0])
    grads[wpe.base] = tp.op("aten::embedding_dense_backward", [gp, pos],
                            tp.new(wpe.sizes, dtype), [max_pos, -1, 0])
    g_emb = tp.op("aten::embedding_dense_backward", [g, tok], tp.new(wte.sizes, dtype),
                  [vocab, -1, 0])
    grads[wte.base] = add(tp, g_head, g_emb)
    tp.phase = OPTIMIZER
    params = [wte, wpe, *(t for blk in blocks for layer in (blk.ln1, blk.qkv, blk.proj,
                                                            blk.ln2, blk.fc, blk.out)
                          for t in (layer.w, layer.b)), ln_f.w, ln_f.b]
    for p in params:
        adamw(tp, p, grads[p.base])
    finish_step(tp, loss)


def adamw(tp: Tape, p: Tensor, g: Tensor, lr: float = 3e-4, wd: float = 0.1) -> None:
    """torch.optim.AdamW's single-tensor step (step 1's bias corrections): 8 ops."""
    m, v = tp.state(p), tp.state(p)
    tp.inplace("aten::mul_.Scalar", [p], [f64(1 - lr * wd)])
    tp.inplace("aten::lerp_.Scalar", [m, g], [f64(0.1)])
    tp.inplace("aten::mul_.Scalar", [v], [f64(0.999)])
    tp.inplace("aten::addcmul_", [v, g, g], [f64(0.001)])
    denom = tp.op("aten::sqrt", [v], tp.new(v.sizes, v.dtype))
    tp.inplace("aten::div_.Scalar", [denom], [f64(math.sqrt(0.001))])
    tp.inplace("aten::add_.Scalar", [denom], [f64(1e-8)])
    tp.inplace("aten::addcdiv_", [p, m, denom], [f64(-lr / 0.1)])


MODELS = {"mlp": mlp, "transformer": transformer}


@lru_cache(maxsize=8)
def iteration(shape: str, seed: int) -> Iteration:
    """One iteration of `shape` for `seed` (cached: callers copy, never modify)."""
    if shape not in MODELS:
        raise ValueError(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")
    rng = np.random.default_rng(seed)
    bases = tuple(int(b + (int(rng.integers(0, 1024)) << 21))
                  for b in (PARAM_BASE, HOST_BASE, ACT_BASE))
    tp = Tape(bases, int(rng.integers(0, 8)))
    MODELS[shape](tp, rng)
    return tp.finish()


def iteration_length(shape: str = "mlp", seed: int = 0) -> int:
    """L: the ops in one iteration of `shape`."""
    return len(iteration(shape, seed).entries)


def synthetic_trace(num_ops: int, shape: str = "mlp", seed: int = 0,
                    fresh_storages: bool = False) -> LoadedTrace:
    """num_ops ops of `shape`'s iteration repeated (the last one cut short), as a loaded trace;
    with fresh_storages, iteration k's activations move up by k activation spans."""
    if num_ops < 0:
        raise ValueError(f"num_ops must be >= 0, got {num_ops}")
    it = iteration(shape, seed)
    t = LoadedTrace(names=dict(it.names), callsite_hashes=[0] * num_ops)
    with gc_paused():
        t.entries, t.metas, t.scope_hashes = repeated(it, num_ops, fresh_storages)
    t.meta_starts = meta_starts_of([e["num_inputs"] + e["num_outputs"] for e in t.entries])
    return t


def repeated(it: Iteration, num_ops: int, fresh_storages: bool
             ) -> tuple[list[dict], list[dict], list[int]]:
    """Entries, metas and scope hashes of num_ops ops of `it` repeated: copies, sharing no
    list with `it`."""
    ends = np.cumsum([0] + [e["num_inputs"] + e["num_outputs"] for e in it.entries]).tolist()
    length = len(it.entries)
    entries: list[dict] = []
    metas: list[dict] = []
    scopes: list[int] = []
    for k in range(-(-num_ops // length)):
        ops = min(length, num_ops - k * length)
        shift = k * it.span if fresh_storages else 0
        entries += [e | {"scalar_values": e["scalar_values"][:]} for e in it.entries[:ops]]
        metas += [m | {"sizes": m["sizes"][:], "strides": m["strides"][:],
                       "data_ptr": m["data_ptr"] + (shift if mv else 0)}
                  for m, mv in zip(it.metas[:ends[ops]], it.moves, strict=False)]
        scopes += it.scope_hashes[:ops]
    return entries, metas, scopes


def schema_stream(num_ops: int, shape: str = "mlp", seed: int = 0) -> list[int]:
    """The schema hashes of synthetic_trace(num_ops, shape, seed), in op order."""
    hashes = [e["schema_hash"] for e in iteration(shape, seed).entries]
    return (hashes * -(-num_ops // len(hashes)))[:num_ops]
