"""Chapter 12 ops of the CKernel taxonomy: the table of the 147 op ids (`types.ckernel_table`),
an id's name (`ckernel.name`) and the schema-hash registration table (`ckernel.classify`).
Kernel ids travel as CKernelId ordinals (u8), as in every other op."""

from __future__ import annotations

from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import HASH64, U8, U32, Enum, Field, List, Utf8, record
from ..core.strategies import st
from .ckernel import TABLE_CAP, CKernelId
from .ckernel_table import ckernel_name, classify_op, family_of, register_op, table_rows
from .ckernel_table import classify as classify_hash
from .graph import NodeKind, classify_node_kind

KERNEL_ID = Enum(CKernelId)
MAX_REGISTRATIONS = 4 * TABLE_CAP
"""ckernel.classify takes at most 1024 registrations (enough to overflow the table) and as
many queries."""

TEST_CKERNEL_PAIRS = ((0xAAAA000000000001, CKernelId.GEMM_LINEAR),
                      (0xBBBB000000000002, CKernelId.CONV2D),
                      (0xCCCC000000000003, CKernelId.SDPA),
                      (0xDDDD000000000004, CKernelId.ACT_RELU),
                      (0xEEEE000000000005, CKernelId.EWISE_ADD))
"""The seed's test_ckernel registrations."""
TEST_CKERNEL_ABSENT = (0xDEAD000000000000, 0, 2**64 - 1, 0x1, 0xFFFF000000000010)
"""Hashes test_ckernel asks after those registrations: all OPAQUE."""

NO_CORE = "a table of at most 256 entries per request, searched a few times: no numeric core"

# ── types.ckernel_table ───────────────────────────────────────────────────────────────────────

_ROW = record(id=Field(KERNEL_ID, "the op id"),
              name=Field(Utf8(), "ckernel_name: the enumerator's spelling"),
              family=Field(Utf8(), "the header section (\"Opaque\" for OPAQUE)"),
              node_kind=Field(Enum(NodeKind), "classify_node_kind"))

declare(
    "types.ckernel_table", chapter=12,
    summary="The 147 CKernelId op ids 0..146 in order: name, header-section family and the "
            "node kind lowering gives each.",
    args=record(), result=record(rows=Field(List(_ROW), "one row per id, in id order")),
    spec=(table_rows, ckernel_name, family_of, classify_node_kind),
    obligations=("PO12.600", "PO12.603"),
    edges=lambda: [{}],
    not_applicable={"numba": "a constant table: no numeric core",
                    "cupy": "a constant table: no numeric core"},
)

# ── ckernel.name ──────────────────────────────────────────────────────────────────────────────


def name_op(id: int) -> dict:
    return {"name": ckernel_name(id)}


declare(
    "ckernel.name", chapter=12,
    summary="ckernel_name of a byte: the enumerator's spelling for 0..146, \"<unknown>\" for "
            "148..255; 147 (the sentinel, undefined behaviour in the seed) is invalid_input.",
    args=record(id=Field(U8, "a CKernelId byte")),
    result=record(name=Field(Utf8(), "the name")),
    spec=(name_op, ckernel_name), obligations=("PO12.600",),
    domain=lambda: st.fixed_dictionaries({"id": st.integers(0, 146) | st.integers(148, 255)}),
    invalid=(InvalidCase("the sentinel NUM_KERNELS", lambda: st.just({"id": 147})),
             InvalidCase("a value wider than a byte", lambda: st.just({"id": 256}))),
    edges=lambda: [{"id": i} for i in (0, 1, 5, 91, 99, 100, 145, 146, 148, 200, 255)],
    bench=lambda n, rng: [{"id": int(i)} for i in rng.integers(0, 147, size=n)],
    not_applicable={"numba": "a name lookup: no numeric core",
                    "cupy": "a name lookup: no numeric core"},
)

# ── ckernel.classify ──────────────────────────────────────────────────────────────────────────

_REGISTRATION = record(schema_hash=Field(HASH64, "the op's schema hash"),
                       id=Field(KERNEL_ID, "the CKernelId it registers (0..146)"))


def _check_classify(args: dict) -> None:
    for k, r in enumerate(args["registrations"]):
        if r["id"] == CKernelId.NUM_KERNELS:
            raise InvalidInput(f"args.registrations[{k}].id: 147 is NUM_KERNELS, the sentinel, "
                               "not an op")


