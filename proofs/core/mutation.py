"""Mutants of the spec (chapter 20): plausible bugs generated from the source of every spec
function, one syntax-tree edit each, planted in place by proofs/core/patch.py.

Operators: an arithmetic or bitwise operator swapped (`+`/`-`, `&`/`|`, `^`->`|`, `<<`/`>>`,
`+=`/`-=`), a comparison bound moved (`<`/`<=`, `>`/`>=`, `==`/`!=`), an integer constant off
by one, a mask dropped (`x & C` -> `x`), `and`/`or` swapped, a `not` dropped, and two adjacent
arguments or tuple fields swapped. A mutant's id names the function, the operator and the
place relative to the function's first line, so ids survive edits elsewhere in the module.
Module constants (`NAME = <integer>`) are mutated too: off by one, or by two when large.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import hashlib
import importlib
import inspect
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ... import spec as spec_package
from .patch import PatchError, clear_caches, compile_function, holding, source_of, unwrap
from .patch import planted as plant_code

SPEC_DIR = Path(spec_package.__file__).parent

MODULE_CHAPTERS: dict[str, int] = {
    "core.bits": 1, "core.layout": 1, "crucible.types": 2, "crucible.arena": 3,
    "crucible.trace_ring": 4, "crucible.meta_log": 4,
    "crucible.ring_protocol": 4, "crucible.tensor_meta": 5, "crucible.tensor_slot": 5,
    "crucible.trace_entry": 5, "crucible.vessel": 5,
    "crucible.background_thread": 6, "crucible.build_trace": 6, "crucible.trace_graph": 6,
    "crucible.pipeline": 6,
    "crucible.iteration_detector": 7, "crucible.hashing": 8, "crucible.content_hash": 8,
    "crucible.dag": 9, "crucible.merkle_dag": 9,
    "crucible.kernel_cache": 9, "crucible.memory_plan": 10, "crucible.plan_validity": 10,
    "crucible.pool_allocator": 11,
    "crucible.replay_engine": 11, "crucible.replay_machines": 11, "crucible.replay_region": 11,
    "crucible.context": 11,
    "crucible.vigil": 11, "crucible.philox": 17, "crucible.cdag": 18, "crucible.crtrace": 18,
    "crucible.cipher": 18, "crucible.transaction": 18,
    "crucible.region_cache": 18, "crucible.expr.arith": 14, "crucible.expr.pool": 14,
    "crucible.expr.canon": 14, "crucible.expr.divide": 14,
    "crucible.expr.logic": 14, "crucible.swiss_table": 14, "crucible.symbol_table": 14,
    "crucible.graph": 14, "crucible.graph_ir": 14,
    "crucible.graph_cse": 14, "crucible.graph_lower": 14, "crucible.effects": 15,
    "crucible.reflect": 16, "crucible.ckernel_table": 12,
    "crucible.libm": 12, "crucible.cpu_kernels": 12, "crucible.cpu_kernels_linear": 12,
    "crucible.cpu_kernels_norm": 12,
    "crucible.mt19937": 12, "crucible.cost_model": 13,
}
"""The spec modules that define Crucible's chapters 1-18 (wire declarations, schemas
and the registry are infrastructure, not spec algorithms, and are not mutated)."""

_INPUT_MAKERS = ("random_", "bench", "strategy", "draw_")
"""Functions that make inputs for benchmarks and tests, not spec behaviour: not mutated (nor
hypothesis strategies: composites, whose first argument is `draw`, and functions that return
a SearchStrategy)."""

_BINOPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
           ast.BitXor: ast.BitOr, ast.LShift: ast.RShift, ast.RShift: ast.LShift}
_CMPOPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
           ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
            ast.LShift: "<<", ast.RShift: ">>", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
            ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.And: "and", ast.Or: "or"}


@dataclass(frozen=True)
class Site:
    """One place an operator applies: the node's index in a walk of the function, what
    changes there, and the line and column relative to the function's first line (`nth`
    tells apart nested nodes that start at one column, as in `a | b | c`)."""

    index: int
    operator: str
    change: str
    line: int
    col: int
    nth: int = 1


@dataclass(frozen=True)
class MutantId:
    """A generated mutant: the function (module:qualname), its chapter and the site."""

    function: str
    chapter: int
    site: Site

    @property
    def id(self) -> str:
        s = self.site
        nth = f"/{s.nth}" if s.nth > 1 else ""
        return f"{self.function}@+{s.line}:{s.col}{nth} {s.operator} {s.change}"


_NOT_BEHAVIOUR = (ast.Raise, ast.Assert, ast.JoinedStr)
"""Error messages and internal assertions: no mutation inside them."""

_NO_SWAP = frozenset({"isinstance", "getattr", "hasattr", "setattr", "print"})
"""Calls whose swapped arguments are no plausible bug."""

_COMMUTATIVE = frozenset({"min", "max", "add", "mul", "mul_lo", "mul_hi", "umin", "wymix"})
"""Calls whose first two arguments commute: swapping them is no bug at all."""


def _plain(node: ast.AST) -> bool:
    return isinstance(node, ast.Name | ast.Attribute | ast.Subscript)


def _swappable(items: list[ast.AST]) -> Iterator[int]:
    """Positions i where items i and i+1 are both variables (an argument-order slip)."""
    for i in range(len(items) - 1):
        if _plain(items[i]) and _plain(items[i + 1]) and \
                ast.dump(items[i]) != ast.dump(items[i + 1]):
            yield i


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of a function body in a fixed depth-first order, docstrings left out; the
    insides of raise and assert statements and f-strings are visited as single nodes."""
    out: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        out.append(node)
        if isinstance(node, _NOT_BEHAVIOUR):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    fn = tree.body[0]
    body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
    for stmt in body:
        visit(stmt)
    return out


