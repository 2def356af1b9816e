"""Chapter 14: the op `expr.canon`: build an expression through a fresh ExprPool's
constructors and answer its canonical form.

1. A fresh pool of the given initial capacity is made (258 nodes), then the declared symbols
   in order (id: the declaration's position unless given).
2. The expression, a JSON s-expression, is walked iteratively (children left to right, then
   the parent): an integer is `integer(v)`, {"float": v} is `float_(v)`, true/false the two
   booleans, a string a declared symbol, and a list [name, args...] the constructor `name`
   ("add", "mul", "and", "or", "min", "max" of two operands are the binary constructors, of
   any other count the n-ary ones; ["make", op, args...] is `make` with an Op name or
   ordinal).
3. The answer: the canonical form (the same s-expression form, nodes written with their Op
   names in upper case), the nodes it reaches in creation order (op, flags, children, and
   the value, name or atom hash), the root's flags, the nodes the expression made, and the
   pool's intern_size and intern_capacity.
"""

from __future__ import annotations

from typing import Any

from ...core import shapes as js
from ...core.errors import InvalidInput
from ...core.registry import InvalidCase, declare
from ...core.schema import I64, U16, U32, Field, Json, record
from ...core.strategies import st
from .canon import MAX_SUM_TERMS
from .node import Op
from .pool import (
    DEFAULT_INITIAL_CAPACITY,
    NO_SYMBOL,
    ExprPool,
    Node,
)

MAX_DEPTH = 256
"""The deepest expression the op builds (it is walked without recursion)."""
MAX_ITEMS = 10000
"""The most s-expression items one request holds."""
MAX_CANON_ITEMS = 10000
"""A canonical form that would spell out more items (shared nodes repeat) is null."""
MAX_SYMBOLS = 64
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
BINARY = {"add": "add", "mul": "mul", "and": "and_", "or": "or_", "min": "min_expr",
          "max": "max_expr"}
N_ARY = {"add": "add_n", "mul": "mul_n", "and": "and_n", "or": "or_n", "min": "min_n",
         "max": "max_n", "add_n": "add_n", "mul_n": "mul_n", "and_n": "and_n",
         "or_n": "or_n", "min_n": "min_n", "max_n": "max_n"}
FIXED = {"pow": 2, "neg": 1, "eq": 2, "ne": 2, "lt": 2, "le": 2, "gt": 2, "ge": 2, "not": 1,
         "floor_div": 2, "clean_div": 2, "ceil_div": 2, "mod": 2, "python_mod": 2,
         "modular_indexing": 3, "where": 3}
FIXED_METHOD = {"not": "not_"}
ATOMS = {Op.INTEGER, Op.FLOAT, Op.SYMBOL, Op.BOOL_TRUE, Op.BOOL_FALSE}
VARIADIC = {Op.ADD: 0, Op.MUL: 0, Op.AND: 0, Op.OR: 0, Op.MIN: 1, Op.MAX: 1,
            Op.IS_NON_OVERLAPPING_AND_DENSE: 0}
"""Ops of any arity (at least the number given)."""
TERNARY = {Op.MODULAR_INDEXING, Op.WHERE}
BINARY_OPS = {Op.POW, Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.FLOOR_DIV, Op.CLEAN_DIV,
              Op.CEIL_DIV, Op.INT_TRUE_DIV, Op.FLOAT_TRUE_DIV, Op.MOD, Op.PYTHON_MOD,
              Op.ROUND_DECIMAL, Op.LSHIFT, Op.RSHIFT, Op.POW_BY_NATURAL, Op.FLOAT_POW,
              Op.BITWISE_AND, Op.BITWISE_OR, Op.BITWISE_XOR}


def make_arity(op: Op) -> tuple[int, int]:
    """(least, most) operands `make` takes for op (§3.1's arity column)."""
    if op in VARIADIC:
        return VARIADIC[op], 255
    if op in TERNARY:
        return 3, 3
    return (2, 2) if op in BINARY_OPS else (1, 1)


def op_of(w: Any, path: str) -> Op:
    """An Op named (either case) or numbered; atoms are refused (make builds none)."""
    if isinstance(w, str) and w.upper() in Op.__members__:
        op = Op[w.upper()]
    elif isinstance(w, int) and not isinstance(w, bool) and 0 <= w < Op.NUM_OPS:
        op = Op(w)
    else:
        raise InvalidInput(f"{path}: {w!r} is not an Op name or ordinal (0..59)")
    if op == Op.NUM_OPS or op in ATOMS:
        raise InvalidInput(f"{path}: make builds no {op.name} (write the atom itself)")
    return op


