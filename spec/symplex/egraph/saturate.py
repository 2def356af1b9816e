"""Chapter 14: equality saturation on egglog and extraction of the cheapest term.

1. Every rule asked for is checked first (spec/symplex/egraph/rules.py); a rule that is not `sound`
or
   a `definition` refuses the whole run.
2. The term and the rules become an egglog program: one constructor per op (a reduction's
   axis is an i64 field, a symbol and a constant are named by a string: the constant's
   shortest float repr), one `rewrite` per rule, the term bound to `$root`.
3. Saturation runs one egglog iteration at a time (SympleX's egg runner: 30 iterations, 10,000
   nodes). It stops as `saturated` when an iteration changes nothing, `node_limit` when the
   e-graph has more than the node limit after an iteration, `iteration_limit` after the
   iteration limit. nodes and classes are the e-graph's e-nodes and e-classes of terms.
4. Types: each e-class's shape and dtype is the first an e-node of it yields from its operands'
   (a least fixpoint). An e-node whose operands do not type-check, or whose type differs from
   its class's, is not extracted (matmul-dist may build A@C for a C that only broadcasts).
5. Extraction is an exact dynamic program over the e-graph, not egglog's extractor (whose
   costs are per constructor, while ours depend on shapes): best(c) = min over c's e-nodes n of
   node_cost(n) + sum of best(child), to its least fixpoint by a worklist (an e-node is looked
   at again when one of its operand classes gets cheaper). Every op costs > 0, so the chosen
   e-nodes form no cycle; of two e-nodes of equal cost the one that reached it first is kept.
   This is the minimum tree cost.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from ...core.optional import load
from ..tensor_expr import ARITY, REDUCTIONS, Const, Op, Sym, Term, Ty, check_term, symbols, type_of
from .cost import node_cost, term_cost
from .patterns import Var, parse_pattern
from .rules import Rule, require_usable

SYMPLEX_ITERATIONS = 30
SYMPLEX_NODES = 10_000
CTOR = {op: "".join(w.title() for w in op.split("_")) for op in ARITY}
"""Each op's egglog constructor."""
OP_OF = {c: op for op, c in CTOR.items()}


@dataclass(frozen=True)
class Limits:
    iterations: int = SYMPLEX_ITERATIONS
    nodes: int = SYMPLEX_NODES


@dataclass(frozen=True)
class Saturation:
    term: Term
    cost: int
    input_cost: int
    nodes: int
    classes: int
    iterations: int
    stop_reason: str


def _egg(t, var=lambda name: f"v_{name}") -> str:
    """Step 2: a term or pattern as egglog text."""
    if isinstance(t, Var):
        return var(t.name)
    if isinstance(t, Sym):
        return f'(Sym "{t.name}")'
    if isinstance(t, Const):
        return f'(Num "{t.value!r}")'
    axis = f" {t.axis}" if t.axis is not None else ""
    return f"({CTOR[t.op]} {' '.join(_egg(a, var) for a in t.args)}{axis})"


def program(term: Term, rules: list[Rule]) -> str:
    """Step 2."""
    ctors = " ".join(f"({CTOR[op]} {' '.join(['T'] * n)}{' i64' if op in REDUCTIONS else ''})"
                     for op, n in ARITY.items())
    lines = [f"(datatype T (Sym String) (Num String) {ctors})"]
    lines += [f"(rewrite {_egg(parse_pattern(r.lhs))} {_egg(parse_pattern(r.rhs))})"
              for r in rules]
    return "\n".join([*lines, f"(let $root {_egg(term)})"])


def _run(eg: Any, text: str) -> list:
    return eg.run_program(*eg.parse_program(text))


def _size(eg: Any) -> int:
    return sum(n for _, n in _run(eg, "(print-size)")[0].sizes)


def saturate_graph(term: Term, rules: list[Rule], limits: Limits) -> tuple[dict, int, str]:
    """Step 3: the serialized e-graph, the iterations run and why it stopped. egglog is
    imported here, not at load: its import starts a thread, and a process forked after that
    (the prover's workers) hangs in egglog."""
    eg = load("egglog.bindings").EGraph()
    _run(eg, program(term, rules))
    iterations, reason = 0, "iteration_limit"
    while iterations < limits.iterations:
        if _size(eg) > limits.nodes:
            reason = "node_limit"
            break
        updated = _run(eg, "(run 1)")[0].report.updated
        iterations += 1
        if not updated:
            reason = "saturated"
            break
    else:
        if _size(eg) > limits.nodes:
            reason = "node_limit"
    return json.loads(eg.serialize([]).to_json()), iterations, reason


