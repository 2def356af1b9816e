"""Chapter 14: SympleX's tensor-expression language (FusionLang, rust-engine fusion_engine.rs)
and its reference evaluator.

1. A term is a symbol (a name with a shape and a dtype), a constant (a scalar), or an op over
   terms. The ops are FusionLang's (add, mul, sub, div, matmul, max, min; relu, gelu, sigmoid,
   tanh, silu, neg, exp, abs, sqrt, rsqrt; layernorm, rmsnorm; reducesum, reducemax) plus
   transpose, softmax and reducemean (which the decomposition rules need), and the two fused
   forms the fusion rules introduce.
2. Wire form: nested JSON, {"op": name, "args": [...]} (a reduction adds "axis"),
   {"sym": name, "shape": [...], "dtype": "f32"} and {"const": number}. A symbol's shape and
   dtype are the same wherever it appears.
3. Shapes: elementwise ops broadcast as numpy does; matmul takes two rank-2 tensors with equal
   inner dimensions; transpose takes rank 2; a reduction keeps its axis (length 1); layernorm,
   rmsnorm and softmax normalize the last axis and broadcast scale and bias to x. Operands
   share one dtype; a constant takes its partner's. A term that breaks a rule is
   `invalid_input` naming its path (`term.args[1].args[0]`).
4. Evaluation: every tensor is read as float64 and every op computed in float64. matmul and
   reducesum accumulate in increasing index order from +0.0, one term at a time; reducemax
   keeps NaN; reducemean is reducesum divided by the axis length. exp and tanh are the C
   library's, element by element (numpy's vector forms round differently on CPUs with
   AVX-512, so an answer would depend on the machine). The definitions of the composite ops
   are those of the decomposition rules, so they hold bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import InvalidInput

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}
"""The dtypes a symbol may have and the bytes of one element."""
NORM_EPS = 1e-5
"""The epsilon of layernorm and rmsnorm (FusionLang states none; the spec fixes PyTorch's)."""
BINARY = ("add", "mul", "sub", "div", "max", "min")
UNARY = ("relu", "gelu", "sigmoid", "tanh", "silu", "neg", "exp", "abs", "sqrt", "rsqrt",
         "transpose", "softmax")
NORMS = ("layernorm", "rmsnorm")
REDUCTIONS = ("reducesum", "reducemax", "reducemean")
FUSED = ("fused_matmul_relu", "fused_matmul_add")
ARITY = {**{o: 2 for o in BINARY}, "matmul": 2, **{o: 1 for o in UNARY},
         **{o: 3 for o in NORMS}, **{o: 1 for o in REDUCTIONS}, "fused_matmul_relu": 2,
         "fused_matmul_add": 3}
"""Every op of the language and its number of tensor operands."""
MAX_DEPTH = 64
MAX_RANK = 4


@dataclass(frozen=True)
class Sym:
    name: str
    shape: tuple[int, ...]
    dtype: str = "f32"


@dataclass(frozen=True)
class Const:
    value: float


@dataclass(frozen=True)
class Op:
    """An op applied to its operands; `axis` only for a reduction."""

    op: str
    args: tuple
    axis: int | None = None


Term = Sym | Const | Op


@dataclass(frozen=True)
class Ty:
    """A term's shape and dtype; dtype None for a bare constant (it takes its partner's)."""

    shape: tuple[int, ...]
    dtype: str | None


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy's broadcast of two shapes, or None when they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y) if 1 in (x, y) else x)
    return tuple(reversed(out))


def _dtype(types: list[Ty]) -> str | bool | None:
    """The operands' common dtype (None: all constants), False when two differ."""
    seen = {t.dtype for t in types if t.dtype is not None}
    return False if len(seen) > 1 else (seen.pop() if seen else None)


def type_of(op: str, types: list[Ty], axis: int | None = None) -> Ty | str:
    """The type of `op` over operand types (step 3), or the reason it is ill-typed."""
    dt = _dtype(types)
    if dt is False:
        return f"{op} mixes dtypes {sorted({t.dtype for t in types if t.dtype})}"
    shapes = [t.shape for t in types]
    if op in ("matmul", "fused_matmul_relu", "fused_matmul_add"):
        a, b = shapes[0], shapes[1]
        if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            return f"{op} needs [m, k] @ [k, n], got {list(a)} @ {list(b)}"
        out = (a[0], b[1])
        if op == "fused_matmul_add":
            out = broadcast(out, shapes[2])
            if out != (a[0], b[1]):
                return f"{op}'s bias {list(shapes[2])} does not broadcast to {[a[0], b[1]]}"
        return Ty(out, dt)
    if op == "transpose":
        if len(shapes[0]) != 2:
            return f"transpose needs rank 2, got {list(shapes[0])}"
        return Ty(shapes[0][::-1], dt)
    if op in REDUCTIONS:
        rank = len(shapes[0])
        if axis is None or not -rank <= axis < rank:
            return f"{op} axis {axis} is outside rank {rank}"
        out = list(shapes[0])
        out[axis] = 1
        return Ty(tuple(out), dt)
    if op in NORMS or op == "softmax":
        if not shapes[0]:
            return f"{op} needs rank >= 1"
        if any(broadcast(shapes[0], s) != shapes[0] for s in shapes[1:]):
            return f"{op}'s scale and bias must broadcast to x's {list(shapes[0])}"
        return Ty(shapes[0], dt)
    out = shapes[0]
    for s in shapes[1:]:
        out = broadcast(out, s)
        if out is None:
            return f"{op} cannot broadcast {[list(x) for x in shapes]}"
    return Ty(out, dt)


def check_term(t: Term, path: str = "term") -> Ty:
    """The term's type; InvalidInput naming the path of the first ill-typed subterm."""
    if isinstance(t, Sym):
        return Ty(t.shape, t.dtype)
    if isinstance(t, Const):
        return Ty((), None)
    ty = type_of(t.op, [check_term(a, f"{path}.args[{i}]") for i, a in enumerate(t.args)],
                 t.axis)
    if isinstance(ty, str):
        raise InvalidInput(f"{path}: {ty}")
    return ty


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

def _wire_sym(w: dict, path: str, syms: dict[str, Sym]) -> Sym:
    name, shape, dtype = w["sym"], w.get("shape"), w.get("dtype", "f32")
    unknown = sorted(set(w) - {"sym", "shape", "dtype"})
    if unknown:
        raise InvalidInput(f"{path}: unknown field {unknown[0]!r}")
    if not isinstance(name, str) or not name or not name.isidentifier():
        raise InvalidInput(f"{path}.sym: a symbol is named by an identifier, got {name!r}")
    if not isinstance(shape, list) or len(shape) > MAX_RANK or \
            not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 4096
                    for d in shape):
        raise InvalidInput(f"{path}.shape: a list of at most {MAX_RANK} dimensions in 1..4096")
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise InvalidInput(f"{path}.dtype: {dtype!r} is not one of {sorted(DTYPE_BYTES)}")
    s = Sym(name, tuple(shape), dtype)
    if syms.setdefault(name, s) != s:
        raise InvalidInput(f"{path}: symbol {name} was declared as "
                           f"{list(syms[name].shape)} {syms[name].dtype}")
    return s


