"""Chapter 14 obligations of ExprPool's Swiss table: triangular probing meets every group
(PO14.700), the 7/8 grow check keeps an empty byte on every probe sequence (PO14.701), the
SWAR match is the exact match plus the stated borrow case only (PO14.702), and a table built
through any number of rehashes finds every hash it holds, tagged with its top 7 bits
(PO14.703); a symbol's range starts at its kind's default and only narrows (PO14.704)."""

from __future__ import annotations

import struct
from functools import partial

import z3

from ...spec.core.bits import is_pow2
from ...spec.core.registry import REGISTRY, Mutant
from ...spec.crucible.swiss_ops import TRIANGLE, hash_lists
from ...spec.crucible.swiss_table import (
    E14_700,
    GROUP_WIDTH,
    K_EMPTY,
    build,
    byte_of,
    extract_highbits,
    h2_tag,
    initial_capacity,
    lookup,
    needs_rehash,
    place,
    probe,
    probe_base,
    rehash,
    swar_false_positive,
    swar_match_word,
    triangular,
    zero_byte_bits,
)
from ...spec.crucible.symbol_ops import FLOAT_TIGHTEN, call, run_call, table_domain
from ...spec.crucible.symbol_table import SymKind, bound_key, default_range, tighten_range
from ..core.obligation import Property, Query, property_obligation, z3_obligation

MAX_GROUP_BITS = 20
"""Tables of up to 2^20 groups (16 Mi slots) for the probe-sequence proof."""
FIRST_OFFSETS = (0, 1, 3, 6, 10)
"""The facts sheet's first group offsets of the probe sequence."""


def _bv(name: str):
    return z3.BitVec(name, 64)


@z3_obligation(
    "PO14.700",
    "Triangular probing meets every group: for every table of 2^k groups (k <= 20), the first "
    "2^k probe steps of any hash read 2^k different groups; and step p reads the group "
    "T(p) = 0, 1, 3, 6, 10 groups past the hash's home group (h * 16) & (capacity - 1) for "
    "p = 0..4, in any table of at least 16 groups.",
    covers=("swiss.build", "swiss.lookup"),
    subject=probe_base,
    mutants=(
        Mutant.edit("linear probing", "step p reads the group p past home",
                    triangular, "shr(mul(p, add(p, 1)), 1)", "p"),
        Mutant.edit("quadratic probing", "step p reads the group p^2 past home",
                    triangular, "shr(mul(p, add(p, 1)), 1)", "mul(p, p)"),
        Mutant.edit("triangle one behind", "step p reads T(p - 1) groups past home",
                    triangular, "add(p, 1)", "sub(p, 1)"),
        Mutant.edit("home from the top bits", "the top bits of the hash pick the home group",
                    probe_base, "home = mul(h, GROUP_WIDTH)", "home = shr(h, 44)"),
    ),
)
def probing_meets_every_group(base_of):
    h, p, d, cap = _bv("h"), _bv("p"), _bv("d"), _bv("capacity")
    out = []
    for k in range(MAX_GROUP_BITS + 1):
        n, c = 1 << k, z3.BitVecVal(GROUP_WIDTH << k, 64)
        same = base_of(h, p, c) == base_of(h, p + d, c)
        out.append(Query(f"{n} groups: two of the first {n} steps read one group",
                         z3.And(z3.ULT(p, n), d != 0, z3.ULT(d, n), z3.ULT(p + d, n), same)))
    big = z3.And(is_pow2(cap), z3.UGE(cap, GROUP_WIDTH * 16))
    for step, offset in enumerate(FIRST_OFFSETS):
        expected = (h * GROUP_WIDTH + offset * GROUP_WIDTH) & (cap - 1)
        out.append(Query(f"step {step} reads the group {offset} past home",
                         z3.And(big, base_of(h, z3.BitVecVal(step, 64), cap) != expected)))
    return out


