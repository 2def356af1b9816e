"""Chapter 14: the Swiss table of ExprPool (SwissTable.h control-byte groups, and the probe,
insert and rehash of ExprPool::intern_node), keyed here by the 64-bit hash alone.

1. A table of `capacity` slots (a power of two, at least G = 16, the default build's group
   width) keeps one control byte per slot: kEmpty 0x80, or the H2 tag of the slot's hash, its
   top 7 bits (0x00..0x7F). Only kEmpty has bit 7 set.
2. A hash's home group starts at (h * G) & (capacity - 1): its low bits pick the group.
   Probe step p looks at the group T(p) = p(p+1)/2 groups further on, modulo the group count
   (triangular probing: 0, 1, 3, 6, 10, ... groups), which meets every group once in the
   first capacity / G steps because the group count is a power of two.
3. Insert (intern): first, if count * 8 >= capacity * 7, rehash. Then probe: in each group,
   the positions whose control byte equals the tag, lowest first, are candidates and the one
   holding the same full hash is the answer; else, if the group has an empty byte, the hash
   goes to its lowest empty position; else the next group.
4. Lookup: the same probe without inserting: an empty byte in a probed group proves absence
   (there is no deletion and no tombstone).
5. Rehash: capacity doubles; the old slots are walked in index order, skipping empty ones,
   and each hash goes to the lowest empty byte of the first group with one on its probe
   sequence in the new table (no equality check). The count is unchanged.
6. Matching a group: the SIMD paths report exactly the bytes equal to the tag. The portable
   SWAR path reads the group as two little-endian 64-bit words and uses the has-zero-byte
   test on word ^ (tag * 0x0101..01): it reports every exact match, and also a byte whose
   xor with the tag is 0x01 when a borrow reaches it, that is when the bytes below it in the
   same word are, going down, a run of bytes equal to tag ^ 1 that ends at a byte equal to
   the tag. The caller re-checks the full hash, so that false positive is harmless. The high
   bit of each byte is gathered by one multiplication (E14.700: the seed's multiplier drops
   the top byte of each word).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.bits import BitVal, add, bnot, is_symbolic, mask, mul, shr, sub, ule, z3_module
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput

GROUP_WIDTH = 16
"""G of the default x86-64 build (SSE2; also NEON and SWAR). Real code: `SwissTable.h`,
`kGroupWidth`."""
K_EMPTY = 0x80
"""The control byte of an empty slot. Real code: `SwissTable.h`, `kEmpty`."""
H2_SHIFT = 57
"""The H2 tag is hash >> 57, its top 7 bits. Real code: `SwissTable.h`, `h2_tag`."""
LOAD_NUM, LOAD_DEN = 7, 8
"""Rehash before an insert once count * 8 >= capacity * 7. Real code: `ExprPool.h`,
`intern_node`."""
DEFAULT_CAPACITY = 1 << 16
"""ExprPool's default initial capacity. Real code: `ExprPool.h`, the constructor."""
MAX_CAPACITY = 1 << 16
"""The spec's own bound on the initial capacity an op accepts."""
MAX_HASHES = 4096
"""The spec's own bound on the hashes one op inserts or looks up."""
LO_MAGIC = 0x0101010101010101
HI_MAGIC = 0x8080808080808080
GATHER = 0x0002040810204081
"""Gathers bit 7 of each byte of a word into the top byte (byte i to bit 56 + i)."""
SEED_GATHER = 0x0002040810204080
"""The seed's gather multiplier: it lacks bit 0, so byte 7's high bit is lost (E14.700).
Real code: `SwissTable.h`, `CtrlGroup::extract_highbits`."""
E14_700 = "E14.700"
PATHS = ("simd", "swar")
"""Match paths: the SIMD ones (SSE2, AVX2, AVX-512, NEON) and the portable SWAR one."""
SIMD, SWAR = range(2)


# ── hashing and probing (written once for Python ints and z3 bit-vectors) ───────────────────

def h2_tag(h: BitVal) -> BitVal:
    """The top 7 bits of the hash."""
    return shr(h, H2_SHIFT)


def triangular(p: BitVal) -> BitVal:
    """p(p+1)/2: how many groups past the home group probe step p looks."""
    return shr(mul(p, add(p, 1)), 1)