def declare_symbols(pool: ExprPool, symbols: list[dict]) -> dict[str, Node]:
    """Step 1: each declared symbol, in order."""
    if len(symbols) > MAX_SYMBOLS:
        raise InvalidInput(f"args.symbols: more than {MAX_SYMBOLS} symbols")
    out: dict[str, Node] = {}
    for i, s in enumerate(symbols):
        path = f"args.symbols[{i}]"
        name, flags, sid = s.get("name"), s.get("flags", 0), s.get("id", i)
        if not isinstance(name, str) or not name.isidentifier():
            raise InvalidInput(f"{path}.name: a symbol is named by an identifier")
        if name in out:
            raise InvalidInput(f"{path}.name: {name} is declared twice")
        if isinstance(flags, bool) or not isinstance(flags, int) or not 0 <= flags < 1 << 16:
            raise InvalidInput(f"{path}.flags: ExprFlags, an integer in 0..65535")
        if isinstance(sid, bool) or not isinstance(sid, int) or not 0 <= sid < NO_SYMBOL:
            raise InvalidInput(f"{path}.id: a SymbolId, an integer in 0..{NO_SYMBOL - 1}")
        out[name] = pool.symbol(name, sid, flags)
    return out


def atom(pool: ExprPool, w: Any, path: str, syms: dict[str, Node]) -> Node:
    """Step 2 for a leaf."""
    if isinstance(w, bool):
        return pool.boolean(w)
    if isinstance(w, int):
        if not I64_MIN <= w <= I64_MAX:
            raise InvalidInput(f"{path}: {w} is not an i64")
        return pool.integer(w)
    if isinstance(w, str):
        if w not in syms:
            raise InvalidInput(f"{path}: symbol {w!r} is not declared")
        return syms[w]
    if isinstance(w, dict) and set(w) == {"float"} and isinstance(w["float"], int | float) \
            and not isinstance(w["float"], bool):
        return pool.float_(float(w["float"]))
    raise InvalidInput(f"{path}: not an integer, {{\"float\": number}}, boolean, symbol or "
                       f"list (got {type(w).__name__} {w!r:.40})")


def apply(pool: ExprPool, head: Any, args: list[Node], path: str) -> Node:
    """Step 2 for a list: its constructor on the built operands."""
    n = len(args)
    if head in BINARY and n == 2:
        return getattr(pool, BINARY[head])(*args)
    if head in N_ARY:
        if head.startswith(("min", "max")) and n == 0:
            raise InvalidInput(f"{path}: {head} takes at least 1 operand")
        return getattr(pool, N_ARY[head])(args)
    if head in FIXED:
        if n != FIXED[head]:
            raise InvalidInput(f"{path}: {head} takes {FIXED[head]} operands, got {n}")
        return getattr(pool, FIXED_METHOD.get(head, head))(*args)
    raise InvalidInput(f"{path}[0]: {head!r} is not a constructor")


def build(pool: ExprPool, expr: Any, syms: dict[str, Node]) -> Node:
    """Step 2, without recursion: a stack of (item, path, depth, operands built?)."""
    stack: list[tuple[Any, str, int, bool]] = [(expr, "args.expr", 0, False)]
    built: list[Node] = []
    items = 0
    while stack:
        w, path, depth, ready = stack.pop()
        if not isinstance(w, list):
            built.append(atom(pool, w, path, syms))
            continue
        if not w:
            raise InvalidInput(f"{path}: an empty list names no constructor")
        head, first = w[0], 2 if w[0] == "make" else 1
        if ready:
            operands = built[len(built) - (len(w) - first):] if len(w) > first else []
            del built[len(built) - len(operands):]
            if head == "make":
                op = op_of(w[1], f"{path}[1]")
                lo, hi = make_arity(op)
                if not lo <= len(operands) <= hi:
                    raise InvalidInput(f"{path}: make {op.name} takes {lo}..{hi} operands, "
                                       f"got {len(operands)}")
                built.append(pool.make(op, operands))
            else:
                built.append(apply(pool, head, operands, path))
            continue
        if not isinstance(head, str):
            raise InvalidInput(f"{path}[0]: a constructor name, got {head!r:.40}")
        if head == "make":
            if len(w) < 2:
                raise InvalidInput(f"{path}[1]: make needs an Op")
            op_of(w[1], f"{path}[1]")
        items += len(w)
        if items > MAX_ITEMS:
            raise InvalidInput(f"args.expr: more than {MAX_ITEMS} items")
        if depth + 1 > MAX_DEPTH and len(w) > first:
            raise InvalidInput(f"{path}: the expression is deeper than {MAX_DEPTH}")
        if len(w) - first > MAX_SUM_TERMS + 1:
            raise InvalidInput(f"{path}: more than {MAX_SUM_TERMS + 1} operands")
        stack.append((w, path, depth, True))
        for i in range(len(w) - 1, first - 1, -1):
            stack.append((w[i], f"{path}[{i}]", depth + 1, False))
    return built[0]


