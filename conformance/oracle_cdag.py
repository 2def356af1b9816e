"""`oracle cdag`: where two CDAG nodes differ, by decoded field first, then the first
differing byte and its field, then the derived hashes that change.

EXPECTED and GOT are each a CDAG file (binary, or its bytes as hex text) or JSON: cdag.encode
args ({region: ...}), cdag.encode_branch args ({guard, arms, ...}) or a cdag.decode result; the
reference encodes JSON first. Both must be valid nodes: anything else is an error naming the
side and the reader's offset, never "identical".
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from ..spec.core.errata import NO_ERRATA
from ..spec.core.errors import InvalidInput
from ..spec.core.layout import hash64
from ..spec.core.layout_ops import scalar_from_wire
from ..spec.crucible.cdag import decode_branch, decode_region, encode_branch, encode_region
from ..spec.crucible.cdag_ops import (
    cdag_decode,
    cdag_decode_branch,
    cdag_encode,
    cdag_encode_branch,
    name_at,
)
from ..spec.crucible.merkle_dag import TraceNodeKind
from .diff import first_difference

_HEX = re.compile(rb"^(0x)?[0-9a-fA-F\s]*$")


def node_bytes(raw: bytes, errata: frozenset[str] = NO_ERRATA) -> bytes:
    """A node's file from what a user gives: JSON args or a decode result, hex text, or the
    file itself."""
    text = raw.strip()
    if not text:
        raise InvalidInput("the file is empty")
    if text[:1] in b"{[\"" or text in (b"null", b"true", b"false"):
        obj = json.loads(text)
        if not isinstance(obj, dict) or not {"region", "ops", "guard"} & set(obj):
            raise InvalidInput("JSON that is no node: expected cdag.encode args {region}, a "
                               "cdag.decode result {ops, ...} or cdag.encode_branch args "
                               "{guard, arms}")
        if "region" in obj:
            return cdag_encode(obj["region"], errata)["hex"]
        if "ops" in obj:
            return cdag_encode(obj, errata)["hex"]
        return cdag_encode_branch(obj.get("guard", {}), obj.get("arms", []),
                                  _word(obj.get("next_merkle"), "next_merkle"),
                                  _word(obj.get("merkle_hash"), "merkle_hash"),
                                  errata)["hex"]
    if text and _HEX.match(text):
        return bytes.fromhex(re.sub(rb"\s", b"", text.removeprefix(b"0x")).decode())
    return raw


def _word(v, name: str) -> int | None:
    return None if v is None else scalar_from_wire(hash64, v, name)


DERIVED = ("content_hash", "merkle_hash")
"""Header fields computed from the rest of a node: a change there is reported as a consequence
of the first changed field it was derived from."""


@dataclass
class CdagDifference:
    """Where two valid nodes first differ: the decoded field (path and both values), the first
    differing byte with the field of EXPECTED it lies in, and the derived hashes that change."""

    node: str
    path: str
    expected: Any
    got: Any
    byte: int
    field: str
    op: int | None
    byte_expected: str
    byte_got: str
    lengths: tuple[int, int]
    consequences: list[str]

    def describe(self) -> str:
        lines = [f"{self.node}: {self.path}: expected {_text(self.expected)}, got "
                 f"{_text(self.got)}",
                 f"  first differing byte {self.byte}: {self.field}: expected "
                 f"{self.byte_expected}, got {self.byte_got}"]
        if self.lengths[0] != self.lengths[1]:
            lines.append(f"  lengths {self.lengths[0]} and {self.lengths[1]}")
        lines += [f"  then {c}" for c in self.consequences]
        return "\n".join(lines)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def decoded(data: bytes, errata: frozenset[str] = NO_ERRATA) -> tuple[str, dict]:
    """A node's kind and every decoded field; InvalidInput (with the reader's offset) if the
    bytes are not a node the spec would write."""
    if len(data) > 8 and data[8] == TraceNodeKind.BRANCH:
        return "branch", cdag_decode_branch(data, errata)
    return "region", cdag_decode(data, errata)["region"]


def field_map(data: bytes) -> list:
    """(offset, size, field) spans of a valid node's bytes."""
    spans: list = []
    if data[8] == TraceNodeKind.BRANCH:
        encode_branch(decode_branch(data), spans)
    else:
        encode_region(decode_region(data), spans)
    return spans


def _first_field(a: dict, b: dict) -> tuple[str, Any, Any] | None:
    """The first decoded field that differs, derived hashes last."""
    own = [k for k in a if k not in DERIVED] + [k for k in a if k in DERIVED]
    for key in own:
        d = first_difference(a.get(key), b.get(key), key)
        if d:
            return d.path, d.expected, d.got
    extra = sorted(set(b) - set(a))
    return (extra[0], None, b[extra[0]]) if extra else None


def cdag_diff(expected: bytes, got: bytes,
              errata: frozenset[str] = NO_ERRATA) -> CdagDifference | None:
    """None if the two nodes are the same bytes, else the first decoded field that differs
    (derived hashes after every other field), its first byte, and the hashes it changes.
    InvalidInput names the side that is not a valid node."""
    kinds = []
    for side, data in (("EXPECTED", expected), ("GOT", got)):
        try:
            kinds.append(decoded(data, errata))
        except InvalidInput as e:
            raise InvalidInput(f"{side} is not a valid CDAG node: {e.message}") from None
    if expected == got:
        return None
    (ka, a), (kb, b) = kinds
    first = ("kind", ka, kb) if ka != kb else _first_field(a, b)
    at = next((i for i, (x, y) in enumerate(zip(expected, got, strict=False)) if x != y),
              min(len(expected), len(got)))
    field = name_at(field_map(expected), at) if at < len(expected) else \
        "past the end of EXPECTED"
    path, want, have = first or (field, None, None)
    match = re.match(r"ops\[(\d+)\]", path)
    consequences = [f"{k} {a[k]} -> {b[k]}" for k in DERIVED
                    if ka == kb and k != path and k in a and a[k] != b.get(k)]
    return CdagDifference(ka, path, want, have, at, field,
                          int(match.group(1)) if match else None,
                          expected[at:at + 1].hex() or "end of data",
                          got[at:at + 1].hex() or "end of data", (len(expected), len(got)),
                          consequences)


def as_json(d: CdagDifference | None) -> dict:
    return {"identical": True} if d is None else {"identical": False} | asdict(d)