@st.composite
def _classify_args(draw) -> dict:
    """Registrations from a small pool of hashes (so repeats happen), sometimes more than the
    table holds, and queries mixing registered hashes, their neighbours and random ones."""
    big = draw(st.booleans())
    pool = draw(st.lists(st.integers(0, 2**64 - 1), min_size=1,
                         max_size=300 if big else 12, unique=True))
    hashes = draw(st.lists(st.sampled_from(pool), max_size=320 if big else 24))
    regs = [{"schema_hash": h, "id": CKernelId(draw(st.integers(0, 146)))} for h in hashes]
    near = [(h + d) % 2**64 for h in pool[:8] for d in (-1, 1)]
    queries = draw(st.lists(st.sampled_from(pool + near) | st.integers(0, 2**64 - 1),
                            max_size=24))
    return {"registrations": regs, "queries": queries}


def _pairs(pairs) -> list[dict]:
    return [{"schema_hash": hex(h), "id": int(k)} for h, k in pairs]


def classify_edges() -> list[dict]:
    seed_queries = [hex(h) for h, _ in TEST_CKERNEL_PAIRS] + [hex(h) for h in TEST_CKERNEL_ABSENT]
    full = [(i * 0x9E3779B97F4A7C15 % 2**64, 1 + i % 146) for i in range(300)]
    return [
        {"registrations": [], "queries": [hex(h) for h in TEST_CKERNEL_ABSENT]},
        {"registrations": _pairs(TEST_CKERNEL_PAIRS), "queries": seed_queries},
        {"registrations": _pairs(TEST_CKERNEL_PAIRS + TEST_CKERNEL_PAIRS),
         "queries": seed_queries},
        {"registrations": _pairs([(7, 1), (3, 2), (7, 5), (0, 3), (2**64 - 1, 4)]),
         "queries": ["0x0", "0x3", "0x7", "0xffffffffffffffff", "0x6", "0x8"]},
        {"registrations": _pairs(full), "queries": [hex(h) for h, _ in full[250:262]]},
    ]


def classify_bench(n: int, rng) -> list[dict]:
    """n requests, each 200 random registrations and 200 queries (half registered)."""
    out = []
    for _ in range(n):
        hashes = [int(h) for h in rng.integers(0, 2**64, 200, dtype="uint64")]
        ids = [int(k) for k in rng.integers(0, 147, 200)]
        absent = [int(h) for h in rng.integers(0, 2**64, 100, dtype="uint64")]
        out.append({"registrations": [{"schema_hash": h, "id": CKernelId(k)}
                                      for h, k in zip(hashes, ids, strict=True)],
                    "queries": hashes[::2] + absent})
    return out


declare(
    "ckernel.classify", chapter=12,
    summary="Register (schema_hash, id) pairs in order into an empty CKernelTable (256 entries; "
            "a repeated hash keeps its place and takes the later id; past 256 dropped; sorted "
            "ascending), then classify each query by binary search (OPAQUE when absent).",
    args=record(registrations=Field(List(_REGISTRATION, MAX_REGISTRATIONS),
                                    "register_op calls, in order"),
                queries=Field(List(HASH64, MAX_REGISTRATIONS), "schema hashes to classify")),
    result=record(entries=Field(List(_REGISTRATION), "the table, ascending by hash"),
                  size=Field(U32, "entries held (at most 256)"),
                  ids=Field(List(KERNEL_ID), "classify of each query")),
    spec=(classify_op, register_op, classify_hash), check=_check_classify,
    obligations=("PO12.601", "PO12.602"),
    domain=_classify_args, edges=classify_edges, bench=classify_bench,
    invalid=(InvalidCase("a registration of the sentinel", lambda: st.just(
                 {"registrations": [{"schema_hash": "0x1", "id": 147}], "queries": []})),
             InvalidCase("an id past the sentinel", lambda: st.just(
                 {"registrations": [{"schema_hash": "0x1", "id": 200}], "queries": []})),
             InvalidCase("a hash wider than 64 bits", lambda: st.just(
                 {"registrations": [], "queries": [hex(2**64)]})),
             InvalidCase("more registrations than the limit", lambda: st.just(
                 {"registrations": [{"schema_hash": "0x1", "id": 1}] * (MAX_REGISTRATIONS + 1),
                  "queries": []}))),
    not_applicable={"numba": NO_CORE, "cupy": NO_CORE},
)