@z3_obligation(
    "PO14.701",
    "The grow check before each insert keeps the load at most 7/8 and never grows earlier: "
    "for a power-of-two capacity of at least 16 (below 2^40) and any count, an insert that "
    "passes the check leaves count + 1 <= 7/8 of the capacity, so an empty byte remains and "
    "(PO14.700) lies on every probe sequence; a count the check sends to rehash is at least "
    "7/8 of the capacity; and after one doubling the check passes.",
    covers=("swiss.build", "swiss.lookup"),
    subject=needs_rehash,
    mutants=(
        Mutant.edit("3/4 load", "rehash once count * 4 >= capacity * 3", needs_rehash,
                    "mul(capacity, LOAD_NUM), mul(count, LOAD_DEN)",
                    "mul(capacity, 3), mul(count, 4)"),
        Mutant.edit("15/16 load", "rehash once count * 16 >= capacity * 15", needs_rehash,
                    "mul(capacity, LOAD_NUM), mul(count, LOAD_DEN)",
                    "mul(capacity, 15), mul(count, 16)"),
        Mutant.edit("strict check", "rehash only once count * 8 > capacity * 7", needs_rehash,
                    "ule(mul(capacity, LOAD_NUM), mul(count, LOAD_DEN))",
                    "ule(add(mul(capacity, LOAD_NUM), 1), mul(count, LOAD_DEN))"),
    ),
)
def load_rule(check):
    count, cap = _bv("count"), _bv("capacity")
    pre = z3.And(is_pow2(cap), z3.UGE(cap, GROUP_WIDTH), z3.ULT(cap, 1 << 40),
                 z3.ULE(count, cap))
    over = z3.UGT((count + 1) * 8, cap * 7)
    return [Query("an insert that passes the check ends above 7/8",
                  z3.And(pre, z3.Not(check(count, cap)), over)),
            Query("the check grows below 7/8",
                  z3.And(pre, check(count, cap), z3.ULT(count * 8, cap * 7))),
            Query("one doubling is not enough",
                  z3.And(pre, check(count, cap), check(count, cap * 2)))]


def _words(errata: frozenset[str]):
    word, h2 = _bv("word"), _bv("h2")
    return word, h2, swar_match_word(word, h2, errata)


def _bit(m, i: int):
    return z3.Extract(i, i, m) == 1


@z3_obligation(
    "PO14.702",
    "The portable SWAR match reports every byte of a word equal to the tag, and reports a "
    "byte that is not equal only in the stated case (it equals tag ^ 1 and a borrow reaches "
    "it through bytes equal to tag ^ 1 from a byte equal to the tag, below it in the same "
    "word), and always in that case; so a false positive only comes with a true match below "
    "it. The SWAR empty test reports exactly the bytes with bit 7 set. Under E14.700 z3 finds "
    "a word whose byte 7 equals the tag and is not reported.",
    covers=("swiss.match",),
    subject=swar_match_word,
    mutants=(
        Mutant.edit("seed's gather", "gather with 0x0002040810204080 (E14.700 always on)",
                    extract_highbits, "SEED_GATHER if E14_700 in errata else GATHER",
                    "SEED_GATHER"),
        Mutant.edit("no ~x", "the zero test drops & ~x", zero_byte_bits,
                    "sub(x, LO_MAGIC) & bnot(x) & HI_MAGIC", "sub(x, LO_MAGIC) & HI_MAGIC"),
        Mutant.edit("tag not broadcast", "the tag is xored into byte 0 only", swar_match_word,
                    "word ^ mul(h2, LO_MAGIC)", "word ^ h2"),
        Mutant.edit("borrow from a zero byte only", "the stated case omits the chain of "
                    "tag ^ 1 bytes", swar_false_positive,
                    "borrow = _or(x == 0, _and(x == 1, borrow))", "borrow = x == 0"),
    ),
)
def swar_match_is_exact_plus_borrow(match_word):
    word, h2 = _bv("word"), _bv("h2")
    got = match_word(word, h2)
    tag = z3.ULT(h2, 128)
    out = []
    for i in range(8):
        exact = byte_of(word, i) == h2
        fp = swar_false_positive(word, h2, i)
        below = z3.Or([byte_of(word, j) == h2 for j in range(i)]) if i else z3.BoolVal(False)
        out += [Query(f"byte {i}: an equal byte is not reported",
                      z3.And(tag, exact, z3.Not(_bit(got, i)))),
                Query(f"byte {i}: reported outside the stated case",
                      z3.And(tag, _bit(got, i), z3.Not(exact), z3.Not(fp))),
                Query(f"byte {i}: the stated case is not reported",
                      z3.And(tag, fp, z3.Not(_bit(got, i)))),
                Query(f"byte {i}: a false positive with no true match below",
                      z3.And(tag, fp, z3.Not(below))),
                Query(f"byte {i}: the empty test is not bit 7",
                      _bit(extract_highbits(word), i) != _bit(word, 8 * i + 7))]
    seed = swar_match_word(word, h2, frozenset({E14_700}))
    out.append(Query("E14.700: byte 7 equals the tag and is not reported",
                     z3.And(tag, byte_of(word, 7) == h2, z3.Not(_bit(seed, 7))), expect="sat"))
    return out


