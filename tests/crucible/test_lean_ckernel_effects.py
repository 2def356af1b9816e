"""The Lean CKernel module's statements (ids, sections, family counts, the empty table) checked
against the spec's own enum, family table and registration table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.spec.crucible.ckernel import TABLE_CAP, CKernelId
from crucible_spec.spec.crucible.ckernel_table import (
    FAMILIES,
    SECTION_1_LAST,
    build_table,
    ckernel_name,
    classify,
    family_of,
)

OPS = 147
"""The Lean enumeration's size: OPAQUE and 146 ops, equal to the sentinel's value."""

LEAN_FAMILIES = {
    "LinAlg": (8, ("Linear Algebra",)),
    "Conv": (6, ("Convolution",)),
    "Attention": (4, ("Attention",)),
    "Norm": (6, ("Normalization",)),
    "Activation": (13, ("Activations",)),
    "EwiseBinary": (9, ("Elementwise Binary",)),
    "EwiseUnary": (10, ("Elementwise Unary",)),
    "Reduction": (8, ("Reductions",)),
    "Pooling": (8, ("Pooling",)),
    "DataMovement": (16, ("Data Movement / Indexing",)),
    "Embedding": (2, ("Embedding",)),
    "Copy": (2, ("Copy / I/O",)),
    "Vision": (3, ("Vision",)),
    "Fused": (4, ("Fused high-level",)),
    "LinAlgDecomp": (9, ("Linear Algebra Decompositions",)),
    "SSM": (6, ("SSM / Recurrence Primitives",)),
    "ProdInference": (6, ("Production Inference Primitives",)),
    "Rendering3D": (4, ("3D / Neural Rendering",)),
    "StructuredGraph": (5, ("Structured Matrix / Graph",)),
    "Comm": (11, ("Collective Communication", "Synchronization")),
    "IOOp": (4, ("I/O",)),
    "RNG": (2, ("RNG",)),
    "Opaque": (1, ("Opaque",)),
}
"""Each Lean family: its stated op count and the spec's header sections it corresponds to (the
Lean folds the one-op Synchronization section, COMM_BARRIER, into Comm)."""


def _ops() -> list[tuple[str, int]]:
    """Every enumerator name but the sentinel's, aliases included, with its value."""
    return [(n, int(m)) for n, m in CKernelId.__members__.items() if n != "NUM_KERNELS"]


def test_enumeration_length_and_no_duplicates():
    """147 op names, and no two names (aliases included) share an ordinal."""
    ops = _ops()
    assert len(ops) == OPS
    assert len({v for _, v in ops}) == OPS
    assert int(CKernelId.NUM_KERNELS) == OPS


def test_ordinal_injective():
    """Two enumerators with the same ordinal are the same enumerator."""
    ops = _ops()
    for a, va in ops:
        for b, vb in ops:
            assert (va == vb) == (a == b), (a, b)


def test_every_op_is_enumerated():
    """Every op is one of the ordinals 0..146, each of which names an op with a family."""
    values = {v for _, v in _ops()}
    assert values == set(range(OPS))
    for n, v in _ops():
        assert ckernel_name(v) == n
        family_of(v)


def test_ordinal_bounds():
    """Every op's ordinal is below the sentinel 147 and fits in a byte."""
    assert all(0 <= v < OPS and v < 256 for _, v in _ops())


def _section(k: int) -> str:
    """The section as the spec's family table places an id: OPAQUE, else section 1 for the
    families ending by SECTION_1_LAST, else section 2."""
    if family_of(k) == "Opaque":
        return "opaque"
    s1 = {name for name, _, last in FAMILIES if last <= SECTION_1_LAST}
    return "section1" if family_of(k) in s1 else "section2"


def test_sections_by_ordinal():
    """Section 1 is exactly ordinals 1..99, section 2 exactly 100..146, opaque only OPAQUE."""
    assert SECTION_1_LAST == 99
    for k in range(OPS):
        assert (_section(k) == "section1") == (1 <= k <= 99), k
        assert (_section(k) == "section2") == (100 <= k <= 146), k
        assert (_section(k) == "opaque") == (k == CKernelId.OPAQUE), k


def test_section_counts():
    """Section 1 holds 99 ops and section 2 holds 47."""
    sections = [_section(k) for k in range(OPS)]
    assert sections.count("section1") == 99
    assert sections.count("section2") == 47


def test_lean_families_partition_the_spec_sections():
    """The correspondence covers every spec family name exactly once."""
    spec_names = [f for _, (_, fs) in LEAN_FAMILIES.items() for f in fs]
    assert sorted(spec_names) == sorted({family_of(k) for k in range(OPS)})


@pytest.mark.parametrize("family", list(LEAN_FAMILIES))
def test_family_count(family):
    """Each Lean family holds the number of ops its statement gives."""
    count, spec_names = LEAN_FAMILIES[family]
    assert sum(family_of(k) in spec_names for k in range(OPS)) == count


def test_comm_family_is_the_comm_ops():
    """The 11 COMM_ ops (the barrier included) are exactly the communication sections."""
    comm = {v for n, v in _ops() if n.startswith("COMM_")}
    assert len(comm) == 11
    assert comm == {k for k in range(OPS) if family_of(k) in LEAN_FAMILIES["Comm"][1]}


def test_table_cap_holds_every_op():
    """The cap is at least 147, and all 147 ids registered under distinct hashes all stay."""
    assert OPS <= TABLE_CAP
    regs = [((k + 1) * 0x9E3779B97F4A7C15 % 2**64, k) for k in range(OPS)]
    table = build_table(regs)
    assert len(table) == OPS
    assert all(classify(table, h) == k for h, k in regs)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_empty_table_classifies_opaque(h):
    """No entry of the empty table matches any hash, so classify answers OPAQUE."""
    table = build_table([])
    assert table == []
    assert classify(table, h) == CKernelId.OPAQUE