# ── answer ────────────────────────────────────────────────────────────────────────────────────

def reachable(root: Node) -> list[Node]:
    """The nodes under root (itself included), in creation order."""
    seen, stack = {root.seq: root}, [root]
    while stack:
        for c in stack.pop().args:
            if c.seq not in seen:
                seen[c.seq] = c
                stack.append(c)
    return [seen[k] for k in sorted(seen)]


def node_wire(pool: ExprPool, n: Node, index: dict[int, int]) -> dict:
    """One node: op, flags, children (positions in the list), and what an atom holds."""
    out: dict[str, Any] = {"op": n.op.name, "flags": n.flags,
                           "args": [index[c.seq] for c in n.args]}
    if n.op == Op.INTEGER:
        out["value"] = n.payload
    elif n.op == Op.FLOAT:
        out["value"] = pool.float_value(n)
    elif n.op == Op.SYMBOL:
        out["name"], out["id"] = pool.symbol_names[n.symbol_id], n.symbol_id
    if n.op in ATOMS and n.op != Op.SYMBOL:
        out["hash"] = f"0x{pool.hash_of(n):016x}"
    return out


def leaf_wire(pool: ExprPool, n: Node) -> Any:
    if n.op == Op.INTEGER:
        return n.payload
    if n.op == Op.FLOAT:
        return {"float": pool.float_value(n)}
    if n.op == Op.SYMBOL:
        return pool.symbol_names[n.symbol_id]
    return n.op == Op.BOOL_TRUE


def canon_wire(pool: ExprPool, root: Node) -> Any:
    """The canonical s-expression, spelled out without recursion; None past MAX_CANON_ITEMS."""
    out: list = []
    stack: list[tuple[Node, list]] = [(root, out)]
    count = 0
    while stack:
        n, into = stack.pop()
        count += 1
        if count > MAX_CANON_ITEMS:
            return None
        if not n.args:
            into.append(leaf_wire(pool, n))
            continue
        form: list = [n.op.name]
        into.append(form)
        slots = [[] for _ in n.args]
        form.append(slots)
        for c, slot in zip(reversed(n.args), reversed(slots), strict=True):
            stack.append((c, slot))
    return unwrap(out[0])


def unwrap(form: Any) -> Any:
    """Replace each one-item operand slot by its item, without recursion."""
    if not isinstance(form, list):
        return form
    todo = [form]
    while todo:
        f = todo.pop()
        slots = f.pop()
        for s in slots:
            f.append(s[0])
            if isinstance(s[0], list):
                todo.append(s[0])
    return form


def canon_op(expr: Any, symbols: list[dict], initial_capacity: int,
             errata: frozenset[str] = frozenset()) -> dict:
    """Steps 1-3."""
    if not 1 <= initial_capacity <= 1 << 20:
        raise InvalidInput("args.initial_capacity: 1..1048576")
    pool = ExprPool(initial_capacity, errata)
    syms = declare_symbols(pool, symbols)
    before = pool.intern_size()
    root = build(pool, expr, syms)
    nodes = reachable(root)
    index = {n.seq: i for i, n in enumerate(nodes)}
    return {"canon": canon_wire(pool, root), "flags": root.flags,
            "nodes": [node_wire(pool, n, index) for n in nodes],
            "new_nodes": pool.intern_size() - before, "intern_size": pool.intern_size(),
            "intern_capacity": pool.intern_capacity()}


SYMBOLS = js.array(js.obj({"name": js.STRING}, {"flags": js.uint(16), "id": js.uint(32)}),
                   max_items=MAX_SYMBOLS)
NODE = js.obj({"op": js.STRING, "flags": js.uint(16), "args": js.array(js.uint(32))},
              {"value": js.ANY, "name": js.STRING, "id": js.uint(32), "hash": js.HEX64_OUT})


