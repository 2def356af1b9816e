"""Chapter 12 obligations of the CKernel taxonomy: the ids, families and names; the
registration table's register_op and classify; the node kind of every id."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.ckernel import TABLE_CAP, CKernelId
from ...spec.crucible.ckernel_ops import TEST_CKERNEL_ABSENT, TEST_CKERNEL_PAIRS
from ...spec.crucible.ckernel_table import (
    FAMILIES,
    SECTION_1_LAST,
    UNKNOWN_NAME,
    build_table,
    ckernel_name,
    classify,
    family_of,
    register_op,
)
from ...spec.crucible.graph import NodeKind, classify_node_kind
from ..core.obligation import Property, property_obligation

FACTS_FAMILY_COUNTS = (8, 6, 4, 6, 13, 9, 10, 8, 8, 16, 2, 2, 3, 4, 9, 6, 6, 4, 5, 10, 4, 2, 1)
"""The ops per header section, in order, as the facts sheet counts them (14 sections make
section 1's 99 ops, 9 make section 2's 47)."""

FACTS_NODE_KIND_RUNS = ((0, 24, NodeKind.EXTERN), (25, 56, NodeKind.POINTWISE),
                        (57, 62, NodeKind.REDUCTION), (63, 63, NodeKind.SCAN),
                        (64, 64, NodeKind.REDUCTION), (65, 72, NodeKind.EXTERN),
                        (73, 88, NodeKind.NOP), (89, 90, NodeKind.EXTERN),
                        (91, 91, NodeKind.MUTATION), (92, 108, NodeKind.EXTERN),
                        (109, 109, NodeKind.SCAN), (110, 147, NodeKind.EXTERN))
"""The facts sheet's classify_node_kind column for ids 0..147 (the sentinel too), as runs."""


# ── PO12.600: ids, families, names ────────────────────────────────────────────────────────────


def _ids_dense(families) -> None:
    ordinals = sorted(int(k) for k in CKernelId)
    assert ordinals == list(range(CKernelId.NUM_KERNELS + 1)), "ids not dense 0..147"
    assert CKernelId.NUM_KERNELS == 147 < TABLE_CAP <= 256, "ids do not fit a u8 table"
    assert tuple(last - first + 1 for _, first, last in families) == FACTS_FAMILY_COUNTS
    nxt = 1
    for _, first, last in families:
        assert first == nxt and first <= last, (first, last)
        nxt = last + 1
    assert nxt == CKernelId.NUM_KERNELS, "the sections do not end at the sentinel"
    assert sum(FACTS_FAMILY_COUNTS[:14]) == SECTION_1_LAST == families[13][2]


def _family_of_each(families) -> None:
    for name, first, last in families:
        for k in range(first, last + 1):
            assert family_of(k) == name, (k, family_of(k), name)
    assert family_of(0) == "Opaque"


def _name_of_byte(b: int) -> None:
    if b == CKernelId.NUM_KERNELS:
        try:
            ckernel_name(b)
        except InvalidInput:
            return
        raise AssertionError("the sentinel got a name")
    want = CKernelId(b).name if b < CKernelId.NUM_KERNELS else UNKNOWN_NAME
    assert ckernel_name(b) == want, (b, ckernel_name(b), want)
    assert (b < CKernelId.NUM_KERNELS) != want.startswith("<"), b


_SHIFTED = tuple(("Activations", 25, 36) if f == "Activations" else
                 ("Elementwise Binary", 37, 46) if f == "Elementwise Binary" else (f, a, b)
                 for f, a, b in FAMILIES)


