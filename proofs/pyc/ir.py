"""Chapter 14 obligations of PyC's IR: verify against its own well-formedness predicate, the
canonical text as an injective code of a verified module, and the cache key's folds.

The text is decoded back here by a parser written from the chapter's line format (with the
spec's escapes), independent of `serialize`."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.pyc.cache import CompileOptions, cache_key, fold
from ...spec.pyc.fingerprint import modules, serialize, verify_edges
from ...spec.pyc.interp import run_module
from ...spec.pyc.ir import DType, OpKind, PycModule, PycOp, module_from_wire, verify, well_formed
from ...spec.pyc.pass_ops import modules_with_inputs
from ...spec.pyc.passes import canonicalize, fuse, graph_breaks, peak_live, run_passes, speculative
from ..core.obligation import Property, property_obligation

_LINE = re.compile(r"^(\d+):([a-z_]+):((?:[^:\\]|\\.)*):dtype=(\d+):shape=([\dx]*):"
                   r"inputs=([\d,]*)$")
_UNESCAPE = {"\\\\": "\\", "\\:": ":", "\\n": "\n"}


def parse_text(text: str) -> PycModule:
    """A module from its canonical text (the chapter's line format, escapes undone)."""
    ops = []
    lines = text.split("\n")
    assert lines[-1] == "", "the text ends with a newline"
    for i, line in enumerate(lines[:-1]):
        m = _LINE.match(line)
        assert m and int(m.group(1)) == i, (i, line)
        name = re.sub(r"\\.", lambda e: _UNESCAPE[e.group(0)], m.group(3))
        shape = tuple(int(d) for d in m.group(5).split("x")) if m.group(5) else ()
        inputs = tuple(int(j) for j in m.group(6).split(",")) if m.group(6) else ()
        ops.append(PycOp(OpKind[m.group(2).upper()], name, DType(int(m.group(4))), shape,
                         inputs))
    return PycModule(tuple(ops))


def _verify_is_predicate(args: dict) -> None:
    m = module_from_wire(args["module"])
    assert (verify(m) == 0) == well_formed(m), (verify(m), m)


def _round_trip(args: dict) -> None:
    m = module_from_wire(args["module"])
    assert parse_text(serialize(m)) == m, m


@property_obligation(
    "PO14.200",
    "pyc.verify answers 0 exactly for the modules the well-formedness predicate accepts (some "
    "ops, each with at most 8 earlier inputs and at most 8 positive dimensions), and the "
    "canonical text of a verified module parses back to that module, so two modules never "
    "share a text or a fingerprint's pre-image (E14.1).",
    covers=("pyc.verify", "pyc.serialize", "pyc.fingerprint"),
    subject=verify,
    mutants=(
        Mutant.edit("self input", "an op may name itself as input", verify,
                    "j < 0 or j >= i", "j < 0 or j > i"),
        Mutant.edit("rank 9 passes", "the shape check allows 9 dimensions", verify,
                    "len(op.shape) > MAX_DIMS", "len(op.shape) > MAX_DIMS + 1"),
        Mutant.edit("zero dimension", "a dimension of 0 passes", verify,
                    "any(d <= 0 for d in op.shape)", "any(d < 0 for d in op.shape)"),
        Mutant.edit("colon unescaped", "':' is written raw in a name",
                    serialize, "name_text(op.name, errata)", "op.name"),
    ),
)
def verify_and_text(_subject):
    return [
        Property("verify against the predicate, edges", _verify_is_predicate,
                 cases=verify_edges),
        Property("verify against the predicate", _verify_is_predicate,
                 strategy=lambda: modules()),
        Property("text parses back", _round_trip, strategy=lambda: modules(True)),
    ]


def _strings_ordered(case: tuple[str, str]) -> None:
    a, b = case
    one = cache_key(7, 0, CompileOptions(autotune_db_path=a, dist_enabled=True,
                                         dist_backend_path=b))
    two = cache_key(7, 0, CompileOptions(autotune_db_path=b, dist_enabled=True,
                                         dist_backend_path=a))
    assert one != two, case


def _fold_order(_case: None) -> None:
    key = fold(fold(1, 2), 3)
    assert key != fold(fold(1, 3), 2) and fold(0, 5) == fold(5, 0)
    base = cache_key(0, 0, CompileOptions())
    assert base != cache_key(0, 0, CompileOptions(enable_fusion=False))
    assert base != cache_key(0, 1, CompileOptions())


@property_obligation(
    "PO14.201",
    "The cache key tells apart options that differ only by which string sits in which place "
    "(E14.2: the autotune and backend paths of distributed options), and every number of the "
    "options reaches it: the fusion flag and the backend change the key of the default "
    "options.",
    covers=("pyc.cache_key",),
    subject=cache_key,
    mutants=(
        Mutant.edit("strings by XOR", "the seed's fold: strings XORed into the key",
                    cache_key, "key = key ^ h if E14_2 in errata else fold(key, h ^ "
                    "(position + 1))", "key = key ^ h"),
        Mutant.edit("fusion dropped", "the fusion flag does not enter the key", cache_key,
                    "(backend, o.enable_fusion,", "(backend, False,"),
    ),
)
def cache_key_folds(_subject):
    words = st.text(st.sampled_from("ab.{}"), min_size=1, max_size=4)
    return [
        Property("swapped strings", _strings_ordered,
                 strategy=lambda: st.tuples(words, words).filter(lambda t: t[0] != t[1])),
        Property("numbers reach the key", _fold_order, cases=lambda: [None]),
    ]


def _same_outputs(args: dict) -> None:
    m = module_from_wire(args["module"])
    feed = [np.frombuffer(np.array(x, dtype=np.uint32).tobytes(), dtype=np.float32)
            for x in args["inputs"]]
    before = run_module(m, feed)
    after = run_module(run_passes(m)[0], feed)
    assert len(before) == len(after)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(before, after, strict=True)), m