def probe_base(h: BitVal, p: BitVal, capacity: BitVal) -> BitVal:
    """First slot of the group probe step p reads: home group plus T(p) groups, wrapped."""
    home = mul(h, GROUP_WIDTH)
    return add(home, mul(triangular(p), GROUP_WIDTH)) & sub(capacity, 1)


def needs_rehash(count: BitVal, capacity: BitVal) -> BitVal:
    """The grow check before each insert: count * 8 >= capacity * 7."""
    return ule(mul(capacity, LOAD_NUM), mul(count, LOAD_DEN))


def initial_capacity(requested: int) -> int:
    """G, doubled while below the requested capacity."""
    capacity = GROUP_WIDTH
    while capacity < requested:
        capacity <<= 1
    return capacity


# ── matching one group ───────────────────────────────────────────────────────────────────────

def extract_highbits(v: BitVal, errata: frozenset[str] = NO_ERRATA) -> BitVal:
    """Bit 7 of byte i of v as bit i of the result (E14.700: byte 7 lost)."""
    gather = SEED_GATHER if E14_700 in errata else GATHER
    return shr(mul(v & HI_MAGIC, gather), 56)


def zero_byte_bits(x: BitVal) -> BitVal:
    """The has-zero-byte test: (x - 0x01..01) & ~x & 0x80..80."""
    return sub(x, LO_MAGIC) & bnot(x) & HI_MAGIC


def swar_match_word(word: BitVal, h2: BitVal, errata: frozenset[str] = NO_ERRATA) -> BitVal:
    """Bytes of one 8-byte word the SWAR path reports as equal to the tag."""
    return extract_highbits(zero_byte_bits(word ^ mul(h2, LO_MAGIC)), errata)


def byte_of(word: BitVal, i: int) -> BitVal:
    """Byte i (little-endian) of a word."""
    return shr(word, 8 * i) & 0xFF


def _or(a, b):
    return z3_module().Or(a, b) if is_symbolic(a) or is_symbolic(b) else a or b


def _and(a, b):
    return z3_module().And(a, b) if is_symbolic(a) or is_symbolic(b) else a and b


def swar_false_positive(word: BitVal, h2: BitVal, i: int) -> BitVal:
    """Step 6's stated case for byte i: it equals tag ^ 1 and a borrow reaches it from a byte
    equal to the tag through bytes equal to tag ^ 1, all in the same word."""
    borrow = False
    for j in range(i):
        x = byte_of(word, j) ^ h2
        borrow = _or(x == 0, _and(x == 1, borrow))
    return _and(byte_of(word, i) ^ h2 == 1, borrow)


def group_words(ctrl: bytes) -> tuple[int, int]:
    """The 16 control bytes of a group as two little-endian words."""
    return int.from_bytes(ctrl[:8], "little"), int.from_bytes(ctrl[8:16], "little")


def exact_match(ctrl: bytes, h2: int) -> int:
    """The SIMD match: bit i set iff control byte i equals the tag."""
    return sum(1 << i for i, c in enumerate(ctrl) if c == h2)


def match_empty(ctrl: bytes, path: int = SIMD, errata: frozenset[str] = NO_ERRATA) -> int:
    """Bit i set iff control byte i has bit 7 set (is kEmpty)."""
    if path == SIMD:
        return sum(1 << i for i, c in enumerate(ctrl) if c & 0x80)
    lo, hi = group_words(ctrl)
    return extract_highbits(lo, errata) | extract_highbits(hi, errata) << 8


def group_match(ctrl: bytes, h2: int, path: int = SIMD,
                errata: frozenset[str] = NO_ERRATA) -> int:
    """The match of one group on the chosen path (step 6)."""
    if path == SIMD:
        return exact_match(ctrl, h2)
    lo, hi = group_words(ctrl)
    return swar_match_word(lo, h2, errata) | swar_match_word(hi, h2, errata) << 8


def low_bits(m: int) -> list[int]:
    """Set positions of a bitmask, lowest first."""
    return [i for i in range(m.bit_length()) if m >> i & 1]


# ── the table ────────────────────────────────────────────────────────────────────────────────

