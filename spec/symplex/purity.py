"""Chapter 14: SympleX's JAX-style purity check of a function's source (symplex/_ast_checker.py,
facts §2.8): the verdict and the exact message SympleX raises.

1. Prepare: dedent and strip the text; drop one leading `key:` (a dict entry's key, quoted or
   not) and trailing commas; a text starting `lambda` becomes `def _lambda_wrapper():` returning
   it.
2. Parse. A syntax error, or no function definition, leaves the text unchecked: pure.
3. The function is the first definition breadth-first; an async one is impure, its message
   ASYNC_TEXT alone.
4. Parameters are every parameter of every definition in it (positional-only, positional,
   keyword-only, *args, **kwargs); locals are the parameters, the definitions' names and every
   name bound anywhere in it (assignment targets, tuples included, annotated and augmented
   assignments, for and with targets, walrus targets).
5. Walk the function in source order, each node's violations before its children's; `del`,
   `yield`, `yield from` and `await` are violations whose children are not walked. A violation:
   a. subscript assignment x[i] = v to a parameter, or to a name that is not local; to
      anything but a name; attribute assignment; augmented assignment to a subscript or an
      attribute;
   b. del, global, nonlocal, yield, yield from, await; a try with an except clause (rule 6);
   c. a call of an impure builtin by name; a call of a name imported from `random`; a
      method call on a name: numpy's IO or random member on a known module (numpy, np,
      math, symplex, and names imported from them inside the function, as they are met), else
      a mutating method (MUTATING); `<module>.random.<f>()`; a write method (`.write`,
      `.writelines`) on anything;
   d. `random.<x>` (x not Random) for the module `random` under any name it is bound
      to inside the function, numpy's random included;
   e. `with open(...)`.
6. Each violation is `Line L, Col C: text` at its node; the message is HEADER, the numbered
   violations, then FOOTER.

SympleX (`symplex@1.0.0`) differs: it has no rule for try (E14.410), binds locals from plain
names only (E14.411), takes positional parameters only (E14.412), knows `random` by that name
only (E14.413), misses the mutating methods of dicts and sets (E14.414) and writes through a
method (E14.415), and lets random.seed pass (E14.416).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, Field, Utf8, record
from ..core.strategies import st

E14_410, E14_411, E14_412 = "E14.410", "E14.411", "E14.412"
E14_413, E14_414, E14_415 = "E14.413", "E14.414", "E14.415"
E14_416 = "E14.416"

IMPURE_BUILTINS = frozenset({
    "print", "input", "open", "help", "exec", "eval", "compile", "globals", "locals", "vars",
    "setattr", "delattr", "property", "random", "__import__", "type", "id", "hash", "exit",
    "quit", "breakpoint"})
IMPURE_NUMPY = frozenset({"random", "save", "savez", "load", "savetxt", "loadtxt", "fromfile",
                          "tofile", "ndfromtxt", "mafromtxt"})
KNOWN_MODULES = ("numpy", "np", "math", "symplex")
PURE_ROOTS = ("numpy", "math", "symplex")
MUTATING = ("append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
            "setflags", "fill", "put", "itemset")
MUTATING_MORE = ("update", "setdefault", "popitem", "discard", "difference_update",
                 "intersection_update", "symmetric_difference_update", "resize",
                 "__setitem__", "__delitem__")
"""Mutating methods of dicts, sets and arrays SympleX misses (E14.414)."""
WRITES = ("write", "writelines")
RANDOM_KEPT = ("Random",)
"""random.Random builds a generator of the function's own; SympleX also lets seed pass (E14.416)."""

HEADER = ("Function '{name}' is not pure. SympleX only compiles pure functions (like JAX).\n\n"
          "Impurity violations:\n")
FOOTER = ("\nTo fix these, ensure your function:\n"
          "  - Has no side effects (no print, IO, global mutation)\n"
          "  - Does not mutate arrays in-place (use x = x.at[idx].set(val))\n"
          "  - Uses only pure operations (arithmetic, numpy, symplex APIs)\n")
ASYNC_TEXT = ("Async function '{name}' is impure. SympleX only compiles synchronous pure "
              "functions.")
TRY_TEXT = "try/except is impure (catching exceptions is impure control flow)."
WRITE_TEXT = "Call to IO method '.{m}()' is impure (no side effects)."


@dataclass(frozen=True)
class Verdict:
    pure: bool
    message: str = ""


