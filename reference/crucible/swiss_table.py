"""Reference for the Swiss table ops: the table as intern_node and rehash step it (a running
base advanced by probe * 16), groups compared byte by byte, and the SWAR word arithmetic
replayed one byte at a time with an explicit borrow."""

from __future__ import annotations

from ...spec.core.registry import reference

WIDTH = 16
EMPTY = 0x80


def _capacity(requested: int) -> int:
    cap = WIDTH
    while cap < requested:
        cap *= 2
    return cap


def _walk(ctrl: list[int], h: int):
    """Yield the first slot of each group intern_node reads for h, until it has read them all."""
    cap = len(ctrl)
    base = (h * WIDTH) % (1 << 64) % cap
    for step in range(1, cap // WIDTH + 1):
        yield base
        base = (base + step * WIDTH) % cap


def _insert(ctrl: list[int], keys: list, h: int, check_equal: bool) -> int:
    tag = h >> 57
    for base in _walk(ctrl, h):
        if check_equal:
            for pos in range(WIDTH):
                if ctrl[base + pos] == tag and keys[base + pos] == h:
                    return base + pos
        for pos in range(WIDTH):
            if ctrl[base + pos] == EMPTY:
                ctrl[base + pos], keys[base + pos] = tag, h
                return base + pos
    raise AssertionError("full table")


def _table(hashes: list[int], requested: int):
    ctrl, keys, doublings = [EMPTY] * _capacity(requested), [None] * _capacity(requested), 0
    for h in hashes:
        held = sum(c != EMPTY for c in ctrl)
        if 8 * held >= 7 * len(ctrl):
            old = list(zip(ctrl, keys, strict=True))
            ctrl, keys = [EMPTY] * (2 * len(ctrl)), [None] * (2 * len(ctrl))
            doublings += 1
            for c, k in old:
                if c != EMPTY:
                    _insert(ctrl, keys, k, check_equal=False)
        _insert(ctrl, keys, h, check_equal=True)
    return ctrl, keys, doublings


def _find(ctrl: list[int], keys: list, h: int) -> tuple[int, int]:
    groups = 0
    for base in _walk(ctrl, h):
        groups += 1
        for pos in range(WIDTH):
            if ctrl[base + pos] == h >> 57 and keys[base + pos] == h:
                return base + pos, groups
        if EMPTY in ctrl[base:base + WIDTH]:
            return -1, groups
    return -1, groups


def _check_capacity(capacity: int) -> None:
    from ...spec.core.errors import InvalidInput

    if capacity > 1 << 16:
        raise InvalidInput(f"args.capacity: {capacity} exceeds the limit of {1 << 16}")


@reference("swiss.build")
def build_ref(hashes: list[int], capacity: int) -> dict:
    _check_capacity(capacity)
    ctrl, keys, doublings = _table(hashes, capacity)
    return {"ctrl": bytes(ctrl), "capacity": len(ctrl), "count": len(set(hashes)),
            "rehashes": doublings, "slots": [keys.index(h) for h in hashes]}


@reference("swiss.lookup")
def lookup_ref(hashes: list[int], capacity: int, queries: list[int]) -> dict:
    _check_capacity(capacity)
    ctrl, keys, _ = _table(hashes, capacity)
    found = [_find(ctrl, keys, q) for q in queries]
    return {"slots": [s for s, _ in found], "probes": [g for _, g in found]}


def _swar_half(half: bytes, tag: int, top_byte_lost: bool) -> tuple[int, int]:
    """Match and empty bits of 8 bytes: byte - 1 - borrow, bit 7 of that and of ~byte."""
    match = empty = 0
    borrow = 0
    for i, c in enumerate(half):
        x = c ^ tag
        diff = x - 1 - borrow
        borrow = int(diff < 0)
        hit = (diff % 256) & 0x80 and not x & 0x80
        if i == 7 and top_byte_lost:
            continue
        match |= bool(hit) << i
        empty |= bool(c & 0x80) << i
    return match, empty


@reference("swiss.match")
def match_ref(ctrl: bytes, h2: int, path: int, errata: frozenset[str]) -> dict:
    from ...spec.core.errors import InvalidInput

    if len(ctrl) != WIDTH:
        raise InvalidInput(f"args.ctrl: a group is {WIDTH} bytes, got {len(ctrl)}")
    if h2 > 127:
        raise InvalidInput(f"args.h2: an H2 tag is 0..127, got {h2}")
    if path == 0:
        return {"match": sum(1 << i for i in range(WIDTH) if ctrl[i] == h2),
                "empty": sum(1 << i for i in range(WIDTH) if ctrl[i] >= 0x80)}
    lost = "E14.700" in errata
    (m0, e0), (m1, e1) = _swar_half(ctrl[:8], h2, lost), _swar_half(ctrl[8:], h2, lost)
    return {"match": m0 | m1 << 8, "empty": e0 | e1 << 8}