@dataclass(frozen=True)
class ENode:
    op: str
    children: tuple[str, ...]
    """e-class ids of the term operands."""
    literal: str | None
    """A symbol's name, a constant's repr or a reduction's axis."""


def enodes(graph: dict) -> tuple[dict[str, list[ENode]], str]:
    """The term e-classes and their e-nodes, and the root's class."""
    nodes = graph["nodes"]
    classes: dict[str, list[ENode]] = {}
    for n in nodes.values():
        if n["op"] not in OP_OF and n["op"] not in ("Sym", "Num"):
            continue
        kids = [nodes[c] for c in n["children"]]
        lits = [k["op"] for k in kids if not k["eclass"].startswith("T-")]
        classes.setdefault(n["eclass"], []).append(ENode(
            n["op"], tuple(k["eclass"] for k in kids if k["eclass"].startswith("T-")),
            lits[0].strip('"') if lits else None))
    root = next(c for c, d in graph["class_data"].items() if d.get("let") == "$root")
    return classes, root


def _node_type(n: ENode, types: dict[str, Ty], syms: dict[str, Sym]) -> Ty | None:
    if n.op == "Sym":
        s = syms[n.literal]
        return Ty(s.shape, s.dtype)
    if n.op == "Num":
        return Ty((), None)
    if any(c not in types for c in n.children):
        return None
    op = OP_OF[n.op]
    ty = type_of(op, [types[c] for c in n.children], int(n.literal) if op in REDUCTIONS else None)
    return ty if isinstance(ty, Ty) else None


def class_types(classes: dict[str, list[ENode]], syms: dict[str, Sym]) -> dict[str, Ty]:
    """Step 4."""
    types: dict[str, Ty] = {}
    changed = True
    while changed:
        changed = False
        for c, ns in classes.items():
            if c in types:
                continue
            for n in ns:
                ty = _node_type(n, types, syms)
                if ty is not None:
                    types[c], changed = ty, True
                    break
    return types


def extract(classes: dict[str, list[ENode]], types: dict[str, Ty], syms: dict[str, Sym],
            root: str) -> tuple[Term, int]:
    """Step 5: the cheapest term of the root's class and its cost."""
    own: list[tuple[str, ENode, int]] = []
    for c, ns in classes.items():
        for n in ns:
            if c in types and _node_type(n, types, syms) == types[c]:
                cost = 0 if n.op in ("Sym", "Num") else node_cost(
                    OP_OF[n.op], [types[k] for k in n.children], types[c])
                own.append((c, n, cost))
    parents: dict[str, list[int]] = {}
    for i, (_, n, _) in enumerate(own):
        for k in set(n.children):
            parents.setdefault(k, []).append(i)
    best: dict[str, tuple[int, ENode]] = {}
    pending = deque(i for i, (_, n, _) in enumerate(own) if not n.children)
    while pending:
        c, n, cost = own[pending.popleft()]
        if all(k in best for k in n.children):
            total = cost + sum(best[k][0] for k in n.children)
            if c not in best or total < best[c][0]:
                best[c] = (total, n)
                pending.extend(parents.get(c, ()))

    def build(c: str) -> Term:
        n = best[c][1]
        if n.op == "Sym":
            return syms[n.literal]
        if n.op == "Num":
            return Const(float(n.literal))
        op = OP_OF[n.op]
        return Op(op, tuple(build(k) for k in n.children),
                  int(n.literal) if op in REDUCTIONS else None)

    return build(root), best[root][0]


def saturate(term: Term, rules: list[Rule], limits: Limits = Limits()) -> Saturation:
    """Steps 1-5."""
    check_term(term)
    require_usable([r.name for r in rules])
    graph, iterations, reason = saturate_graph(term, rules, limits)
    classes, root = enodes(graph)
    syms = symbols(term)
    best, cost = extract(classes, class_types(classes, syms), syms, root)
    return Saturation(best, cost, term_cost(term), sum(len(ns) for ns in classes.values()),
                      len(classes), iterations, reason)