def _parse(w, path: str, syms: dict[str, Sym], depth: int) -> Term:
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{path}: the term is deeper than {MAX_DEPTH}")
    if not isinstance(w, dict):
        raise InvalidInput(f"{path}: a term is an object, got {type(w).__name__}")
    if "sym" in w:
        return _wire_sym(w, path, syms)
    if "const" in w:
        v = w["const"]
        if set(w) != {"const"} or isinstance(v, bool) or not isinstance(v, int | float) \
                or not math.isfinite(v):
            raise InvalidInput(f"{path}.const: a finite number")
        return Const(float(v))
    op, args = w.get("op"), w.get("args")
    if not isinstance(op, str) or op not in ARITY:
        raise InvalidInput(f"{path}.op: {op!r} is not an op of the language")
    if not isinstance(args, list) or len(args) != ARITY[op]:
        raise InvalidInput(f"{path}.args: {op} takes {ARITY[op]} operands")
    if set(w) - {"op", "args", "axis"} or (("axis" in w) != (op in REDUCTIONS)):
        raise InvalidInput(f"{path}: {op} takes {'an' if op in REDUCTIONS else 'no'} axis")
    axis = w.get("axis")
    if op in REDUCTIONS and (isinstance(axis, bool) or not isinstance(axis, int)):
        raise InvalidInput(f"{path}.axis: an integer")
    return Op(op, tuple(_parse(a, f"{path}.args[{i}]", syms, depth + 1)
                        for i, a in enumerate(args)), axis)