@property_obligation(
    "PO12.600",
    "CKernelId's ordinals are dense 0..146 with the sentinel 147, below the table's 256; the 23 "
    "header sections are contiguous, start at 1, end at 146, hold the facts' counts (section 1 "
    "= ids 1..99) and family_of names each id's section; ckernel_name is the enumerator's "
    "spelling for 0..146, \"<unknown>\" for 148..255 and refuses 147.",
    covers=("types.ckernel_table", "ckernel.name"),
    subject=FAMILIES,
    mutants=(
        Mutant("mish is elementwise", "ACT_MISH counted in the next section", subject=_SHIFTED),
        Mutant.edit("half-open sections", "a section's last id falls out of it", family_of,
                    "first <= kernel_id <= last", "first <= kernel_id < last"),
        Mutant.edit("sentinel named", "147 answers a name and 255 is refused", ckernel_name,
                    "if kernel_id == CKernelId.NUM_KERNELS:", "if kernel_id == 255:"),
        Mutant.edit("unknown from 147 on", "146 counted unknown", ckernel_name,
                    "if kernel_id < CKernelId.NUM_KERNELS:",
                    "if kernel_id < CKernelId.COMM_BARRIER:"),
    ),
)
def taxonomy(families):
    return [Property("dense ids and contiguous sections", lambda _: _ids_dense(families),
                     cases=lambda: [None]),
            Property("each id's family", lambda _: _family_of_each(families),
                     cases=lambda: [None]),
            Property("the name of every byte", _name_of_byte, cases=lambda: range(256))]


# ── PO12.601 / PO12.602: the registration table ───────────────────────────────────────────────


def _model(registrations: list[tuple[int, int]]) -> dict[int, int]:
    """The table's meaning: the first 256 distinct hashes, each with its last id."""
    kept: dict[int, int] = {}
    for h, k in registrations:
        if h in kept or len(kept) < TABLE_CAP:
            kept[h] = k
    return kept


@st.composite
def _registrations(draw) -> list[tuple[int, int]]:
    pool = draw(st.lists(st.integers(0, 2**64 - 1), min_size=1,
                         max_size=draw(st.sampled_from([4, 40, 300])), unique=True))
    hashes = draw(st.lists(st.sampled_from(pool), max_size=330))
    return [(h, draw(st.integers(0, 146))) for h in hashes]


def _registration_cases() -> list[list[tuple[int, int]]]:
    seed = list(TEST_CKERNEL_PAIRS)
    many = [((300 - i) * 0x9E3779B97F4A7C15 % 2**64, 1 + i % 146) for i in range(300)]
    return [[], seed, seed + seed, [*seed, (0xCCCC000000000003, CKernelId.ACT_GELU)],
            [(5, 1), (1, 2), (5, 3), (9, 4), (1, 5)], many, many + many[:10]]


def _table_holds(registrations: list[tuple[int, int]]) -> None:
    table = build_table(registrations)
    hashes = [h for h, _ in table]
    assert all(a < b for a, b in itertools.pairwise(hashes)), \
        "not strictly ascending (unsorted or duplicated)"
    assert len(table) <= TABLE_CAP
    assert [(h, k) for h, k in table] == sorted(_model(registrations).items()), \
        "not the first 256 distinct hashes with their last ids"


def _classify_holds(registrations: list[tuple[int, int]]) -> None:
    table = build_table(registrations)
    want = _model(registrations)
    queries = {0, 2**64 - 1, *TEST_CKERNEL_ABSENT}
    for h, _ in registrations:
        queries |= {h, (h - 1) % 2**64, (h + 1) % 2**64}
    for q in queries:
        got = classify(table, q)
        assert got == want.get(q, CKernelId.OPAQUE), (hex(q), got)
        assert 0 <= got < CKernelId.NUM_KERNELS


