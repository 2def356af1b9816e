"""Reference for symbol.table: each entry kept as its 32 bytes (struct.pack '<qqqBBHI') and
updated in place, the way SymbolTable's vector of SymbolEntry is."""

from __future__ import annotations

import struct

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import reference

LAYOUT = "<qqqBBHI"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _signed(bits: int) -> int:
    return bits - 2**64 if bits >= 2**63 else bits


def _double(word: int) -> float:
    return struct.unpack("<d", struct.pack("<q", word))[0]


def _fresh(kind: int, flags: int, backed: bool) -> list:
    ranges = {0: (2, INT64_MAX), 2: (INT64_MIN + 1, INT64_MAX)}
    lo, hi = ranges.get(kind, (_signed(0xFFF0000000000000), 0x7FF0000000000000))
    return [INT64_MIN, lo, hi, kind, 4 if backed else 0, flags, 0]


def _narrower(kind: int, new: int, old: int, errata: frozenset[str]) -> tuple[bool, bool]:
    """(new > old, new < old) in the order of the entry's kind."""
    if kind in (1, 3) and "E14.701" not in errata:
        a, b = _double(new), _double(old)
    else:
        a, b = new, old
    return a > b, a < b


@reference("symbol.table")
def table_ref(calls: list[dict], errata: frozenset[str]) -> dict:
    rows: list[bytes] = []
    returned = []
    for n, c in enumerate(calls):
        name = ("add", "set_hint", "set_hint_float", "tighten_range", "set_size_like",
                "range_contains")[c["call"]]
        if name == "add":
            rows.append(struct.pack(LAYOUT, *_fresh(int(c["kind"]), c["expr_flags"],
                                                    c["backed"])))
            returned.append(len(rows) - 1)
            continue
        if c["id"] >= len(rows):
            raise InvalidInput(f"args.calls[{n}].id: symbol {c['id']} was never added")
        e = list(struct.unpack(LAYOUT, rows[c["id"]]))
        answer = -1
        if name in ("set_hint", "set_hint_float"):
            e[0], e[4] = c["value"], e[4] | 2
        elif name == "set_size_like":
            e[4] |= 1
        elif name == "tighten_range":
            if _narrower(e[3], c["lo"], e[1], errata)[0]:
                e[1] = c["lo"]
            if _narrower(e[3], c["hi"], e[2], errata)[1]:
                e[2] = c["hi"]
        else:
            answer = int(e[1] >= c["lo"] and e[2] <= c["hi"])
        rows[c["id"]] = struct.pack(LAYOUT, *e)
        returned.append(answer)
    entries = []
    for raw in rows:
        hint, lo, hi, kind, sf, ef, _ = struct.unpack(LAYOUT, raw)
        entries.append({"hint": hint, "range_lower": lo, "range_upper": hi, "kind": kind,
                        "sym_flags": sf, "expr_flags": ef, "bytes": raw,
                        "has_hint": bool(sf & 2), "is_size_like": bool(sf & 1),
                        "is_backed": bool(sf & 4), "is_positive": lo > 0,
                        "is_nonnegative": lo >= 0})
    return {"returned": returned, "entries": entries}
