"""Chapter 15 obligations of the effect system: the friend table and the contexts' members
agree (Effects.h's static_asserts), the capability order is the lattice Pure < Init < Bg = Test
and creation respects it, and the discipline holds over this project's declared modules while
a planted effect in a pure module is caught."""

from __future__ import annotations

import inspect
import pkgutil
from importlib import import_module

from ... import spec as spec_pkg
from ...spec.core.registry import Mutant
from ...spec.crucible.effects import (
    Context,
    Token,
    call_token,
    declared_context,
    effects_of,
    friends,
    holds,
    import_names,
    is_pure,
    leq,
    may_create,
    members,
    module_context,
    violations,
    why,
)
from ..core.obligation import Property, property_obligation

PAIRS = [(c, t) for c in Context for t in Token]


def _friend_table(pair: tuple[Context, Token]) -> None:
    c, t = pair
    assert may_create(c, t) == (t in holds(c)), pair
    assert len(set(members(c))) == len(members(c)), c
    assert why(c, t) == ("friend" if may_create(c, t) else
                         "pure_context" if is_pure(c) else "not_a_friend"), pair


def _static_asserts(_: None) -> None:
    """Effects.h: Bg and Test hold all three, Init alloc and io only, nothing is Pure but the
    empty context."""
    assert holds(Context.BG) == holds(Context.TEST) == frozenset(Token)
    assert holds(Context.INIT) == {Token.ALLOC, Token.IO}
    assert [c for c in Context if is_pure(c)] == [Context.PURE]
    assert friends(Token.BLOCK) == {Context.BG, Context.TEST}


@property_obligation(
    "PO15.1",
    "A context may create a token exactly when it holds a member of the token's type: Alloc "
    "and IO befriend Bg, Init and Test, Block only Bg and Test; only the empty context is "
    "Pure, and every refusal names its reason.",
    covers=("fx.may_create",), subject=may_create,
    mutants=(
        Mutant.edit("init blocks", "Init befriended by Block", friends,
                    "frozenset({Context.BG, Context.TEST})",
                    "frozenset({Context.BG, Context.INIT, Context.TEST})"),
        Mutant.edit("init holds block", "Init given a block member", members,
                    "return (Token.ALLOC, Token.IO)\n", "return tuple(Token)\n"),
        Mutant.edit("test lacks io", "Test holds alloc and block only", members,
                    "return (Token.ALLOC, Token.IO, Token.BLOCK)",
                    "return (Token.ALLOC,) if context == Context.TEST else tuple(Token)"),
        Mutant.edit("pure may alloc", "the empty context befriended by Alloc", friends,
                    "frozenset({Context.BG, Context.INIT, Context.TEST})",
                    "frozenset(Context)"),
        Mutant.edit("wrong reason", "a pure context's refusal reported as not a friend", why,
                    'return "pure_context"', 'return "not_a_friend"'),
    ),
)
def friend_table(_subject):
    return [Property("every context against every token", _friend_table, cases=lambda: PAIRS),
            Property("Effects.h's static_asserts", _static_asserts, cases=lambda: [None])]


def _order(triple: tuple[Context, Context, Context]) -> None:
    a, b, c = triple
    assert leq(a, a)
    if leq(a, b) and leq(b, c):
        assert leq(a, c), triple
    if leq(a, b) and leq(b, a):
        assert holds(a) == holds(b), triple
    if leq(a, b):
        assert all(may_create(b, t) for t in Token if may_create(a, t)), triple


def _chain(_: None) -> None:
    """Pure < Init < Bg = Test, strictly where it says <."""
    p, i, b, t = Context.PURE, Context.INIT, Context.BG, Context.TEST
    assert leq(p, i) and not leq(i, p) and leq(i, b) and not leq(b, i)
    assert leq(b, t) and leq(t, b)
    assert all(leq(p, c) and leq(c, b) for c in Context)


@property_obligation(
    "PO15.2",
    "Ordering contexts by the tokens they hold is a preorder whose classes are "
    "Pure < Init < Bg = Test (reflexive, transitive, antisymmetric up to equal capabilities), "
    "and a context above another may create every token the lower one may.",
    covers=("fx.may_create",), subject=leq,
    mutants=(
        Mutant.edit("strict order", "leq is strict inclusion", leq,
                    "holds(a) <= holds(b)", "holds(a) < holds(b)"),
        Mutant.edit("reversed order", "leq compares the other way", leq,
                    "holds(a) <= holds(b)", "holds(b) <= holds(a)"),
        Mutant.edit("test above bg", "Test holds only alloc and io", members,
                    "return (Token.ALLOC, Token.IO, Token.BLOCK)",
                    "return (Token.ALLOC, Token.IO, Token.BLOCK)[:2 if context == Context.TEST "
                    "else 3]"),
    ),
)
def lattice(_subject):
    triples = [(a, b, c) for a in Context for b in Context for c in Context]
    return [Property("every triple of contexts", _order, cases=lambda: triples),
            Property("the chain Pure < Init < Bg = Test", _chain, cases=lambda: [None])]


