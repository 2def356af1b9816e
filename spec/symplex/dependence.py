"""Chapter 14: dependence legality of affine loop nests (the row SympleX's facts sheet names
"polyhedral dependency check", §2.4 and §2.10), decided exactly by z3 integer feasibility.

A nest is a perfect nest of loops `lo <= var <= hi` (bounds inclusive, affine in the outer
loops' variables, `step` >= 1: var = lo + step * t, t >= 0) around statements numbered by
`stmt`; within one statement its reads happen before its write. An access names an array, read
or write, and one affine subscript per dimension.

1. Execution order: access a at iteration x runs before access b at iteration y iff x <lex y,
   or x = y and (a.stmt, a.kind) < (b.stmt, b.kind) with read < write.
2. A dependence a -> b: the same array, at least one write, iterations x and y both in the
   iteration space, equal subscripts, and a(x) runs before b(y). Its kind is flow (write then
   read), anti (read then write) or output (write then write).
3. Its direction vector holds, per loop, the sign of y_k - x_k as '<' (y_k > x_k), '=' or '>'.
   The vectors are found by refining a prefix one loop at a time, z3 deciding at each step
   whether some iteration pair has that prefix; a prefix whose first non-'=' is '>' is never a
   dependence a -> b (it is one b -> a) and is pruned; an all-'=' vector needs a before b by
   the statement order of step 1.
4. Per vector, a distance component is constant when z3 finds no second pair with another
   value of y_k - x_k; else it is null.
5. Every z3 query runs within DEP_RLIMIT resource units, and one op call asks at most
   DEP_QUERIES queries; an "unknown", or a query past that budget, makes the outcome "unknown"
   and names the undecided pair of accesses: nothing is guessed.
6. Interchanging loops u and v (the same iteration set, run in the permuted order) is legal iff
   no dependence's permuted direction vector is lexicographically negative (its first non-'='
   component '>'): an all-'=' vector stays as it is.
7. Fusing at statement s: the statements below s form one nest and the rest a second nest with
   the same loops that runs after it. Fusing them into one body (first group first) is legal
   iff no iteration pair a (first group) at x and b (second group) at y touching one element
   with a write has y <lex x: the fused nest would run b(y) before a(x).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import InvalidInput
from ..core.lazy_z3 import z3

MAX_DEPTH = 8
"""The spec's bound on loops in a nest (and on subscripts per access)."""
MAX_ACCESSES = 16
"""The spec's bound on accesses in a nest."""
MAX_COEFF = 2**31
"""The largest magnitude of a coefficient, a constant or a step."""
DEP_RLIMIT = 2_000_000
"""z3 resource units per query: a deterministic budget, as the obligations use."""
DEP_QUERIES = 10_000
"""z3 queries per op call: a deep nest can have thousands of direction vectors per pair."""
DIRS = ("<", "=", ">")
KINDS = ("flow", "anti", "output")
READ, WRITE = 0, 1


@dataclass(frozen=True)
class Affine:
    """sum(coeff * var) + const; no zero coefficient."""

    coeffs: tuple[tuple[str, int], ...]
    const: int = 0


@dataclass(frozen=True)
class Loop:
    var: str
    lo: Affine
    hi: Affine
    step: int = 1


@dataclass(frozen=True)
class Access:
    array: str
    kind: int
    index: tuple[Affine, ...]
    stmt: int = 0


@dataclass(frozen=True)
class Nest:
    loops: tuple[Loop, ...]
    accesses: tuple[Access, ...]


@dataclass(frozen=True)
class Dependence:
    source: int
    sink: int
    kind: str
    direction: tuple[str, ...]
    distance: tuple[int | None, ...]


@dataclass(frozen=True)
class Analysis:
    outcome: str
    dependences: tuple[Dependence, ...]
    undecided: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Legality:
    verdict: str
    violated: Dependence | None = None


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

def _int(value, path: str, lo: int = -MAX_COEFF, hi: int = MAX_COEFF) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{path}: expected an integer")
    if not lo <= value <= hi:
        raise InvalidInput(f"{path}: {value} is outside {lo}..{hi}")
    return value


def affine_from_wire(value, path: str, allowed: tuple[str, ...]) -> Affine:
    """An integer, or {coeffs: {var: int}, const: int} over the variables `allowed`."""
    if not isinstance(value, dict):
        return Affine((), _int(value, path))
    if set(value) - {"coeffs", "const"}:
        raise InvalidInput(f"{path}: only coeffs and const are allowed")
    coeffs = value.get("coeffs", {})
    if not isinstance(coeffs, dict):
        raise InvalidInput(f"{path}.coeffs: expected an object of var: integer")
    for var in coeffs:
        if var not in allowed:
            raise InvalidInput(f"{path}.coeffs: {var!r} is not an enclosing loop variable "
                               f"(those are: {', '.join(allowed) or 'none'})")
    terms = tuple((v, _int(c, f"{path}.coeffs.{v}")) for v, c in sorted(coeffs.items()) if c)
    return Affine(terms, _int(value.get("const", 0), f"{path}.const"))