@property_obligation(
    "PO12.601",
    "register_op keeps the table strictly ascending by hash (sorted, no duplicates) and at "
    "most 256 entries; after any sequence of registrations (more than 256 included) it holds "
    "exactly the first 256 distinct hashes, each with the id last registered for it.",
    covers=("ckernel.classify",),
    subject=register_op,
    mutants=(
        Mutant.edit("first wins", "a repeated hash keeps its first id", register_op,
                    "entry[1] = kernel_id", "pass"),
        Mutant.edit("no duplicate scan", "a repeated hash is appended again", register_op,
                    "if entry[0] == schema_hash:", "if False:"),
        Mutant.edit("descending", "sorted descending", register_op,
                    "entries.sort(key=lambda e: e[0])",
                    "entries.sort(key=lambda e: e[0], reverse=True)"),
        Mutant.edit("full at 255", "drops from the 256th distinct hash", register_op,
                    "len(entries) >= TABLE_CAP", "len(entries) >= TABLE_CAP - 1"),
        Mutant.edit("sorted by id", "sorted by the kernel id", register_op,
                    "key=lambda e: e[0]", "key=lambda e: e[1]"),
    ),
)
def table_invariants(_subject):
    return [Property("hand-picked sequences (the seed's test, 300 distinct hashes)",
                     _table_holds, cases=_registration_cases),
            Property("random sequences, repeats, past 256", _table_holds,
                     strategy=_registrations, examples=60)]


@property_obligation(
    "PO12.602",
    "classify is total and exact: for every table register_op builds and every u64 hash "
    "(registered ones, their neighbours, 0, 2^64 - 1, the seed test's absent hashes) it "
    "answers the id the table holds for the hash, and OPAQUE for a hash it does not hold.",
    covers=("ckernel.classify",),
    subject=classify,
    mutants=(
        Mutant.edit("hi = mid - 1", "the upper bound skips a candidate", classify,
                    "hi = mid\n", "hi = mid - 1\n"),
        Mutant.edit("flipped compare", "goes the wrong way", classify,
                    "if entries[mid][0] < schema_hash:", "if entries[mid][0] > schema_hash:"),
        Mutant.edit("loop ends early", "the last candidate is not looked at", classify,
                    "while lo < hi:", "while lo + 1 < hi:"),
        Mutant.edit("lo = mid", "the lower bound keeps a checked entry", classify,
                    "lo = mid + 1", "lo = mid + 2"),
    ),
)
def classify_total(_subject):
    return [Property("hand-picked sequences", _classify_holds, cases=_registration_cases),
            Property("random sequences", _classify_holds, strategy=_registrations,
                     examples=60)]


# ── PO12.603: node kinds ──────────────────────────────────────────────────────────────────────


def _node_kind_of(k: int) -> None:
    want = next(kind for first, last, kind in FACTS_NODE_KIND_RUNS if first <= k <= last)
    assert classify_node_kind(k) == want, (k, classify_node_kind(k), want)


@property_obligation(
    "PO12.603",
    "classify_node_kind is total over ids 0..147 (the sentinel too) and gives the facts' "
    "column: SCAN for REDUCE_CUMSUM and ASSOC_SCAN, MUTATION for COPY_, POINTWISE for 25..56, "
    "REDUCTION for the rest of 57..64, NOP for 73..88, EXTERN otherwise (OPAQUE included); "
    "CONSTANT, SORT and TEMPLATE never occur.",
    covers=("types.ckernel_table",),
    subject=classify_node_kind,
    mutants=(
        Mutant.edit("cumsum a reduction", "the scan rule forgets REDUCE_CUMSUM",
                    classify_node_kind,
                    "if kernel_id in (CKernelId.REDUCE_CUMSUM, CKernelId.ASSOC_SCAN):",
                    "if kernel_id == CKernelId.ASSOC_SCAN:"),
        Mutant.edit("relu extern", "pointwise starts at ACT_GELU", classify_node_kind,
                    "CKernelId.ACT_RELU <= kernel_id", "CKernelId.ACT_GELU <= kernel_id"),
        Mutant.edit("clone mutates", "MUTATION is CLONE instead of COPY_", classify_node_kind,
                    "kernel_id == CKernelId.COPY_", "kernel_id == CKernelId.CLONE"),
        Mutant.edit("unfold extern", "views end at STACK", classify_node_kind,
                    "<= CKernelId.UNFOLD", "<= CKernelId.STACK"),
    ),
)
def node_kinds(_subject):
    return [Property("every id and the sentinel", _node_kind_of,
                     cases=lambda: range(CKernelId.NUM_KERNELS + 1))]