PLANTED = [
    ("print('x')", Context.PURE, (), Token.IO),
    ("def f(p):\n    return open(p).read()", Context.PURE, (), Token.IO),
    ("from os import remove\ndef f(p):\n    remove(p)", Context.PURE, (), Token.IO),
    ("import time as t\ndef now():\n    return t.time()", Context.PURE, (), Token.IO),
    ("import random\ndef roll():\n    return random.random()", Context.PURE, (), Token.IO),
    ("import time\ndef wait():\n    time.sleep(1)", Context.INIT, (), Token.BLOCK),
    ("import threading\ndef lock():\n    return threading.Lock()", Context.INIT, (),
     Token.BLOCK),
    ("def buf(n):\n    return bytearray(n)", Context.PURE, (), Token.ALLOC),
    ("import numpy as np\ndef buf(n):\n    return np.zeros(n)", Context.PURE, ("other",),
     Token.ALLOC),
    ("import numpy as np\nclass K:\n    def buf(self, n):\n        return np.empty(n)",
     Context.PURE, (), Token.ALLOC),
]
"""Modules with one planted effect each: (source, context, ALLOCATES, the token it needs)."""
ALLOWED = [
    ("import numpy as np\ndef buf(n):\n    return np.zeros(n)", Context.PURE, ("buf",)),
    ("import time\ndef wait():\n    time.sleep(1)", Context.BG, ()),
    ("def show(x):\n    print(x)", Context.INIT, ()),
    ("import random\ndef rng(s):\n    return random.Random(s)", Context.PURE, ()),
    ("def f(xs):\n    return sorted(xs) + [len(xs)]", Context.PURE, ()),
]
"""Modules whose effects their context allows."""


def _planted(case: tuple) -> None:
    source, context, allocates, token = case
    found = violations(source, context, frozenset(allocates))
    assert [e.token for e in found] == [token], (source, found)


def _allowed(case: tuple) -> None:
    source, context, allocates = case
    assert violations(source, context, frozenset(allocates)) == [], source


def _project(name: str) -> None:
    module = import_module(name)
    declared = module_context(module)
    assert declared is not None, name
    assert violations(inspect.getsource(module), declared,
                      frozenset(getattr(module, "ALLOCATES", ()))) == [], name


def _declared_modules() -> list[str]:
    out = []
    for info in pkgutil.iter_modules(spec_pkg.__path__):
        name = f"{spec_pkg.__name__}.{info.name}"
        if declared_context(name) is not None or info.name in ("effects", "effects_ops",
                                                               "reflect", "reflect_ops"):
            out.append(name)
    return out


@property_obligation(
    "PO15.3",
    "The effect discipline: this project's recorder, pipeline and replay modules (and the "
    "chapter's own) make no call their declared context cannot make, and a planted IO, Block "
    "or Alloc call in a module whose context lacks the token is caught, through import "
    "aliases and inside classes, while calls the context allows pass.",
    covers=("fx.may_create",), subject=violations,
    mutants=(
        Mutant.edit("print allowed", "print is not IO", call_token,
                    '("open", "print", "input")', '("open", "input")'),
        Mutant.edit("aliases ignored", "from-imports are not resolved", import_names,
                    'names[a.asname or a.name] = f"{node.module}.{a.name}"', "pass"),
        Mutant.edit("sleep is io", "time.sleep counted as IO", call_token,
                    'name == "time.sleep" or root', "root"),
        Mutant.edit("alloc anywhere", "ALLOCATES not consulted per function", violations,
                    "e.function in allocates", "bool(allocates)"),
        Mutant.edit("classes skipped", "methods are not walked", effects_of,
                    "ast.AsyncFunctionDef, ast.ClassDef))]", "ast.AsyncFunctionDef))]"),
        Mutant.edit("seeded rng refused", "random.Random(seed) counted as IO", call_token,
                    'name != "random.Random" and ', ""),
    ),
)
def discipline(_subject):
    return [Property("planted effects", _planted, cases=lambda: PLANTED),
            Property("allowed effects", _allowed, cases=lambda: ALLOWED),
            Property("the project's declared modules", _project, cases=_declared_modules)]