def _sites_of(node: ast.AST) -> Iterator[tuple[str, str]]:
    """(operator, change) for every mutation that applies at `node`."""
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _BINOPS:
        old = type(node.op)
        yield "op", f"{_SYMBOLS[old]}->{_SYMBOLS[_BINOPS[old]]}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd) and \
            isinstance(node.right, ast.Constant) and isinstance(node.right.value, int):
        yield "mask", f"drop & {node.right.value:#x}"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
        old = type(node.ops[0])
        yield "bound", f"{_SYMBOLS[old]}->{_SYMBOLS[_CMPOPS[old]]}"
    if isinstance(node, ast.Constant) and type(node.value) is int:
        yield "const", f"{node.value}->{node.value + 1}"
        if node.value > 0:
            yield "const", f"{node.value}->{node.value - 1}"
    if isinstance(node, ast.BoolOp):
        yield "logic", "and->or" if isinstance(node.op, ast.And) else "or->and"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "logic", "drop not"
    callee = _callee(node.func) if isinstance(node, ast.Call) else None
    if isinstance(node, ast.Call) and callee not in _NO_SWAP:
        for i in _swappable(node.args):
            if not (i == 0 and callee in _COMMUTATIVE):
                yield "swap", f"args {i},{i + 1}"
    if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load):
        for i in _swappable(node.elts):
            yield "swap", f"fields {i},{i + 1}"


