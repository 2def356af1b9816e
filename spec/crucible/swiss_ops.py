"""Chapter 14: the Swiss table's ops. `swiss.build` interns a list of 64-bit hashes into a
table of a requested initial capacity and reports its control bytes, the slot of each hash
and the capacity after growth; `swiss.lookup` builds the same table and probes it for each
query (slot or -1, groups probed); `swiss.match` matches one 16-byte group against a tag on
the SIMD or the portable SWAR path."""

from __future__ import annotations

from ..core.errata import SEEDS, erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, HASH64, I64, U8, U16, U32, Field, List, record
from ..core.strategies import st
from ..pyc.wire import Named
from .swiss_table import (
    DEFAULT_CAPACITY,
    E14_700,
    GROUP_WIDTH,
    MAX_CAPACITY,
    MAX_HASHES,
    PATHS,
    build,
    build_op,
    extract_highbits,
    group_match,
    h2_tag,
    intern,
    lookup,
    lookup_op,
    match_empty,
    match_op,
    needs_rehash,
    probe,
    probe_base,
    rehash,
    swar_match_word,
    triangular,
    zero_byte_bits,
)

HASHES = Field(List(HASH64, MAX_HASHES), "64-bit hashes, interned in order")
CAPACITY = Field(U32, f"requested initial capacity (G doubled until it is reached), at most "
                      f"{MAX_CAPACITY}", DEFAULT_CAPACITY)


def hash_lists() -> st.SearchStrategy:
    """Hashes that crowd a few home groups and share tags, with repeats, in small tables."""
    crowded = st.builds(lambda top, low: top << 57 | low, st.integers(0, 3), st.integers(0, 64))
    return st.lists(crowded | st.integers(0, 2**64 - 1), max_size=160)


def build_domain() -> st.SearchStrategy:
    return st.fixed_dictionaries({"hashes": hash_lists(),
                                  "capacity": st.sampled_from([0, 1, 16, 17, 32, 64, 100])})


def lookup_domain() -> st.SearchStrategy:
    @st.composite
    def draw(d) -> dict:
        hashes = d(hash_lists())
        extra = d(st.lists(st.integers(0, 200) | st.integers(0, 2**64 - 1), max_size=20))
        queries = d(st.permutations(hashes + extra)) if hashes or extra else []
        return {"hashes": hashes, "capacity": d(st.sampled_from([0, 16, 32, 64])),
                "queries": queries[:MAX_HASHES]}

    return draw()


def lookup_bench(n: int, rng) -> list[dict]:
    """n tables of 256 random hashes grown from 16 slots, each asked 256 queries, half of them
    held."""
    out = []
    for _ in range(n):
        hashes = [int(h) for h in rng.integers(0, 2**64, 256, dtype="uint64")]
        absent = [int(h) for h in rng.integers(0, 2**64, 128, dtype="uint64")]
        out.append({"hashes": hashes, "capacity": 16, "queries": hashes[::2] + absent})
    return out


def match_domain() -> st.SearchStrategy:
    byte = st.sampled_from([0x80, 0x00, 0x01, 0x7F]) | st.integers(0, 255)
    return st.fixed_dictionaries({"ctrl": st.lists(byte, min_size=16, max_size=16).map(bytes),
                                  "h2": st.integers(0, 127), "path": st.integers(0, 1)})


TRIANGLE = [hex(4 * i) for i in range(33)]
"""33 hashes whose home is group 0 of a 64-slot table, all with tag 0: they fill group 0,
then group 1 (T(1) = 1), then go to group 3 (T(2) = 3)."""
ATOMS = ["0x0a974846f1c50877", "0x616790d2b5aec352", "0x939d315fa2e5f673",
         "0xe76a677baa5f1a55", "0xfd0f1a8e3434ab0a"]
"""The facts sheet's BOOL_TRUE, BOOL_FALSE, INTEGER 0, 1, -1 hashes (tags 5, 48, 73, 115,
126)."""


def build_edges() -> list[dict]:
    return [{"hashes": [], "capacity": 0}, {"hashes": ATOMS, "capacity": 16},
            {"hashes": ATOMS, "capacity": 32}, {"hashes": ATOMS + ATOMS[:2], "capacity": 16},
            {"hashes": TRIANGLE, "capacity": 64}, {"hashes": [hex(i) for i in range(15)],
                                                   "capacity": 16},
            {"hashes": [hex(i) for i in range(258)], "capacity": 100},
            {"hashes": [hex(i << 57) for i in range(20)], "capacity": 1}]


def lookup_edges() -> list[dict]:
    return [{"hashes": TRIANGLE, "capacity": 64, "queries": [TRIANGLE[0], TRIANGLE[16],
                                                             TRIANGLE[32], hex(4 * 33), "0x1"]},
            {"hashes": ATOMS, "capacity": 32, "queries": [*ATOMS, "0x0"]},
            {"hashes": [], "capacity": 16, "queries": ["0x0", hex(2**64 - 1)]}]


