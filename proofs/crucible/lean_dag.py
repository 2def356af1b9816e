"""Chapter 9 obligations from the Lean formalization's Dag module: the kernel cache against a
dictionary, and replay and Merkle hashes of the smallest DAGs, on the spec's own functions."""

from __future__ import annotations

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.crucible import dag as dag_
from ...spec.crucible import kernel_cache as kc
from ...spec.crucible.merkle_dag import TraceNodeKind
from ..core.obligation import Property, property_obligation

CONTENTS = (1, 2, 5, 9, 2**32 + 1, 2**63 + 5)
"""Content hashes whose low 32 bits collide in a small table (1, 5, 9, 2^32 + 1 at C = 4)."""


def cache_runs() -> st.SearchStrategy:
    step = st.tuples(st.sampled_from(("insert", "lookup")), st.sampled_from(CONTENTS),
                     st.integers(0, 2), st.integers(1, 99))
    return st.tuples(st.sampled_from((4, 8)), st.lists(step, max_size=25))


def _check_cache(run: tuple[int, list]) -> None:
    capacity, steps = run
    c = kc.KernelCache(capacity)
    model: dict[tuple[int, int], int] = {}
    for kind, content, cap, kernel in steps:
        key = (content, cap)
        if kind == "insert":
            ok = kc.cache_insert(c, content, cap, kernel)
            assert ok == (key in model or len(model) < capacity), "insert refused with room"
            if ok:
                model[key] = kernel
        assert kc.cache_lookup(c, content, cap) == model.get(key), f"lookup {key}"
        assert c.size == len(model), f"size {c.size}, {len(model)} keys stored"
    for (content, cap), kernel in model.items():
        assert kc.cache_lookup(c, content, cap) == kernel, "an insert lost another key"


@property_obligation(
    "PO9.40",
    "The kernel cache against a dictionary (capacities 4 and 8, colliding content hashes, "
    "several capabilities): a lookup returns the kernel last inserted under its (content, "
    "capability) key and none for a key never inserted; inserting one key leaves every "
    "other key's kernel; the size counts distinct keys, so re-inserting a key does not grow "
    "it; an insert is refused only when the table is full of other keys.",
    covers=("dag.kernel_cache",),
    subject=kc.cache_insert,
    mutants=(
        Mutant.edit("recount", "overwriting a key counts it again", kc.cache_insert,
                    "c.kernels[i] = kernel\n            return True\n    return False",
                    "c.kernels[i] = kernel\n            c.size += 1\n            return True\n"
                    "    return False"),
        Mutant.edit("content only", "the capability is not compared on insert",
                    kc.cache_insert, "if c.keys[i] == key:", "if c.keys[i][0] == key[0]:"),
        Mutant.edit("wrong mask", "the probe masks with capacity instead of capacity - 1",
                    kc._probe, "& (c.capacity - 1)", "& c.capacity"),
    ),
)
def kernel_cache_is_a_map(subject):
    return [Property("against a dict", _check_cache, strategy=cache_runs, examples=300)]


def _smallest_dags() -> list[tuple[str, dag_.Dag]]:
    terminal = dag_.Node(TraceNodeKind.TERMINAL)
    return [("terminal", dag_.Dag([terminal], 0)),
            ("region, terminal", dag_.Dag([dag_.Node(TraceNodeKind.REGION, 1, 0xABC, 3),
                                           terminal], 0)),
            ("region", dag_.Dag([dag_.Node(TraceNodeKind.REGION, None, 0xABC, 3)], 0))]


def _check_small(case: tuple[str, dag_.Dag]) -> None:
    name, d = case
    out: list[int] = []
    assert dag_.replay(d, d.root, {}, out), f"{name}: replay failed"
    regions = [k for k, n in enumerate(d.nodes) if n.kind == TraceNodeKind.REGION]
    assert out == regions, f"{name}: replayed {out}"
    merkle = dag_.merkle_hashes(d)
    for k, n in enumerate(d.nodes):
        if n.kind == TraceNodeKind.TERMINAL:
            assert merkle[k] == 0, f"{name}: a terminal hashes to {merkle[k]:#x}"
        elif n.next is None:
            assert merkle[k] == n.content_hash, f"{name}: a lone region is not its content"


@property_obligation(
    "PO9.41",
    "The smallest DAGs: a terminal replays as nothing and hashes to 0; a region followed by "
    "a terminal, or by nothing, replays as that region, and a region without a continuation "
    "hashes to its content hash.",
    covers=("dag.replay", "dag.merkle"),
    subject=dag_.replay,
    mutants=(
        Mutant.edit("terminal fails", "reaching a terminal reports a failed replay",
                    dag_.replay, "if n.kind == TraceNodeKind.TERMINAL:\n            return True",
                    "if n.kind == TraceNodeKind.TERMINAL:\n            return False"),
        Mutant.edit("next recorded", "a region records its continuation's index",
                    dag_.replay, "out.append(k)", "out.append(n.next)"),
    ),
)
def smallest_dags(subject):
    return [Property("terminal and single region", _check_small, cases=_smallest_dags)]