def prepare(source: str) -> str:
    """Step 1."""
    text = textwrap.dedent(source).strip()
    text = re.sub(r'^["\']?\w+["\']?\s*:\s*', "", text)
    text = text.rstrip(",").strip()
    return f"def _lambda_wrapper():\n    return {text}" if text.startswith("lambda") else text


def _bound_names(target: ast.AST, errata: frozenset[str]) -> list[str]:
    """The names a target binds: a plain name only under E14.411."""
    if isinstance(target, ast.Name):
        return [target.id]
    if E14_411 in errata or not isinstance(target, ast.Tuple | ast.List | ast.Starred):
        return []
    parts = [target.value] if isinstance(target, ast.Starred) else target.elts
    return [n for p in parts for n in _bound_names(p, errata)]


def _targets(node: ast.AST, errata: frozenset[str]) -> list[ast.AST]:
    """The binding targets of one node, as step 4 reads them."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.For | ast.NamedExpr):
        return [node.target]
    if isinstance(node, ast.AnnAssign | ast.comprehension) and E14_411 not in errata:
        return [node.target]
    if isinstance(node, ast.With):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    return []


def parameters(fn: ast.AST, errata: frozenset[str]) -> set[str]:
    """Step 4's parameters (positional ones only under E14.412)."""
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            out |= {p.arg for p in a.args}
            if E14_412 not in errata:
                out |= {p.arg for p in (*a.posonlyargs, *a.kwonlyargs, a.vararg, a.kwarg) if p}
    return out


def local_names(fn: ast.AST, errata: frozenset[str]) -> set[str]:
    """Step 4's locals."""
    out = parameters(fn, errata)
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.add(node.name)
        for t in _targets(node, errata):
            out |= set(_bound_names(t, errata))
    return out