def _findable(t, hashes: list[int]) -> None:
    """Every hash is found in a slot holding it, tagged with its top 7 bits; nothing else is
    held; the capacity is a power of two >= 16 and the load at most 7/8."""
    cap = t.capacity
    assert cap >= GROUP_WIDTH and cap & (cap - 1) == 0, cap
    assert t.count == len(set(hashes)) and (t.count - 1) * 8 < cap * 7, (t.count, cap)
    held = {t.slots[i] for i in range(cap) if t.ctrl[i] != K_EMPTY}
    assert held == set(hashes) and sum(c != K_EMPTY for c in t.ctrl) == t.count
    for i in range(cap):
        assert t.ctrl[i] == K_EMPTY or t.ctrl[i] == t.slots[i] >> 57, (i, t.ctrl[i])
    for h in hashes:
        slot, probes = lookup(t, h)
        assert slot >= 0 and t.slots[slot] == h, hex(h)
        base = probe_base(h, probes - 1, cap)
        assert base <= slot < base + GROUP_WIDTH, (hex(h), slot, probes)
    for h in (h ^ 0x5A5A5A5A5A5A5A5A for h in hashes[:8]):
        if h in held:
            continue
        slot, probes = lookup(t, h)
        groups = [bytes(t.ctrl[b:b + GROUP_WIDTH]) for b in
                  (probe_base(h, p, cap) for p in range(probes))]
        assert slot == -1 and K_EMPTY in groups[-1], (hex(h), probes)
        assert all(K_EMPTY not in g for g in groups[:-1]), (hex(h), probes)


def _built(args: dict) -> None:
    t = build(args["hashes"], args["capacity"])
    _findable(t, args["hashes"])
    assert t.capacity == initial_capacity(args["capacity"]) << t.rehashes, (t.capacity,
                                                                            t.rehashes)
    if t.count:
        _findable(rehash(t), args["hashes"])


def _cases() -> list[dict]:
    """The triangle, 258 small hashes from capacity 1 (five rehashes) and crowded tags."""
    crowded = [(i % 3) << 57 | 64 * i for i in range(120)]
    return [{"hashes": [int(h, 16) for h in TRIANGLE], "capacity": 64},
            {"hashes": list(range(258)), "capacity": 1},
            {"hashes": crowded + crowded[:9], "capacity": 16}]


def _draws():
    from hypothesis import strategies as st

    return st.fixed_dictionaries({"hashes": hash_lists(),
                                  "capacity": st.sampled_from([0, 16, 32, 100])})


@property_obligation(
    "PO14.703",
    "A table built by interning any list of hashes, through every rehash, finds each hash it "
    "was given in a slot holding it, holds nothing else, tags each occupied slot with the top "
    "7 bits of its hash, has a power-of-two capacity of at least 16 (its initial one doubled "
    "once per rehash counted) and a load of at most 7/8; a lookup of a held hash ends in the "
    "group holding it, one of an absent hash in the first group on its sequence with an "
    "empty byte; one more rehash keeps all of that.",
    covers=("swiss.build", "swiss.lookup"),
    subject=build,
    mutants=(
        Mutant.edit("tag from the low bits", "the H2 tag is the low 7 bits", h2_tag,
                    "shr(h, H2_SHIFT)", "h & 0x7F"),
        Mutant.edit("rehash keeps the capacity", "rehash reinserts into a table of the same "
                    "size", rehash, "SwissTable(2 * t.capacity", "SwissTable(t.capacity"),
        Mutant.edit("rehash skips slot 0", "the reinsert walk starts at slot 1", rehash,
                    "range(t.capacity)", "range(1, t.capacity)"),
        Mutant.edit("reinsert one step late", "rehash places from the second probe step",
                    place, "probe_base(h, p, t.capacity)", "probe_base(h, p + 1, t.capacity)"),
        Mutant.edit("lookup stops after one group", "a lookup gives up after the home group",
                    probe, "if empties:", "if empties or not insert:"),
        Mutant.edit("a miss counts one group less", "an absent hash reports one group fewer "
                    "than it probed", probe, "return -1, p + 1", "return -1, p"),
        Mutant.edit("rehashes uncounted", "a rehash leaves the count of doublings", rehash,
                    "rehashes=t.rehashes + 1", "rehashes=t.rehashes"),
    ),
)
def rehash_keeps_every_hash(_subject):
    return [Property("the triangle, 258 hashes from capacity 1, crowded tags", _built,
                     cases=_cases),
            Property("generated hash lists", _built, strategy=_draws, examples=300)]


