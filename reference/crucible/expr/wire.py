"""Reference for `expr.canon`, its wire half: the s-expression walked on an explicit stack
through the plain pool of reference/crucible/expr/ops.py, and the answer written from it."""

from __future__ import annotations

from typing import Any

from ....spec.core.errors import InvalidInput
from ....spec.core.registry import reference
from .ops import ANY_ARGS, NAMES, ONE_ARG, THREE_ARGS, Pool, hash_of

FIXED = {"pow": 2, "neg": 1, "eq": 2, "ne": 2, "lt": 2, "le": 2, "gt": 2, "ge": 2, "not": 1,
         "floor_div": 2, "clean_div": 2, "ceil_div": 2, "mod": 2, "python_mod": 2,
         "modular_indexing": 3, "where": 3}
SPREAD = {"add", "mul", "and", "or", "min", "max"}


def construct(p: Pool, head: str, xs: list[int], path: str) -> int:
    """The constructor `head` on the built operands."""
    base = head[:-2] if head.endswith("_n") and head[:-2] in SPREAD else head
    if base in SPREAD:
        two = len(xs) == 2 and head == base
        if base in ("min", "max") and not xs:
            raise InvalidInput(f"{path}: {head} takes at least 1 operand")
        if base == "add":
            return p.add(*xs) if two else p.add_n(xs)
        if base == "mul":
            return p.mul(*xs) if two else p.mul_n(xs)
        if base in ("and", "or"):
            return p.logic(base.upper(), xs, binary=two)
        return p.min2(*xs, op=base.upper()) if two else p.minmax(base.upper(), xs)
    if head not in FIXED:
        raise InvalidInput(f"{path}[0]: {head!r} is not a constructor")
    if len(xs) != FIXED[head]:
        raise InvalidInput(f"{path}: {head} takes {FIXED[head]} operands")
    return make(p, head.upper(), xs)


def make(p: Pool, op: str, xs: list[int]) -> int:
    """ExprPool::make: the constructor of op, or the node as given."""
    table = {"POW": p.pow, "NEG": p.neg, "NOT": p.not_, "FLOOR_DIV": p.floor_div,
             "CLEAN_DIV": p.floor_div, "CEIL_DIV": p.ceil_div, "MODULAR_INDEXING": p.mod_index,
             "WHERE": p.where, "MOD": lambda a, b: p.mods("MOD", a, b),
             "PYTHON_MOD": lambda a, b: p.mods("PYTHON_MOD", a, b)}
    if op in table:
        return table[op](*xs)
    if op in ("EQ", "NE", "LT", "LE", "GT", "GE"):
        return p.rel(op, *xs)
    if op in ("ADD", "MUL", "AND", "OR", "MIN", "MAX"):
        return construct(p, op.lower() + "_n", xs, "args.expr")
    return p.generic(op, xs)


def make_op(w: Any, path: str) -> str:
    if isinstance(w, str) and w.upper() in NAMES:
        op = w.upper()
    elif isinstance(w, int) and not isinstance(w, bool) and 0 <= w < len(NAMES):
        op = NAMES[w]
    else:
        raise InvalidInput(f"{path}: {w!r} is not an Op")
    if NAMES.index(op) <= 4:
        raise InvalidInput(f"{path}: make builds no atom")
    return op


def leaf(p: Pool, w: Any, path: str, syms: dict[str, int]) -> int:
    if isinstance(w, bool):
        return p.T if w else p.F
    if isinstance(w, int) and -2**63 <= w < 2**63:
        return p.num(w)
    if isinstance(w, str) and w in syms:
        return syms[w]
    if isinstance(w, dict) and list(w) == ["float"] and type(w["float"]) in (int, float):
        return p.fl(float(w["float"]))
    raise InvalidInput(f"{path}: {w!r:.40} is not an expression")