class Walk(ast.NodeVisitor):
    """Step 5: the violations of one function, in order."""

    def __init__(self, fn: ast.AST, errata: frozenset[str]):
        self.errata = errata
        self.params = parameters(fn, errata)
        self.locals = local_names(fn, errata)
        self.modules = set(KNOWN_MODULES)
        self.randoms = {"random"}
        self.random_calls: set[str] = set()
        self.found: list[str] = []

    def flag(self, text: str, node: ast.AST) -> None:
        self.found.append(f"Line {node.lineno}, Col {node.col_offset}: {text}")

    def spec_rule(self, erratum: str) -> bool:
        """A rule SympleX lacks: off under its erratum."""
        return erratum not in self.errata

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                name = t.value.id
                if name in self.params:
                    self.flag(f"In-place mutation of function parameter '{name}'. Use functional "
                              f"update: {name} = {name}.at[idx].set(val)", node)
                elif name not in self.locals:
                    self.flag(f"In-place mutation of non-local array '{name}'. Use functional "
                              "update: x = x.at[idx].set(val)", node)
            elif isinstance(t, ast.Subscript):
                self.flag("In-place subscript assignment is impure. Use functional update: "
                          "x = x.at[idx].set(val)", node)
            elif isinstance(t, ast.Attribute):
                self.flag("Attribute assignment is impure (mutates external state). All data "
                          "transformations must be pure.", node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Subscript):
            self.flag("Augmented subscript assignment (e.g., x[i] += v) is impure. Use "
                      "functional update: x = x.at[i].add(v)", node)
        elif isinstance(node.target, ast.Attribute):
            self.flag("Augmented attribute assignment (e.g., x.y += v) is impure.", node)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self.flag("del statement is impure.", node)

    def visit_Global(self, node: ast.Global) -> None:
        self.flag("global declaration is impure. Pure functions cannot access global state.",
                  node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.flag("nonlocal declaration is impure. Pure functions cannot close over mutable "
                  "state.", node)

    def visit_Yield(self, node: ast.Yield) -> None:
        self.flag("yield is impure (generators are not pure functions).", node)

    def visit_YieldFrom(self, node: ast.YieldFrom) -> None:
        self.flag("yield from is impure (generators are not pure functions).", node)

    def visit_Await(self, node: ast.Await) -> None:
        self.flag("await is impure (async I/O is not allowed in pure functions).", node)

    def visit_Try(self, node: ast.Try) -> None:
        if node.handlers and self.spec_rule(E14_410):
            self.flag(TRY_TEXT, node)
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def call_violation(self, node: ast.Call) -> str | None:
        """Step 5c for one call."""
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in IMPURE_BUILTINS:
                return f"Call to impure builtin '{f.id}' is not allowed in pure functions."
            if f.id in self.random_calls and self.spec_rule(E14_413):
                return f"random.{f.id} is impure. Use symplex.lax.rng instead."
            return None
        if not isinstance(f, ast.Attribute):
            return None
        if isinstance(f.value, ast.Name):
            if f.value.id in self.modules:
                if f.attr in IMPURE_NUMPY:
                    return f"numpy.{f.attr}() is impure (involves random state or IO)."
                return None
            more = MUTATING_MORE if self.spec_rule(E14_414) else ()
            if f.attr in MUTATING or f.attr in more:
                return (f"Call to mutating method '.{f.attr}()' is impure. Use functional "
                        "operations instead.")
        elif isinstance(f.value, ast.Attribute) and isinstance(f.value.value, ast.Name):
            mod = f.value.value.id
            if mod in self.modules and f.value.attr == "random":
                return (f"{mod}.random.{f.attr}() is impure. Use symplex.lax.rng for "
                        "reproducible random numbers.")
        if f.attr in WRITES and self.spec_rule(E14_415):
            return WRITE_TEXT.format(m=f.attr)
        return None

    def visit_Call(self, node: ast.Call) -> None:
        text = self.call_violation(node)
        if text:
            self.flag(text, node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        v = node.value
        names = self.randoms if self.spec_rule(E14_413) else {"random"}
        kept = RANDOM_KEPT if self.spec_rule(E14_416) else (*RANDOM_KEPT, "seed")
        if isinstance(v, ast.Name) and v.id in names and node.attr not in kept:
            self.flag(f"random.{node.attr} is impure. Use symplex.lax.rng instead.", node)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            bound = a.asname or a.name
            if a.name in PURE_ROOTS:
                self.modules.add(bound)
            if a.asname and a.name in ("random", "numpy.random"):
                self.randoms.add(a.asname)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        root = (node.module or "").split(".")[0]
        for a in node.names:
            bound = a.asname or a.name
            if node.module and root in PURE_ROOTS:
                self.modules.add(bound)
            if node.module == "random":
                self.random_calls.add(bound)
            if node.module == "numpy" and a.name == "random":
                self.randoms.add(bound)
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            c = item.context_expr
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "open":
                self.flag("with open(...) is impure (file IO).", node)
        self.generic_visit(node)


def first_function(tree: ast.AST) -> ast.AST | None:
    """Step 3: the first definition breadth-first."""
    return next((n for n in ast.walk(tree)
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)


def message(name: str, violations: list[str]) -> str:
    """Step 6."""
    body = "".join(f"  {i}. {v}\n" for i, v in enumerate(violations, 1))
    return HEADER.format(name=name) + body + FOOTER


def check_purity(source: str, errata: frozenset[str] = NO_ERRATA) -> Verdict:
    """Steps 1-6 on a function's source text."""
    try:
        tree = ast.parse(prepare(source))
    except SyntaxError:
        return Verdict(True)
    fn = first_function(tree)
    if fn is None:
        return Verdict(True)
    if isinstance(fn, ast.AsyncFunctionDef):
        return Verdict(False, ASYNC_TEXT.format(name=fn.name))
    walk = Walk(fn, errata)
    walk.visit(fn)
    return Verdict(not walk.found, message(fn.name, walk.found) if walk.found else "")


# ── the op ────────────────────────────────────────────────────────────────────────────────────

def purity_op(source: str, errata: frozenset[str] = NO_ERRATA) -> dict:
    v = check_purity(source, errata)
    return {"pure": v.pure, "message": v.message}


HEADS = ("x", "x, y", "x, /, y", "x, *, y", "*xs", "x, **kw", "x, *ys")
PURE_LINES = ("z = {p} * 2 + 1", "z = np.sqrt({p}) + np.exp({p})", "z = {p}.at[0].set(1.0)",
              "assert {p} is not None", "if {p} > 0:\n    z = {p}\nelse:\n    z = -{p}",
              "for i in range(3):\n    z = {p} + i", "z = [v * 2 for v in {p}]",
              "import numpy as np", "z = {p} @ {p}", "z = np.zeros(3)\nz[0] = 1.0",
              "raise ValueError('bad')", "z = {p}.at[1].add(2.0)", "z = len({p})")
IMPURE_LINES = ("print({p})", "{p}[0] = 1.0", "{p}.attr = 1", "{p}[0] += 1", "{p}.y += 1",
                "del z", "global G", "nonlocal G", "z = yield {p}", "z = np.random.rand(3)",
                "z = random.random()", "np.save('f', {p})", "{p}.append(1)",
                "with open('f') as fh:\n    z = fh", "z = eval('1')", "G[0] = {p}",
                "z = {p}[0]\nz.sort()", "{p}.data[0] = 1", "random.seed(0)",
                "import numpy as onp\nz = onp.load('f')", "z = yield from {p}")
ERRATA_LINES = ("try:\n    z = {p} / 0\nexcept ZeroDivisionError:\n    z = {p}",
                "a, b = np.zeros(2), np.zeros(2)\na[0] = 1.0", "w: list = [0, 1]\nw[0] = 2",
                "for k, v in {p}:\n    k[0] = v", "import random as rnd\nz = rnd.random()",
                "from random import randint\nz = randint(0, 3)", "{p}.update(a=1)",
                "sys.stdout.write('x')", "from numpy import random as npr\nz = npr.rand(2)",
                "{p}.setdefault('a', 1)", "f.write({p})")


def _indent(text: str, by: str) -> str:
    return "\n".join(by + line for line in text.split("\n"))


@st.composite
def functions(draw) -> str:
    """Small Python functions (step 1's text forms included): a def with one of HEADS, one to
    four statements from the pure, impure and errata lines over its parameters, sometimes a
    decorator, an async def, an indented method, a nested def, a lambda or a dict entry."""
    head = draw(st.sampled_from(HEADS))
    names = [p.strip("*/ ") for p in head.split(",") if p.strip("*/ ")]
    lines = st.sampled_from(PURE_LINES + IMPURE_LINES + ERRATA_LINES)
    body = [draw(lines).format(p=draw(st.sampled_from(names)))
            for _ in range(draw(st.integers(1, 4)))]
    body.append(draw(st.sampled_from(["return z", f"return {names[0]}", "pass"])))
    form = draw(st.sampled_from(["def"] * 6 + ["async", "decorated", "method", "nested",
                                                "lambda", "entry"]))
    if form == "lambda":
        return f"lambda {head}: {draw(st.sampled_from(['x + 1', 'print(x)', 'x.pop()']))}"
    if form == "entry":
        return f"\"key\": lambda {head}: {names[0]} * 2,"
    text = f"def f({head}):\n" + _indent("\n".join(body), "    ")
    if form == "async":
        return "async " + text
    if form == "decorated":
        return "@symplex.jit\n" + text
    if form == "nested":
        return f"def outer(q):\n{_indent(text, '    ')}\n    return f(q)"
    return _indent(text, "    ") if form == "method" else text


def purity_edges() -> list[dict]:
    return [{"source": s} for s in (
        "def f(x, y):\n    return x + y * 2",
        "def f(x):\n    print(x)\n    x[0] = 1.0\n    return x",
        "def f(x):\n    y = x.at[0].set(1.0)\n    return y",
        "def f(x):\n    with open('log') as fh:\n        return fh",
        "async def f(x):\n    return x",
        "lambda x: print(x)",
        "def f(x):\n    del x[print(1)]\n    return 0",
        "not python at all (",
        "x = 1",
        *(w["args"]["source"] for w in WITNESSES.values()))]


def _witness(source: str, spec: list[str], seed: list[str]) -> dict:
    """A witness on a function `f`: the violations each side reports."""
    def answer(found: list[str]) -> dict:
        return {"pure": not found, "message": message("f", found) if found else ""}
    return {"args": {"source": source}, "spec": answer(spec), "seed": answer(seed)}


_PARAM = ("In-place mutation of function parameter '{0}'. Use functional update: "
          "{0} = {0}.at[idx].set(val)")
_NONLOCAL = ("In-place mutation of non-local array '{0}'. Use functional update: "
             "x = x.at[idx].set(val)")
_MUTATING = "Call to mutating method '.{0}()' is impure. Use functional operations instead."
WITNESSES = {
    E14_410: _witness("def f(x):\n    try:\n        return 1 / x\n    except ZeroDivisionError:\n"
                      "        return 0.0", [f"Line 2, Col 4: {TRY_TEXT}"], []),
    E14_411: _witness("def f(x):\n    a, b = np.zeros(2), np.zeros(2)\n    a[0] = x\n"
                      "    return a + b", [], ["Line 3, Col 4: " + _NONLOCAL.format("a")]),
    E14_412: _witness("def f(*, x):\n    x[0] = 1.0\n    return x",
                      ["Line 2, Col 4: " + _PARAM.format("x")],
                      ["Line 2, Col 4: " + _NONLOCAL.format("x")]),
    E14_413: _witness("def f(x):\n    import random as rnd\n    return x + rnd.random()",
                      ["Line 3, Col 15: random.random is impure. Use symplex.lax.rng "
                       "instead."], []),
    E14_414: _witness("def f(d):\n    d.update(a=1)\n    return d",
                      ["Line 2, Col 4: " + _MUTATING.format("update")], []),
    E14_415: _witness("def f(x):\n    sys.stdout.write(str(x))\n    return x",
                      ["Line 2, Col 4: " + WRITE_TEXT.format(m="write")], []),
    E14_416: _witness("def f(x):\n    random.seed(0)\n    return x",
                      ["Line 2, Col 4: random.seed is impure. Use symplex.lax.rng instead."], []),
}
"""Each erratum's witness; the seed's side is what symplex 1.0.0's check_purity raises."""

declare(
    "symplex.purity", chapter=14,
    summary="SympleX's JAX-style purity check of a function's source text: pure or not, and "
            "the ImpureFunctionError message with every violation, in source order.",
    args=record(source=Field(Utf8(), "the function's source, as inspect.getsource gives it")),
    result=record(pure=Field(BOOL, "no violation (also: unparsable text, or no function)"),
                  message=Field(Utf8(), "the error message; empty when pure")),
    spec=(check_purity, prepare, local_names, parameters, message),
    errata=tuple(WITNESSES), domain=lambda: functions().map(lambda s: {"source": s}),
    edges=purity_edges,
    invalid=(InvalidCase("a source that is not a string", lambda: st.just({"source": 7}),
                         "bad_request"),),
    not_applicable={"numba": "a walk of one Python syntax tree: no numeric core",
                    "cupy": "a walk of one Python syntax tree: nothing to spread over a GPU"},
)

_LOC = "symplex/_ast_checker.py, PurityChecker"
_ERRATA = (
    (E14_410, "A try with an except clause passes the check", "no visit_Try",
     "The docstring's rule 6 forbids catching exceptions; the checker has no rule for try, "
     "so a function that swallows an error is called pure."),
    (E14_411, "Names bound by tuple, annotated or comprehension targets are not locals",
     "_collect_locals", "Locals are collected from plain-name targets only: after "
     "`a, b = np.zeros(2), np.zeros(2)` a local array's `a[0] = x`, which the rules allow, is "
     "reported as an in-place mutation of a non-local array (a false positive)."),
    (E14_412, "Keyword-only, positional-only and star parameters are not parameters",
     "_collect_locals (node.args.args only)", "A mutation of `def f(*, x)`'s x is still "
     "refused, but as a non-local array, not as the parameter it is; so is one of *args and "
     "**kwargs."),
    (E14_413, "The random module under another name passes",
     "visit_Attribute (the name 'random' only)", "Rule 5 forbids Python's random module; "
     "`import random as rnd; rnd.random()`, `from random import randint` and numpy's random "
     "imported under another name are called pure."),
    (E14_414, "Mutating methods of dicts and sets pass", "visit_Call's mutating-method list",
     "Only list and array mutators are listed: `d.update(...)`, `d.setdefault(...)`, "
     "`s.discard(...)`, `x.resize(...)` and `x.__setitem__(...)` on a parameter mutate the "
     "caller's object and are called pure."),
    (E14_415, "Writes through a method pass", "visit_Call (IO builtins by bare name only)",
     "Rule 1 forbids IO ('no print, input, open, write'); `sys.stdout.write(...)` or "
     "`fh.write(...)` is called pure."),
    (E14_416, "random.seed passes", "visit_Attribute (Random and seed exempt)",
     "Seeding Python's global generator changes global state (rules 3 and 5); only "
     "random.Random, which builds a generator of the function's own, is harmless."),
)
for _id, _title, _where, _detail in _ERRATA:
    erratum(_id, _title, seed=SEEDS["symplex"], location=f"{_LOC}, {_where}",
            ops=("symplex.purity",), witness=WITNESSES[_id], flag="result", detail=_detail)