def match_edges() -> list[dict]:
    empty = [0x80] * 16
    return [{"ctrl": bytes(c).hex(), "h2": h2, "path": path} for path in PATHS
            for c, h2 in ((empty, 0), ([5, 4, 4, *empty[3:]], 5), ([*empty[:7], 5, *empty[8:]], 5),
                          ([*empty[:7], 5, 4, *empty[9:]], 5), ([1] * 16, 0),
                          (list(range(16)), 0), ([0x7F] * 16, 0x7F))]


declare(
    "swiss.build", chapter=14,
    summary="Intern 64-bit hashes into ExprPool's Swiss table: control bytes, each hash's slot "
            "and the capacity, count and rehashes after growth.",
    args=record(hashes=HASHES, capacity=CAPACITY),
    result=record(ctrl=Field(BYTES, "the control bytes, one per slot"),
                  capacity=Field(U32, "capacity after growth"),
                  count=Field(U32, "distinct hashes held"),
                  rehashes=Field(U32, "doublings"),
                  slots=Field(List(I64), "the final slot of each hash, in order")),
    spec=(build_op, build, intern, rehash, probe, probe_base, triangular, needs_rehash, h2_tag,
          match_empty),
    domain=build_domain, edges=build_edges,
    invalid=(InvalidCase("a capacity above the limit", lambda: st.fixed_dictionaries(
                 {"hashes": st.just([]), "capacity": st.integers(MAX_CAPACITY + 1, 2**32 - 1)})),
             InvalidCase("a hash wider than 64 bits", lambda: st.just(
                 {"hashes": [hex(2**64)], "capacity": 16}))),
    not_applicable={"numba": "swiss.lookup's kernel builds the same table",
                    "cupy": "one sequential table per request"},
)

declare(
    "swiss.lookup", chapter=14,
    summary="Build the table of swiss.build, then probe it for each query: the slot holding "
            "it or -1, and the groups probed.",
    args=record(hashes=HASHES, capacity=CAPACITY,
                queries=Field(List(HASH64, MAX_HASHES), "hashes to look up")),
    result=record(slots=Field(List(I64), "slot of each query; -1: absent"),
                  probes=Field(List(U32), "groups probed for each query")),
    spec=(lookup_op, lookup, probe, probe_base, group_match),
    domain=lookup_domain, edges=lookup_edges, bench=lookup_bench,
    invalid=(InvalidCase("a capacity above the limit", lambda: st.just(
                 {"hashes": [], "capacity": MAX_CAPACITY * 2, "queries": []})),),
    not_applicable={"cupy": "one sequential table per request"},
)

declare(
    "swiss.match", chapter=14,
    summary="Match one 16-byte control group against an H2 tag: the positions reported equal "
            "and empty, on the SIMD or the portable SWAR path.",
    args=record(ctrl=Field(BYTES, f"{GROUP_WIDTH} control bytes"),
                h2=Field(U8, "the tag, 0..127"),
                path=Field(Named(PATHS, "match path"), "simd or swar", 0)),
    result=record(match=Field(U16, "bit i: byte i reported equal to the tag"),
                  empty=Field(U16, "bit i: byte i reported empty (bit 7 set)")),
    spec=(match_op, group_match, match_empty, swar_match_word, zero_byte_bits, extract_highbits),
    errata=(E14_700,), domain=match_domain, edges=match_edges,
    invalid=(InvalidCase("a group of 15 bytes", lambda: st.just(
                 {"ctrl": "80" * 15, "h2": 0, "path": "simd"})),
             InvalidCase("a tag with bit 7 set", lambda: st.fixed_dictionaries(
                 {"ctrl": st.just("80" * 16), "h2": st.integers(128, 255)})),
             InvalidCase("an unknown path", lambda: st.just(
                 {"ctrl": "80" * 16, "h2": 0, "path": "avx"}), "bad_request")),
    not_applicable={"numba": "two word operations per group: no numeric core",
                    "cupy": "two word operations per group: no numeric core"},
)

_TOP_BYTE = "80" * 7 + "05" + "80" * 8
erratum(
    E14_700, "The portable SWAR match never reports byte 7 or byte 15 of a group",
    seed=SEEDS["crucible"],
    location="include/crucible/SwissTable.h CtrlGroup::extract_highbits (portable fallback)",
    ops=("swiss.match",),
    witness={"args": {"ctrl": _TOP_BYTE, "h2": 5, "path": "swar"},
             "spec": {"match": 0x80, "empty": 0xFF7F},
             "seed": {"match": 0, "empty": 0x7F7F}},
    flag="result",
    detail="extract_highbits gathers bit 7 of each byte with the multiplier "
           "0x0002040810204080, whose lowest set bit is bit 7: byte 7's high bit (bit 63) "
           "would need bit 0 and is shifted out, so neither match nor match_empty ever reports "
           "byte 7 or byte 15. Only a build with no SSE2 and no NEON takes this path. There "
           "the table still works: those two slots are never filled (so never need matching), "
           "and the other 14/16 = 7/8 of the slots always hold an empty byte before an insert "
           "because of the 7/8 rule, so probing ends; the table only wastes 1/8 of its slots. "
           "The spec gathers with 0x0002040810204081.",
)
