"""Chapter 15: Crucible's effect system (Effects.h, namespace fx): capability tokens, the
contexts that may create them, and the same discipline checked over this project's modules.

1. Three tokens, Alloc, IO and Block, are empty types whose default constructor is private.
   A token names its friends, the contexts that may create one: Alloc and IO name Bg, Init
   and Test; Block names Bg and Test (initialisation must not block).
2. A context holds one token member per friendship: Bg {alloc, io, block}, Init {alloc, io},
   Test {alloc, io, block}. Code outside any context (the foreground hot path) holds none:
   it is Pure, and no token can be made there.
3. CanAlloc, CanIO and CanBlock hold of a context exactly when it holds that member; Pure
   holds when none of them does. Ordering contexts by the tokens they hold gives the
   capability lattice Pure < Init < Bg = Test (Bg and Test hold the same tokens).
4. An effectful function takes its token by value; holding the token is the permission.

In C++ all of this is checked at compile time and costs nothing at run time: the private
default constructors and friend lists reject a token made anywhere else, the concepts and
static_asserts pin each context's members, and each context is one byte. The spec states
the friend table and the members as functions, and checks their agreement (PO15.1) and the
order (PO15.2) by enumeration.

5. The same discipline over this project's own Python: a module declares its context with a
   module-level `EFFECTS = "pure" | "init" | "bg" | "test"` (modules written before the
   declaration existed are declared in `declared_context`), and may name in `ALLOCATES` the
   functions that take an Alloc token. An ast walk resolves every call's dotted name through
   the module's imports and classifies it: IO (open, print, input, os, sys, io, pathlib,
   socket, subprocess, shutil, the clock in time, random's shared generator), Block
   (time.sleep, threading, multiprocessing, queue, asyncio) or Alloc (bytearray, numpy
   buffers, array, mmap). A call whose token the module's context cannot hold is a
   violation; so is an Alloc call outside the functions in ALLOCATES unless the context
   holds Alloc itself.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
from dataclasses import dataclass

EFFECTS = "pure"


class Token(enum.IntEnum):
    """fx::Alloc, fx::IO, fx::Block."""

    ALLOC = 0
    IO = 1
    BLOCK = 2


class Context(enum.IntEnum):
    """Where code runs: no context (Pure), fx::Init, fx::Bg, fx::Test."""

    PURE = 0
    INIT = 1
    BG = 2
    TEST = 3


CONTEXT_NAMES = ("pure", "init", "bg", "test")
TOKEN_NAMES = ("alloc", "io", "block")


def friends(token: Token) -> frozenset[Context]:
    """The contexts a token befriends: the only ones that may create it (step 1)."""
    if token == Token.BLOCK:
        return frozenset({Context.BG, Context.TEST})
    return frozenset({Context.BG, Context.INIT, Context.TEST})


def members(context: Context) -> tuple[Token, ...]:
    """The token members a context holds, in declaration order (step 2)."""
    if context == Context.PURE:
        return ()
    if context == Context.INIT:
        return (Token.ALLOC, Token.IO)
    return (Token.ALLOC, Token.IO, Token.BLOCK)


def may_create(context: Context, token: Token) -> bool:
    """Whether `context` may default-construct `token` (it is a friend)."""
    return context in friends(token)


def holds(context: Context) -> frozenset[Token]:
    """CanAlloc / CanIO / CanBlock as a set: the tokens the context holds (step 3)."""
    return frozenset(members(context))


def is_pure(context: Context) -> bool:
    """fx::Pure: the context holds no token."""
    return not holds(context)


def leq(a: Context, b: Context) -> bool:
    """a <= b in the capability lattice: everything a may do, b may do."""
    return holds(a) <= holds(b)


def why(context: Context, token: Token) -> str:
    """Why `context` may or may not create `token`."""
    if may_create(context, token):
        return "friend"
    if is_pure(context):
        return "pure_context"
    return "not_a_friend"


WHY = ("friend", "pure_context", "not_a_friend")


# ── the discipline over this project's modules (step 5) ──────────────────────────────────────

@dataclass(frozen=True)
class Effect:
    """One effectful call: where it is and which token it needs."""

    function: str
    line: int
    call: str
    token: Token


def call_token(name: str) -> Token | None:
    """The token a call of the dotted name `name` needs, or None for an effect-free call."""
    root = name.split(".", 1)[0]
    if name == "time.sleep" or root in ("threading", "multiprocessing", "queue", "asyncio"):
        return Token.BLOCK
    if name != "random.Random" and (name in ("open", "print", "input") or root in (
            "os", "sys", "io", "pathlib", "socket", "subprocess", "shutil", "time", "random")):
        return Token.IO
    if name in ("bytearray", "mmap.mmap", "array.array") or name in (
            "numpy.zeros", "numpy.empty", "numpy.ones", "numpy.full"):
        return Token.ALLOC
    return None


def import_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted origin for every import in the module."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else \
                    a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def dotted(node: ast.expr) -> str | None:
    """The dotted text of a callee (`os.path.join`), or None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def effects_of(source: str) -> list[Effect]:
    """Every effectful call in a module's source, with its enclosing top-level function."""
    tree = ast.parse(source)
    names = import_names(tree)
    out: list[Effect] = []
    scopes = [(n.name, n) for n in tree.body
              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    scopes.append(("<module>", ast.Module(
        body=[n for n in tree.body if not isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))], type_ignores=[])))
    for scope, node in scopes:
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            text = dotted(call.func)
            if text is None:
                continue
            head, _, rest = text.partition(".")
            full = names.get(head, head) + (f".{rest}" if rest else "")
            token = call_token(full)
            if token is not None:
                out.append(Effect(scope, call.lineno, full, token))
    return sorted(out, key=lambda e: (e.line, e.call))


def violations(source: str, context: Context, allocates: frozenset[str] = frozenset()
               ) -> list[Effect]:
    """The effectful calls that a module running in `context` may not make."""
    allowed = holds(context)
    return [e for e in effects_of(source)
            if e.token not in allowed
            and not (e.token == Token.ALLOC and e.function in allocates)]


def declared_context(module: str) -> Context | None:
    """The context of this project's recorder, pipeline and replay modules, declared here
    because they predate `EFFECTS`; None for a module declared nowhere."""
    recorder = ("trace_ring", "trace_entry", "meta_log", "build_trace", "iteration_detector")
    pipeline = ("pipeline", "merkle_dag", "content_hash")
    replay = ("replay_engine", "replay_region", "context", "region_cache")
    if module.rsplit(".", 1)[-1] in recorder + pipeline + replay:
        return Context.PURE
    return None


def module_context(module: object) -> Context | None:
    """A module's own `EFFECTS` declaration, else the table's."""
    declared = getattr(module, "EFFECTS", None)
    if declared is not None:
        return Context(CONTEXT_NAMES.index(declared))
    return declared_context(module.__name__)


def check_module(name: str) -> list[Effect]:
    """The violations in the module `name` (none for an undeclared module)."""
    module = importlib.import_module(name)
    context = module_context(module)
    if context is None:
        return []
    return violations(inspect.getsource(module), context,
                      frozenset(getattr(module, "ALLOCATES", ())))