def evaluate(p: Pool, expr: Any, syms: dict[str, int]) -> int:
    """Post-order over an explicit stack; depth at most 256, at most 10000 items."""
    todo: list = [("visit", expr, "args.expr", 0)]
    done: list[int] = []
    seen = 0
    while todo:
        kind, w, path, depth = todo.pop()
        if kind == "visit" and not isinstance(w, list):
            done.append(leaf(p, w, path, syms))
            continue
        if not w or not isinstance(w[0], str):
            raise InvalidInput(f"{path}: a list starts with a constructor name")
        skip = 2 if w[0] == "make" else 1
        if kind == "visit":
            if skip == 2 and len(w) < 2:
                raise InvalidInput(f"{path}: make needs an Op")
            op = make_op(w[1], f"{path}[1]") if skip == 2 else ""
            seen += len(w)
            if seen > 10000 or (depth >= 256 and len(w) > skip) or len(w) - skip > 255:
                raise InvalidInput(f"{path}: the expression is too large or too deep")
            todo.append(("apply", w, path, depth))
            todo.extend(("visit", w[i], f"{path}[{i}]", depth + 1)
                        for i in range(len(w) - 1, skip - 1, -1))
            continue
        n = len(w) - skip
        xs = done[len(done) - n:] if n else []
        del done[len(done) - n:]
        if skip == 2:
            op = make_op(w[1], path)
            lo, hi = (ANY_ARGS[op], 255) if op in ANY_ARGS else \
                (3, 3) if op in THREE_ARGS else (1, 1) if op in ONE_ARG else (2, 2)
            if not lo <= n <= hi:
                raise InvalidInput(f"{path}: make {op} takes {lo}..{hi} operands")
            done.append(make(p, op, xs))
        else:
            done.append(construct(p, w[0], xs, path))
    return done[0]


def show(p: Pool, root: int) -> Any:
    """The canonical s-expression, or None past 10000 items."""
    memo: dict[int, Any] = {}
    size: dict[int, int] = {}
    order = sorted(reach(p, root))
    for n in order:
        op, kids, _, value, sym = p.nodes[n]
        size[n] = 1 + sum(size[k] for k in kids)
        if size[n] > 10000:
            memo[n] = None
        elif op == "INTEGER":
            memo[n] = value
        elif op == "FLOAT":
            memo[n] = {"float": p.fval(n)}
        elif op == "SYMBOL":
            memo[n] = p.names[sym]
        elif not kids:
            memo[n] = op == "BOOL_TRUE"
        else:
            memo[n] = [op, *(memo[k] for k in kids)]
    return memo[root] if size[root] <= 10000 else None


def reach(p: Pool, root: int) -> set[int]:
    out, todo = {root}, [root]
    while todo:
        for k in p.kids(todo.pop()):
            if k not in out:
                out.add(k)
                todo.append(k)
    return out


@reference("expr.canon")
def expr_canon(expr: Any, symbols: list[dict], initial_capacity: int,
               errata: frozenset[str] = frozenset()) -> dict:
    if not 1 <= initial_capacity <= 1 << 20:
        raise InvalidInput("args.initial_capacity: 1..1048576")
    p = Pool(initial_capacity, errata)
    syms: dict[str, int] = {}
    if len(symbols) > 64:
        raise InvalidInput("args.symbols: more than 64")
    for i, s in enumerate(symbols):
        name, flags, sid = s.get("name"), s.get("flags", 0), s.get("id", i)
        if not isinstance(name, str) or not name.isidentifier() or name in syms:
            raise InvalidInput(f"args.symbols[{i}].name: a new identifier")
        if type(flags) is not int or not 0 <= flags <= 0xFFFF:
            raise InvalidInput(f"args.symbols[{i}].flags: 0..65535")
        if type(sid) is not int or not 0 <= sid < 0xFFFFFFFF:
            raise InvalidInput(f"args.symbols[{i}].id: a SymbolId")
        p.names.setdefault(sid, name)
        syms[name] = p.node("SYMBOL", (), flags | 0x800, 0, sid)
    before = len(p.nodes)
    root = evaluate(p, expr, syms)
    order = sorted(reach(p, root))
    pos = {n: i for i, n in enumerate(order)}
    nodes = []
    for n in order:
        op, kids, flags, value, sym = p.nodes[n]
        d: dict[str, Any] = {"op": op, "flags": flags, "args": [pos[k] for k in kids]}
        if op == "INTEGER":
            d["value"] = value
        if op == "FLOAT":
            d["value"] = p.fval(n)
        if op == "SYMBOL":
            d["name"], d["id"] = p.names[sym], sym
        elif not kids and op in NAMES[:5]:
            d["hash"] = f"0x{hash_of(NAMES.index(op), value, sym, flags):016x}"
        nodes.append(d)
    return {"canon": show(p, root), "flags": p.flags(root), "nodes": nodes,
            "new_nodes": len(p.nodes) - before, "intern_size": len(p.nodes),
            "intern_capacity": p.cap}
