"""Chapter 14 obligations of SympleX's purity check: under symplex@1.0.0 it answers as the
shipped checker (PO14.450), and under the default profile a function is impure exactly when it
holds a construct the rules forbid (PO14.451). The oracle of PO14.451 is the label of each
generated line, not the checker."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.core.strategies import st
from ...spec.symplex.purity import (
    ERRATA_LINES,
    HEADS,
    IMPURE_LINES,
    PURE_LINES,
    WITNESSES,
    Walk,
    _bound_names,
    first_function,
    message,
    parameters,
    prepare,
    purity_op,
)
from ..core.obligation import Property, property_obligation

SEED = frozenset(WITNESSES)
_LINES = (
    "def f(x):\n    with open('log') as fh:\n        fh.append(x)\n    return x",
    ["Line 2, Col 4: with open(...) is impure (file IO).",
     "Line 2, Col 9: Call to impure builtin 'open' is not allowed in pure functions.",
     "Line 3, Col 8: Call to mutating method '.append()' is impure. Use functional operations "
     "instead."])
SEED_ANSWERS = (
    _LINES,
    ("def f(x):\n    del x[print(1)]\n    return 0", ["Line 2, Col 4: del statement is impure."]),
    ("def f(x, *, y):\n    y[0] = 1\n    x.a = 2\n    x[0] += 1\n    x.b += 1\n    x.c[0] = 1",
     ["Line 2, Col 4: In-place mutation of non-local array 'y'. Use functional update: "
      "x = x.at[idx].set(val)",
      "Line 3, Col 4: Attribute assignment is impure (mutates external state). All data "
      "transformations must be pure.",
      "Line 4, Col 4: Augmented subscript assignment (e.g., x[i] += v) is impure. Use "
      "functional update: x = x.at[i].add(v)",
      "Line 5, Col 4: Augmented attribute assignment (e.g., x.y += v) is impure.",
      "Line 6, Col 4: In-place subscript assignment is impure. Use functional update: "
      "x = x.at[idx].set(val)"]),
    ("def f(x):\n    z = yield print(x)\n    return z",
     ["Line 2, Col 8: yield is impure (generators are not pure functions)."]),
    ("def f(x):\n    import numpy as onp\n    from numpy import random as npr\n"
     "    onp.save('f', x)\n    return npr.rand(2) + np.random.rand(3)",
     ["Line 4, Col 4: numpy.save() is impure (involves random state or IO).",
      "Line 5, Col 25: np.random.rand() is impure. Use symplex.lax.rng for reproducible "
      "random numbers."]),
    ("    def f(self, x):\n        global G\n        G[0] = x\n        return random.random()",
     ["Line 2, Col 4: global declaration is impure. Pure functions cannot access global "
      "state.",
      "Line 3, Col 4: In-place mutation of non-local array 'G'. Use functional update: "
      "x = x.at[idx].set(val)",
      "Line 4, Col 11: random.random is impure. Use symplex.lax.rng instead."]),
    ("\"key\": lambda x: print(x),",
     ["Line 2, Col 21: Call to impure builtin 'print' is not allowed in pure functions."]),
    ("def outer(q):\n    def f(x):\n        nonlocal q\n        x.sort()\n        return eval('1')"
     "\n    return f(q)",
     ["Line 3, Col 8: nonlocal declaration is impure. Pure functions cannot close over "
      "mutable state.",
      "Line 4, Col 8: Call to mutating method '.sort()' is impure. Use functional operations "
      "instead.",
      "Line 5, Col 15: Call to impure builtin 'eval' is not allowed in pure functions."]),
    ("class A:\n    def m(self):\n        print(1)\ndef g(x):\n    return x", []),
    ("def f(x):\n    z = np.zeros(3)\n    z[0] = 1.0\n    w = x.at[0].set(2.0)\n    return z + w",
     []),
    ("def f(x):\n    for i in range(3):\n        x = x + i\n    return exec('x')",
     ["Line 4, Col 11: Call to impure builtin 'exec' is not allowed in pure functions."]),
)
"""(source, violations) as symplex 1.0.0's own check_purity raised them (run from the sdist on
each source); the function is named by its first definition breadth-first."""
ASYNC_ANSWER = ("async def f(x):\n    await x", "Async function 'f' is impure. SympleX only "
                "compiles synchronous pure functions.")


def _name(source: str) -> str:
    return first_function(__import__("ast").parse(prepare(source))).name


def _seed_answer(case: tuple) -> None:
    source, lines = case
    want = {"pure": not lines, "message": message(_name(source), lines) if lines else ""}
    assert purity_op(source, SEED) == want, (source, purity_op(source, SEED))


DEL_MESSAGE = ("Function 'f' is not pure. SympleX only compiles pure functions (like JAX).\n\n"
               "Impurity violations:\n  1. Line 2, Col 4: del statement is impure.\n\n"
               "To fix these, ensure your function:\n"
               "  - Has no side effects (no print, IO, global mutation)\n"
               "  - Does not mutate arrays in-place (use x = x.at[idx].set(val))\n"
               "  - Uses only pure operations (arithmetic, numpy, symplex APIs)\n")
"""symplex 1.0.0's whole message for SEED_ANSWERS[1]."""