@dataclass
class SwissTable:
    """Control bytes, the hash held by each slot (None when empty), the count, the rehashes."""

    capacity: int
    ctrl: bytearray = field(init=False)
    slots: list[int | None] = field(init=False)
    count: int = 0
    rehashes: int = 0

    def __post_init__(self) -> None:
        self.ctrl = bytearray([K_EMPTY]) * self.capacity
        self.slots = [None] * self.capacity


def probe(t: SwissTable, h: int, insert: bool) -> tuple[int, int]:
    """Steps 3-4 after the grow check: (slot, groups probed); slot -1 when absent."""
    for p in range(t.capacity // GROUP_WIDTH):
        base = probe_base(h, p, t.capacity)
        group = bytes(t.ctrl[base:base + GROUP_WIDTH])
        for i in low_bits(group_match(group, h2_tag(h))):
            if t.slots[base + i] == h:
                return base + i, p + 1
        empties = match_empty(group)
        if empties:
            if not insert:
                return -1, p + 1
            slot = base + low_bits(empties)[0]
            t.ctrl[slot], t.slots[slot] = h2_tag(h), h
            t.count += 1
            return slot, p + 1
    if insert:
        raise RuntimeError("no empty byte on the probe sequence")
    return -1, t.capacity // GROUP_WIDTH


def place(t: SwissTable, h: int) -> None:
    """Rehash's reinsert: the lowest empty byte of the first group on the sequence with one."""
    for p in range(t.capacity // GROUP_WIDTH):
        base = probe_base(h, p, t.capacity)
        empties = match_empty(bytes(t.ctrl[base:base + GROUP_WIDTH]))
        if empties:
            slot = base + low_bits(empties)[0]
            t.ctrl[slot], t.slots[slot] = h2_tag(h), h
            t.count += 1
            return
    raise RuntimeError("no empty byte on the probe sequence")


def rehash(t: SwissTable) -> SwissTable:
    """Step 5: a table of twice the capacity holding the old hashes, reinserted in slot order."""
    grown = SwissTable(2 * t.capacity, rehashes=t.rehashes + 1)
    for i in range(t.capacity):
        if t.ctrl[i] != K_EMPTY:
            place(grown, t.slots[i])
    return grown


def intern(t: SwissTable, h: int) -> tuple[SwissTable, int]:
    """Step 3: the (maybe grown) table and the slot now holding h."""
    if needs_rehash(t.count, t.capacity):
        t = rehash(t)
    return t, probe(t, h, insert=True)[0]


def build(hashes: list[int], requested: int = DEFAULT_CAPACITY) -> SwissTable:
    """A fresh table of initial_capacity(requested) with each hash interned in order."""
    t = SwissTable(initial_capacity(requested))
    for h in hashes:
        t, _ = intern(t, h)
    return t


def lookup(t: SwissTable, h: int) -> tuple[int, int]:
    """Step 4: (slot holding h or -1, groups probed)."""
    return probe(t, h, insert=False)


# ── wire ─────────────────────────────────────────────────────────────────────────────────────

def check_capacity(capacity: int) -> None:
    if capacity > MAX_CAPACITY:
        raise InvalidInput(f"args.capacity: {capacity} exceeds the limit of {MAX_CAPACITY}")


def build_op(hashes: list[int], capacity: int) -> dict:
    check_capacity(capacity)
    t = build(hashes, capacity)
    return {"ctrl": bytes(t.ctrl), "capacity": t.capacity, "count": t.count,
            "rehashes": t.rehashes, "slots": [lookup(t, h)[0] for h in hashes]}


def lookup_op(hashes: list[int], capacity: int, queries: list[int]) -> dict:
    check_capacity(capacity)
    t = build(hashes, capacity)
    found = [lookup(t, q) for q in queries]
    return {"slots": [s for s, _ in found], "probes": [p for _, p in found]}


def match_op(ctrl: bytes, h2: int, path: int, errata: frozenset[str] = NO_ERRATA) -> dict:
    if len(ctrl) != GROUP_WIDTH:
        raise InvalidInput(f"args.ctrl: a group is {GROUP_WIDTH} bytes, got {len(ctrl)}")
    if h2 > mask(7):
        raise InvalidInput(f"args.h2: an H2 tag is 0..127, got {h2}")
    return {"match": group_match(ctrl, h2, path, errata),
            "empty": match_empty(ctrl, path, errata)}