def nest_from_wire(loops: list[dict], accesses: list[dict]) -> Nest:
    """Check a decoded nest (kinds as ordinals): 1-8 loops with distinct names, bounds over
    outer loops only, subscripts over the loops, one subscript count per array;
    `invalid_input` names the field."""
    if not 1 <= len(loops) <= MAX_DEPTH:
        raise InvalidInput(f"args.loops: a nest has 1 to {MAX_DEPTH} loops, not {len(loops)}")
    if len(accesses) > MAX_ACCESSES:
        raise InvalidInput(f"args.accesses: at most {MAX_ACCESSES} accesses")
    out: list[Loop] = []
    for k, lp in enumerate(loops):
        names = tuple(x.var for x in out)
        if not lp["var"] or lp["var"] in names:
            raise InvalidInput(f"args.loops[{k}].var: {lp['var']!r} is empty or repeated")
        out.append(Loop(lp["var"], affine_from_wire(lp["lo"], f"args.loops[{k}].lo", names),
                        affine_from_wire(lp["hi"], f"args.loops[{k}].hi", names),
                        _int(lp["step"], f"args.loops[{k}].step", 1)))
    names = tuple(x.var for x in out)
    dims: dict[str, int] = {}
    accs = []
    for n, a in enumerate(accesses):
        path = f"args.accesses[{n}].index"
        if not isinstance(a["index"], list) or not 1 <= len(a["index"]) <= MAX_DEPTH:
            raise InvalidInput(f"{path}: 1 to {MAX_DEPTH} subscripts")
        if dims.setdefault(a["array"], len(a["index"])) != len(a["index"]):
            raise InvalidInput(f"{path}: array {a['array']!r} has {dims[a['array']]} "
                               "subscripts elsewhere")
        index = tuple(affine_from_wire(e, f"{path}[{d}]", names) for d, e in enumerate(a["index"]))
        accs.append(Access(a["array"], a["kind"], index, a["stmt"]))
    return Nest(tuple(out), tuple(accs))


# ── z3 ────────────────────────────────────────────────────────────────────────────────────────

def term(e: Affine, env: dict) -> z3.ArithRef:
    """The affine expression over the z3 integers `env`."""
    ctx = next(iter(env.values())).ctx
    return z3.Sum([z3.IntVal(e.const, ctx), *(c * env[v] for v, c in e.coeffs)])


def iteration_space(nest: Nest, env: dict, tag: str) -> list:
    """lo <= var <= hi, and var = lo + step * t with t >= 0 when step > 1."""
    out = []
    for lp in nest.loops:
        x, lo = env[lp.var], term(lp.lo, env)
        out += [lo <= x, x <= term(lp.hi, env)]
        if lp.step > 1:
            t = z3.Int(f"t_{tag}_{lp.var}", x.ctx)
            out += [t >= 0, x == lo + lp.step * t]
    return out


def runs_before(a: Access, b: Access) -> bool:
    """Step 1 at one iteration: statement order, reads before the write."""
    return (a.stmt, a.kind) < (b.stmt, b.kind)


def dependence_kind(a: Access, b: Access) -> str | None:
    """Step 2: flow, anti or output; None when neither writes or the arrays differ."""
    if a.array != b.array or READ == a.kind == b.kind:
        return None
    return KINDS[0] if a.kind == WRITE and b.kind == READ else \
        KINDS[1] if a.kind == READ else KINDS[2]


def lex_sign(direction: tuple[str, ...]) -> str:
    """The first non-'=' component ('=' when none)."""
    return next((d for d in direction if d != "="), "=")


def direction_constraint(d: str, x, y):
    return y > x if d == "<" else y == x if d == "=" else y < x


class PairSolver:
    """z3 state for one ordered pair of accesses: source at x, sink at y."""

    def __init__(self, nest: Nest, a: Access, b: Access, rlimit: int, budget: list[int]):
        self.budget = budget
        ctx = z3.Context()
        self.xs = {lp.var: z3.Int(f"x_{lp.var}", ctx) for lp in nest.loops}
        self.ys = {lp.var: z3.Int(f"y_{lp.var}", ctx) for lp in nest.loops}
        self.vars = [lp.var for lp in nest.loops]
        self.solver = z3.Solver(ctx=ctx)
        self.solver.set("rlimit", rlimit)
        self.solver.add(iteration_space(nest, self.xs, "x") + iteration_space(nest, self.ys, "y"))
        self.solver.add([term(i, self.xs) == term(j, self.ys)
                         for i, j in zip(a.index, b.index, strict=True)])

    def check(self, extra: list) -> z3.CheckSatResult:
        """One query, or unknown once the op call's budget of queries is spent."""
        self.model = None
        if self.budget[0] <= 0:
            return z3.unknown
        self.budget[0] -= 1
        self.solver.push()
        self.solver.add(extra)
        r = self.solver.check()
        self.model = self.solver.model() if r == z3.sat else None
        self.solver.pop()
        return r

    def prefix(self, direction: tuple[str, ...]) -> list:
        return [direction_constraint(d, self.xs[v], self.ys[v])
                for d, v in zip(direction, self.vars, strict=False)]

    def distance(self, direction: tuple[str, ...]) -> tuple[int | None, ...] | None:
        """Step 4; None when a query is unknown."""
        if self.check(self.prefix(direction)) != z3.sat:
            return None
        model, out = self.model, []
        for v, sign in zip(self.vars, direction, strict=True):
            if sign == "=":
                out.append(0)
                continue
            gap = self.ys[v] - self.xs[v]
            d = model.eval(gap, model_completion=True).as_long()
            r = self.check([*self.prefix(direction), gap != d])
            if r == z3.unknown:
                return None
            out.append(d if r == z3.unsat else None)
        return tuple(out)