def _callee(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _apply(node: ast.AST, operator: str, change: str) -> ast.AST:
    """The replacement of `node` for one mutation."""
    if operator == "op":
        node.op = _BINOPS[type(node.op)]()
    elif operator == "mask":
        return node.left
    elif operator == "bound":
        node.ops = [_CMPOPS[type(node.ops[0])]()]
    elif operator == "const":
        node.value = int(change.split("->")[1])
    elif operator == "logic" and change == "drop not":
        return node.operand
    elif operator == "logic":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif operator == "swap":
        items = node.args if isinstance(node, ast.Call) else node.elts
        i, j = map(int, change.split()[1].split(","))
        items[i], items[j] = items[j], items[i]
    return node


def sites(fn: types.FunctionType) -> list[Site]:
    """Every mutation site of `fn`, in a fixed order."""
    tree = ast.parse(source_of(fn).text)
    first = tree.body[0].lineno
    out: list[Site] = []
    seen: dict[tuple, int] = {}
    for index, node in enumerate(_walk(tree)):
        if isinstance(node, _NOT_BEHAVIOUR):
            continue
        for operator, change in _sites_of(node):
            key = (node.lineno - first, node.col_offset, operator, change)
            seen[key] = seen.get(key, 0) + 1
            out.append(Site(index, operator, change, *key[:2], seen[key]))
    return out


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return self.generic_visit(node)


def mutant_code(fn: types.FunctionType, site: Site) -> types.CodeType:
    """The code of `fn` with the mutation of `site` applied."""
    tree = ast.parse(source_of(fn).text)
    node = _walk(tree)[site.index]
    replacement = _apply(copy.deepcopy(node), site.operator, site.change)
    tree = ast.fix_missing_locations(_Replace(node, replacement).visit(tree))
    return compile_function(fn, tree)


def equivalent_by_code(fn: types.FunctionType, code: types.CodeType) -> bool:
    """True when the mutant compiles to the very bytecode and constants of the original."""
    a = fn.__code__
    return (a.co_code, a.co_consts) == (code.co_code, code.co_consts)


def spec_functions(chapters: set[int] | None = None) -> list[tuple[str, int, types.FunctionType]]:
    """(module:qualname, chapter, function) of every function and method defined in the
    spec modules of `chapters` (default: all of MODULE_CHAPTERS), in source order."""
    out: dict[str, tuple[str, int, types.FunctionType]] = {}
    for module_name, chapter in sorted(MODULE_CHAPTERS.items()):
        if chapters and chapter not in chapters:
            continue
        module = importlib.import_module(f"{spec_package.__name__}.{module_name}")
        for fn in _functions_of(module):
            name = f"{fn.__module__}:{fn.__qualname__}"
            out.setdefault(name, (name, chapter, fn))
    return sorted(out.values(), key=lambda t: (t[1], t[2].__module__,
                                               t[2].__code__.co_firstlineno))


def _functions_of(module: types.ModuleType) -> Iterator[types.FunctionType]:
    def from_namespace(ns: dict) -> Iterator[types.FunctionType]:
        for value in ns.values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                yield from from_namespace(vars(value))
                continue
            try:
                fn = unwrap(value)
            except PatchError:
                continue
            if fn.__module__ == module.__name__ and "<" not in fn.__qualname__ and \
                    fn.__code__.co_filename == module.__file__ and \
                    not fn.__name__.startswith(_INPUT_MAKERS) and \
                    fn.__code__.co_varnames[:1] != ("draw",) and \
                    "SearchStrategy" not in str(fn.__annotations__.get("return", "")):
                yield fn

    yield from from_namespace(vars(module))


def module_constants(chapters: set[int] | None = None) -> list[tuple[str, int, str, int]]:
    """(module, chapter, NAME, value) of every top-level `NAME = <integer>` of the spec
    modules of `chapters`: constants read at run time by the functions that use them."""
    out = []
    for module_name, chapter in sorted(MODULE_CHAPTERS.items()):
        if chapters and chapter not in chapters:
            continue
        module = importlib.import_module(f"{spec_package.__name__}.{module_name}")
        tree = ast.parse(Path(module.__file__).read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name) and \
                    isinstance(node.value, ast.Constant) and type(node.value.value) is int:
                out.append((module.__name__, chapter, node.targets[0].id, node.value.value))
    return out


def constant_changes(value: int) -> tuple[int, ...]:
    """Plausible wrong values of a constant: off by one, or for a large constant (a
    multiplier, a magic number) off by two, which keeps its parity."""
    step = 1 if value < 256 else 2
    return (value + step, value - step) if value >= step else (value + step,)


def generate(chapters: set[int] | None = None) -> list[MutantId]:
    """Every mutant of the spec functions and module constants of `chapters`."""
    out = [MutantId(name, chapter, site) for name, chapter, fn in spec_functions(chapters)
           for site in sites(fn)]
    for module, chapter, name, value in module_constants(chapters):
        for new in constant_changes(value):
            out.append(MutantId(f"{module}:{name}", chapter,
                                Site(-1, "const", f"{value}->{new}", 0, 0)))
    return out


def is_constant(mutant_id: str) -> bool:
    """True for a mutant of a module constant (`module:NAME@+0:0 const a->b`)."""
    function = mutant_id.split("@")[0]
    return function.rsplit(":", 1)[1].isupper()


@contextlib.contextmanager
def constant_planted(mutant_id: str) -> Iterator[None]:
    """Run the block with a module constant changed in its module and in every module of
    ours that imported it by name (the same value bound under the same name)."""
    function, *_, change = parse_id(mutant_id)
    module_name, name = function.split(":")
    old, new = (int(x) for x in change.split("->"))
    if getattr(sys.modules.get(module_name) or importlib.import_module(module_name), name,
               None) != old:
        raise PatchError(f"{mutant_id}: {name} is not {old} (was it edited?)")
    holders = [m for n, m in list(sys.modules.items())
               if n.startswith("crucible_spec.") and m is not None
               and type(vars(m).get(name)) is int and vars(m)[name] == old]
    for m in holders:
        setattr(m, name, new)
    clear_caches()
    try:
        with holding(mutant_id):
            yield
    finally:
        for m in holders:
            setattr(m, name, old)
        clear_caches()


def _names(code: types.CodeType) -> set[str]:
    """Global names a code object (and the code nested in it) reads."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


def mutated_functions(mutant_id: str) -> list[str]:
    """module:qualname of the spec functions a mutant changes: its function, or for a
    constant every spec function that reads the constant's name."""
    function = mutant_id.split("@")[0]
    if not is_constant(mutant_id):
        return [function]
    name = function.rsplit(":", 1)[1]
    return [qual for qual, _, fn in spec_functions() if name in _names(fn.__code__)]


def planted(mutant_id: str) -> contextlib.AbstractContextManager:
    """The mutant `mutant_id` planted while the context is open."""
    if is_constant(mutant_id):
        return constant_planted(mutant_id)
    fn, site = find(mutant_id)
    return plant_code(fn, mutant_code(fn, site))


def source_sha(fn: types.FunctionType) -> str:
    """Short digest of a function's source: a mutant result is stale when it changes."""
    return hashlib.sha256(source_of(fn).text.encode()).hexdigest()[:16]


def mutant_sha(mutant_id: str) -> str:
    """Digest of what a mutant edits (its function's source, or its constant's value)."""
    function = mutant_id.split("@")[0]
    if is_constant(mutant_id):
        module_name, name = function.split(":")
        value = getattr(importlib.import_module(module_name), name, None)
        return hashlib.sha256(f"{function}={value}".encode()).hexdigest()[:16]
    return source_sha(find(mutant_id)[0])


def parse_id(text: str) -> tuple[str, int, int, int, str, str]:
    """(function, line, col, nth, operator, change) of a mutant id."""
    where, operator, change = text.split(" ", 2)
    function, _, place = where.rpartition("@+")
    place, _, nth = place.partition("/")
    line, col = map(int, place.split(":"))
    return function, line, col, int(nth or 1), operator, change


def find(mutant_id: str) -> tuple[types.FunctionType, Site]:
    """The function and site a mutant id names."""
    from .patch import resolve

    function, *place = parse_id(mutant_id)
    fn = resolve(function)
    for site in sites(fn):
        if [site.line, site.col, site.nth, site.operator, site.change] == place:
            return fn, site
    raise PatchError(f"{mutant_id}: no such site in {function} (was it edited?)")


def describe(fn: types.FunctionType, site: Site) -> str:
    """The source line of the site, for reports."""
    lines = inspect.getsourcelines(fn)[0]
    return lines[site.line].strip() if site.line < len(lines) else ""