def _sym(name: str, flags: int = 0x082F) -> dict:
    return {"name": name, "flags": flags}


XY = [_sym("x"), _sym("y")]
"""Two integer, positive symbols declared first (the facts' vectors)."""
UNSIGNED_Z = [_sym("z", 0x0807)]
"""An integer symbol with no sign flag: it may be zero."""


def canon_args(expr: Any, symbols: list[dict] | None = None) -> dict:
    return {"expr": expr, "symbols": XY if symbols is None else symbols,
            "initial_capacity": DEFAULT_INITIAL_CAPACITY}


def canon_edges() -> list[dict]:
    """The facts' vectors that the errata and the identities hinge on."""
    sum4 = ["add", ["mul", 4, "x"], 8]
    return [canon_args(e) for e in (
        ["floor_div", sum4, 4], ["floor_div", sum4, -4], ["floor_div", 7, 0], ["mod", -7, 3],
        ["floor_div", ["add", ["mul", 4, "x"], "y"], -4], ["modular_indexing", 7, 0, 4],
        ["ceil_div", "x", "y"], ["make", "add", "x", "y", 3, "x"], ["neg", ["neg", "x"]],
        ["and", "x", ["and", "y", "x"]], ["pow", 3, 62], ["add", 9223372036854775807, 1],
        ["make", "sqrt", "x"], ["where", ["lt", "x", "y"], "x", "y"], True,
        {"float": -0.0})]


def canon_domain() -> st.SearchStrategy:
    """Random expressions over x, y and small integers."""
    leaves = st.integers(-9, 9) | st.sampled_from(["x", "y"])
    names = st.sampled_from(["add", "mul", "floor_div", "ceil_div", "mod", "python_mod",
                             "min", "max", "pow"])

    def grow(children: st.SearchStrategy) -> st.SearchStrategy:
        return st.tuples(names, children, children).map(list) | \
            st.tuples(st.just("neg"), children).map(list) | \
            st.tuples(st.just("modular_indexing"), children, children, children).map(list)

    return st.recursive(leaves, grow, max_leaves=12).map(canon_args)


declare(
    "expr.canon", chapter=14,
    summary="Build an s-expression through a fresh ExprPool's constructors: its canonical "
            "form, the nodes it reaches, and the intern counts.",
    args=record(expr=Field(Json("s-expression", js.ANY), "the expression: integer, "
                           "{float}, boolean, symbol name, or [constructor, operands...]"),
                symbols=Field(Json("[{name, flags, id?}]", SYMBOLS),
                              "symbols declared in order", []),
                initial_capacity=Field(U32, "the pool's initial_capacity",
                                       DEFAULT_INITIAL_CAPACITY)),
    result=record(canon=Json("s-expression", js.ANY),
                  flags=Field(U16, "ExprFlags of the root"),
                  nodes=Json("[{op, flags, args, value?, name?, id?, hash?}]", js.array(NODE)),
                  new_nodes=Field(I64, "nodes the expression interned"),
                  intern_size=Field(U32, "intern_size() afterwards"),
                  intern_capacity=Field(U32, "intern_capacity() afterwards")),
    spec=(canon_op, build, ExprPool.add, ExprPool.floor_div, ExprPool.mod),
    errata=("E14.501", "E14.502", "E14.503", "E14.504", "E14.505", "E14.550", "E14.551", "E14.552"),
    edges=canon_edges, domain=canon_domain,
    invalid=(InvalidCase("an undeclared symbol", lambda: st.just(canon_args(["add", "z", 1]))),
             InvalidCase("an unknown constructor", lambda: st.just(canon_args(["frob", 1]))),
             InvalidCase("an unknown Op ordinal", lambda: st.just(canon_args(["make", 77, 1]))),
             InvalidCase("a wrong arity", lambda: st.just(canon_args(["floor_div", 1]))),
             InvalidCase("a non-integer payload", lambda: st.just(canon_args(["add", 1.5, 1]))),
             InvalidCase("an expression 300 deep", lambda: st.just(
                 canon_args(nested(300))))),
    not_applicable={"numba": "interning chases pointers through a hash table of nodes: no "
                             "array-shaped numeric core",
                    "cupy": "each constructor depends on every node interned before it"},
)


def nested(depth: int) -> list:
    """["neg", ["neg", ... "x" ...]] `depth` deep, built without recursion."""
    e: Any = "x"
    for _ in range(depth):
        e = ["neg", e]
    return e