def directions(pair: PairSolver, depth: int, wanted, complete) -> tuple[list, bool]:
    """Step 3: every full vector with a feasible iteration pair, refining only prefixes that
    `wanted` keeps and full vectors that `complete` accepts; and whether all were decided."""
    found, decided = [], True
    stack: list[tuple[str, ...]] = [()]
    while stack:
        prefix = stack.pop()
        if not wanted(prefix) or (len(prefix) == depth and not complete(prefix)):
            continue
        r = pair.check(pair.prefix(prefix))
        if r == z3.unknown:
            decided = False
        elif r == z3.sat and len(prefix) == depth:
            found.append(prefix)
        elif r == z3.sat:
            stack += [(*prefix, d) for d in reversed(DIRS)]
    return sorted(found, key=lambda p: [DIRS.index(d) for d in p]), decided


def pair_dependences(nest: Nest, s: int, t: int, wanted, complete, rlimit: int,
                     budget: list[int]) -> tuple[list[Dependence], bool]:
    """The dependences s -> t whose vectors pass `wanted`/`complete`, and whether decided."""
    a, b = nest.accesses[s], nest.accesses[t]
    kind = dependence_kind(a, b)
    if kind is None:
        return [], True
    pair = PairSolver(nest, a, b, rlimit, budget)
    vectors, decided = directions(pair, len(nest.loops), wanted, complete)
    out = []
    for v in vectors:
        dist = pair.distance(v)
        if dist is None:
            decided = False
            continue
        out.append(Dependence(s, t, kind, v, dist))
    return out, decided


def analyze(nest: Nest, rlimit: int = DEP_RLIMIT, queries: int = DEP_QUERIES) -> Analysis:
    """Steps 1-5: every dependence of the nest with its direction vector and distance."""
    deps, undecided, budget = [], [], [queries]
    for s, a in enumerate(nest.accesses):
        for t, b in enumerate(nest.accesses):
            found, decided = pair_dependences(
                nest, s, t, lambda p: lex_sign(p) != ">",
                lambda p, a=a, b=b: lex_sign(p) == "<" or runs_before(a, b), rlimit, budget)
            deps += found
            if not decided:
                undecided.append((s, t))
    return Analysis("unknown" if undecided else "exact", tuple(deps), tuple(undecided))


def permuted(direction: tuple[str, ...], order: tuple[int, ...]) -> tuple[str, ...]:
    """The vector with its components in the new loop order."""
    return tuple(direction[k] for k in order)


def interchange_legal(nest: Nest, u: str, v: str, rlimit: int = DEP_RLIMIT,
                      queries: int = DEP_QUERIES) -> Legality:
    """Step 6: illegal iff a dependence's permuted vector is lexicographically negative."""
    return interchange_verdict(nest, analyze(nest, rlimit, queries), u, v)


def interchange_verdict(nest: Nest, result: Analysis, u: str, v: str) -> Legality:
    """Step 6 on an analysis of the nest."""
    names = [lp.var for lp in nest.loops]
    i, j = names.index(u), names.index(v)
    order = list(range(len(names)))
    order[i], order[j] = j, i
    for dep in result.dependences:
        if lex_sign(permuted(dep.direction, tuple(order))) == ">":
            return Legality("illegal", dep)
    return Legality("unknown" if result.outcome == "unknown" else "legal")


def fusion_legal(nest: Nest, split: int, rlimit: int = DEP_RLIMIT,
                 queries: int = DEP_QUERIES) -> Legality:
    """Step 7: illegal iff a first-group access and a second-group one meet with the second's
    iteration lexicographically before the first's."""
    undecided, budget = False, [queries]
    for s, a in enumerate(nest.accesses):
        for t, b in enumerate(nest.accesses):
            if not a.stmt < split <= b.stmt:
                continue
            found, decided = pair_dependences(nest, s, t, lambda p: lex_sign(p) != "<",
                                              lambda p: lex_sign(p) == ">", rlimit, budget)
            if found:
                return Legality("illegal", found[0])
            undecided |= not decided
    return Legality("unknown" if undecided else "legal")