FACTS_RANGES = {SymKind.SIZE: (2, 2**63 - 1), SymKind.UNBACKED_INT: (-2**63 + 1, 2**63 - 1),
                SymKind.FLOAT: (-0x10000000000000, 0x7FF0000000000000),
                SymKind.UNBACKED_FLOAT: (-0x10000000000000, 0x7FF0000000000000)}
"""The facts sheet's default ranges (float ones: the bits of -inf and +inf as i64)."""


def _order(kind: SymKind, word: int):
    """The order a bound lives in: a double's for float kinds, else the signed integer's."""
    if kind in (SymKind.FLOAT, SymKind.UNBACKED_FLOAT):
        return struct.unpack("<d", struct.pack("<q", word))[0]
    return word


def _narrows(args: dict) -> None:
    table = []
    for i, a in enumerate(args["calls"]):
        if a["call"] != 0 and a["id"] >= len(table):
            continue
        before = None if a["call"] == 0 else vars(table[a["id"]]).copy()
        run_call(table, i, dict(a, kind=SymKind(a["kind"])))
        if a["call"] == 0:
            e = table[-1]
            assert (e.range_lower, e.range_upper) == FACTS_RANGES[e.kind], vars(e)
            continue
        e = table[a["id"]]
        key = partial(_order, e.kind)
        if a["call"] == 3:
            lower = a["lo"] if key(a["lo"]) > key(before["range_lower"]) else \
                before["range_lower"]
            upper = a["hi"] if key(a["hi"]) < key(before["range_upper"]) else \
                before["range_upper"]
            assert (e.range_lower, e.range_upper) == (lower, upper), (vars(e), a)
        else:
            assert (e.range_lower, e.range_upper) == (before["range_lower"],
                                                      before["range_upper"])


def _symbol_cases() -> list[dict]:
    """E14.701's witness and an integer symbol narrowed twice, decoded from the wire."""
    wire = [FLOAT_TIGHTEN, [call("add", kind=2), call("tighten_range", lo=-5, hi=-1),
                           call("tighten_range", lo=-9, hi=3)]]
    return [REGISTRY.ops["symbol.table"].args.decode({"calls": c}, "args") for c in wire]


@property_obligation(
    "PO14.704",
    "A symbol's range starts at its kind's default (SIZE [2, +inf], UNBACKED_INT "
    "[INT64_MIN + 1, INT64_MAX], float kinds the bits of [-inf, +inf]) and only narrows: "
    "tighten_range sets the lower bound to the greater and the upper to the lesser of old and "
    "new, as signed integers for integer kinds and as doubles for float kinds (E14.701 breaks "
    "the latter); no other call moves a bound.",
    covers=("symbol.table",),
    subject=run_call,
    mutants=(
        Mutant.edit("widening lower", "tighten_range takes the lesser lower bound",
                    tighten_range, "if bound_key(e, lo, errata) >",
                    "if bound_key(e, lo, errata) <"),
        Mutant.edit("widening upper", "tighten_range takes the greater upper bound",
                    tighten_range, "if bound_key(e, hi, errata) <",
                    "if bound_key(e, hi, errata) >"),
        Mutant.edit("floats as integers", "float bounds ordered as signed integers (E14.701 "
                    "always on)", bound_key, "e.kind in FLOAT_KINDS and E14_701 not in errata",
                    "False"),
        Mutant.edit("sizes from 1", "a SIZE symbol starts at [1, +inf]", default_range,
                    "return SIZE_LOWER, INT_POS_INF", "return 1, INT_POS_INF"),
    ),
)
def ranges_only_narrow(_subject):
    return [Property("E14.701's witness and an integer narrowing", _narrows,
                     cases=_symbol_cases),
            Property("generated calls", _narrows, strategy=table_domain, examples=300)]