def term_from_wire(w, path: str = "term") -> Term:
    """Parse and type-check a wire term (steps 2-3)."""
    t = _parse(w, path, {}, 0)
    check_term(t, path)
    return t


def term_to_wire(t: Term) -> dict:
    if isinstance(t, Sym):
        return {"sym": t.name, "shape": list(t.shape), "dtype": t.dtype}
    if isinstance(t, Const):
        return {"const": t.value}
    out = {"op": t.op, "args": [term_to_wire(a) for a in t.args]}
    return out | ({"axis": t.axis} if t.axis is not None else {})


def symbols(t: Term) -> dict[str, Sym]:
    """The term's symbols by name."""
    if isinstance(t, Sym):
        return {t.name: t}
    if isinstance(t, Const):
        return {}
    return {k: v for a in t.args for k, v in symbols(a).items()}


def term_size(t: Term) -> int:
    """The number of nodes of the term as a tree."""
    return 1 + sum(term_size(a) for a in t.args) if isinstance(t, Op) else 1


# ── evaluation (step 4) ───────────────────────────────────────────────────────────────────────

def seq_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b accumulated over k = 0, 1, ... from +0.0."""
    acc = np.zeros((a.shape[0], b.shape[1]))
    for k in range(a.shape[1]):
        acc = acc + a[:, k:k + 1] * b[k:k + 1, :]
    return acc


def seq_sum(x: np.ndarray, axis: int) -> np.ndarray:
    """The sum along `axis` (kept, length 1) in increasing index order from +0.0."""
    acc = np.zeros_like(np.take(x, [0], axis=axis))
    for i in range(x.shape[axis]):
        acc = acc + np.take(x, [i], axis=axis)
    return acc


def _libm_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


_exp = np.frompyfunc(_libm_exp, 1, 1)
_tanh = np.frompyfunc(math.tanh, 1, 1)


def exp(x: np.ndarray) -> np.ndarray:
    """e^x element by element, by the C library (+inf past the largest double)."""
    return np.asarray(_exp(x), dtype=np.float64)


def tanh(x: np.ndarray) -> np.ndarray:
    """tanh element by element, by the C library."""
    return np.asarray(_tanh(x), dtype=np.float64)


def _mean(x: np.ndarray) -> np.ndarray:
    return seq_sum(x, -1) / x.shape[-1]


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + exp(-x))


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU's tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def _layernorm(x, scale, bias):
    d = x - _mean(x)
    return d * _rsqrt(_mean(d * d) + NORM_EPS) * scale + bias


def _rmsnorm(x, scale, bias):
    return x * _rsqrt(_mean(x * x) + NORM_EPS) * scale + bias


def _softmax(x):
    e = exp(x - np.max(x, axis=-1, keepdims=True))
    return e / seq_sum(e, -1)


KERNELS = {
    "add": np.add, "mul": np.multiply, "sub": np.subtract, "div": np.divide,
    "max": np.maximum, "min": np.minimum, "matmul": seq_matmul,
    "relu": lambda x: np.maximum(x, 0.0), "gelu": _gelu, "sigmoid": _sigmoid, "tanh": tanh,
    "silu": lambda x: x * _sigmoid(x), "neg": np.negative, "exp": exp, "abs": np.abs,
    "sqrt": np.sqrt, "rsqrt": _rsqrt, "transpose": np.transpose, "softmax": _softmax,
    "layernorm": _layernorm, "rmsnorm": _rmsnorm,
    "fused_matmul_relu": lambda a, b: np.maximum(seq_matmul(a, b), 0.0),
    "fused_matmul_add": lambda a, b, c: seq_matmul(a, b) + c,
}
"""Each op's float64 definition (step 4)."""


def evaluate(t: Term, env: dict[str, np.ndarray]) -> np.ndarray:
    """The term's value with each symbol bound in `env` (float64 arrays of its shape)."""
    if isinstance(t, Sym):
        return np.asarray(env[t.name], dtype=np.float64)
    if isinstance(t, Const):
        return np.float64(t.value)
    xs = [evaluate(a, env) for a in t.args]
    with np.errstate(all="ignore"):
        if t.op == "reducesum":
            return seq_sum(xs[0], t.axis)
        if t.op == "reducemean":
            return seq_sum(xs[0], t.axis) / xs[0].shape[t.axis]
        if t.op == "reducemax":
            return np.max(xs[0], axis=t.axis, keepdims=True)
        return np.asarray(KERNELS[t.op](*xs), dtype=np.float64)