def _whole_message(_case) -> None:
    assert purity_op(SEED_ANSWERS[1][0], SEED)["message"] == DEL_MESSAGE


def _witness(case: dict) -> None:
    assert purity_op(case["args"]["source"]) == case["spec"], case


def _async(_case) -> None:
    source, text = ASYNC_ANSWER
    assert purity_op(source, SEED) == {"pure": False, "message": text}


PURE_IN_SPEC = frozenset({*PURE_LINES, ERRATA_LINES[1], ERRATA_LINES[2], ERRATA_LINES[3]})
"""The lines the rules allow: the pure lines and the three local mutations SympleX misreads."""


@st.composite
def labelled(draw) -> tuple[str, bool]:
    """A function of one to four lines over its parameters, and whether the rules allow all."""
    head = draw(st.sampled_from(HEADS))
    names = [p.strip("*/ ") for p in head.split(",") if p.strip("*/ ")]
    chosen = [draw(st.sampled_from(PURE_LINES + IMPURE_LINES + ERRATA_LINES))
              for _ in range(draw(st.integers(1, 4)))]
    body = "\n".join(t.format(p=draw(st.sampled_from(names))) for t in chosen)
    body = "\n".join("    " + line for line in (body + "\nreturn z").split("\n"))
    return f"def f({head}):\n{body}", all(t in PURE_IN_SPEC for t in chosen)


def _rules(case: tuple[str, bool]) -> None:
    source, pure = case
    assert purity_op(source)["pure"] is pure, (source, purity_op(source))


@property_obligation(
    "PO14.450",
    "Under symplex@1.0.0, symplex.purity answers every pinned case (each rule, the walk's "
    "order, the skipped children of del and yield, imports met inside the function, a "
    "method's indented text, a dict entry's lambda, the first definition breadth-first, an "
    "async def) with the verdict and message symplex 1.0.0's own check_purity raised.",
    covers=("symplex.purity",),
    subject=purity_op,
    mutants=(
        Mutant.edit("del walks its children", "a del's subscript is walked too",
                    Walk.visit_Delete, 'self.flag("del statement is impure.", node)',
                    'self.flag("del statement is impure.", node); self.generic_visit(node)'),
        Mutant.edit("numbered from 0", "violations numbered from zero", message,
                    "enumerate(violations, 1)", "enumerate(violations)"),
        Mutant.edit("dict key kept", "a dict entry's key is not stripped", prepare,
                    'text = re.sub(', 'text = str.strip(text) or re.sub('),
        Mutant.edit("with flags no open call", "with open(...) skips its call", Walk.visit_With,
                    "self.generic_visit(node)", "return None"),
        Mutant.edit("columns from 1", "columns counted from one", Walk.flag,
                    "Col {node.col_offset}", "Col {node.col_offset + 1}"),
    ),
)
def seed_checker(_subject):
    return [Property("symplex 1.0.0's answers", _seed_answer, cases=lambda: SEED_ANSWERS),
            Property("an async def", _async, cases=lambda: [None]),
            Property("a whole message", _whole_message, cases=lambda: [None])]


@property_obligation(
    "PO14.451",
    "Under the default profile, a generated function of labelled lines (pure constructs, "
    "forbidden ones, and the constructs SympleX misjudges) is called pure exactly when every "
    "line it holds is allowed by the rules: try/except, random under another name, dict and "
    "set mutators, writes and random.seed are impure; tuple, annotated and for-tuple locals "
    "may be mutated.",
    covers=("symplex.purity",),
    subject=purity_op,
    mutants=(
        Mutant.edit("no try rule", "try/except passes (E14.410 as intent)", Walk.visit_Try,
                    "if node.handlers and", "if False and"),
        Mutant.edit("plain locals only", "tuple targets bind nothing", _bound_names,
                    "if E14_411 in errata or not", "if True or not"),
        Mutant.edit("positional parameters only", "keyword-only parameters are not parameters",
                    parameters, "if E14_412 not in errata:", "if False:"),
        Mutant.edit("update passes", "dict mutators are not listed", Walk.call_violation,
                    "more = MUTATING_MORE if", "more = () if"),
        Mutant.edit("writes pass", "a write method is pure", Walk.call_violation,
                    "if f.attr in WRITES and", "if False and"),
    ),
)
def default_rules(_subject):
    return [Property("each erratum's witness", _witness, cases=lambda: list(WITNESSES.values())),
            Property("labelled generated functions", _rules, strategy=labelled, examples=400)]