def _chain_peak(n: int) -> None:
    ops = [PycOp(OpKind.INPUT, "x", shape=(2,))]
    ops += [PycOp(OpKind.RELU, "", shape=(2,), inputs=(i,)) for i in range(n - 1)]
    got = run_passes(PycModule(tuple(ops)))[1].peak_live_values
    assert got == min(n, 2), (n, got)


@property_obligation(
    "PO14.202",
    "The pass pipeline does not change what a module computes: every runnable matmul, add and "
    "relu chain gives the same float32 bits before and after it (E14.3); and liveness counts "
    "the values alive at once: a chain of n unary ops needs 2 live values, not n (E14.4).",
    covers=("pyc.passes", "pyc.run"),
    subject=run_passes,
    mutants=(
        Mutant.edit("seed fusion", "the matmul absorbs the next op and its epilogue is lost",
                    fuse, "if not (E14_3 in errata and fusable(ops, i)):",
                    "if not fusable(ops, i):"),
        Mutant.edit("seed liveness", "values with a reader are never freed", peak_live,
                    "if E14_4 in errata:", "if True:"),
    ),
)
def passes_keep_meaning(_subject):
    return [
        Property("outputs before and after the passes", _same_outputs,
                 strategy=modules_with_inputs),
        Property("a chain of n ops", _chain_peak, cases=lambda: range(1, 12)),
    ]


_RUNNABLE_KINDS = {"input", "matmul", "add", "relu", "output"}


def _report_reads_the_module(args: dict) -> None:
    m = module_from_wire(args["module"])
    after, r = run_passes(m, {"fusion": False, "shape_inference": False})
    kinds = [op.kind.name.lower() for op in m.ops]
    breaks = [i for i, k in enumerate(kinds) if k not in _RUNNABLE_KINDS]
    assert [op.name for op in after.ops] == [op.name or f"op_{i}" for i, op in enumerate(m.ops)]
    assert r.transformed_ops == sum(1 for op in m.ops if not op.name)
    assert sum(r.breaks.values()) == len(breaks)
    assert r.first_break_id == (breaks[0] if breaks else -1), (r.first_break_id, breaks)
    assert r.plan_count == (3 if not breaks else 2 if 4 * len(breaks) <= len(kinds) else 1)
    assert r.summary.startswith(f"breaks={len(breaks)} "), r.summary
    assert r.passes_run == 5


@property_obligation(
    "PO14.204",
    "The pass report reads the module: every empty name becomes op_<index> and is counted once, "
    "the graph breaks are exactly the ops of kinds the compiler cannot run with the first of "
    "them named, and the speculative plan count is 3 without a break, 2 while at most a quarter "
    "of the ops break, else 1.",
    covers=("pyc.passes",),
    subject=run_passes,
    mutants=(
        Mutant.edit("name off by one", "an empty name takes the next index", canonicalize,
                    'name=f"op_{i}"', 'name=f"op_{i + 1}"'),
        Mutant.edit("last break named", "every break overwrites the first", graph_breaks,
                    "if r.first_break_id < 0:", "if True:"),
        Mutant.edit("gelu runs", "gelu counted as runnable", graph_breaks,
                    "if op.kind in SUPPORTED:", "if op.kind in SUPPORTED or op.kind == 5:"),
        Mutant.edit("plan count bound", "two plans only above three quarters", speculative,
                    "r.compilability >= 0.75", "r.compilability > 0.75"),
    ),
)
def pass_report(_subject):
    return [Property("reports of generated modules", _report_reads_the_module,
                     strategy=lambda: modules(True))]
