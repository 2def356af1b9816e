"""`oracle cdag`: the first byte where two CDAG nodes differ, named by node, op and field.

EXPECTED and GOT are each a CDAG file (binary, or its bytes as hex text) or JSON: cdag.encode
args ({region: ...}), cdag.encode_branch args ({guard, arms, ...}) or a cdag.decode result; the
reference encodes JSON first. The field map comes from EXPECTED, which must be a valid node;
GOT is also read back, and if the spec rejects it the reader's message (with its offset) is
reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from ..spec.cdag import decode_branch, decode_region, encode_branch, encode_region
from ..spec.cdag_ops import cdag_encode, cdag_encode_branch, name_at
from ..spec.errata import NO_ERRATA
from ..spec.errors import InvalidInput
from ..spec.layout import hash64
from ..spec.layout_ops import scalar_from_wire
from ..spec.merkle_dag import TraceNodeKind

_HEX = re.compile(rb"^(0x)?[0-9a-fA-F\s]*$")


def node_bytes(raw: bytes, errata: frozenset[str] = NO_ERRATA) -> bytes:
    """A node's file from what a user gives: JSON args or a decode result, hex text, or the
    file itself."""
    text = raw.strip()
    if text.startswith(b"{"):
        obj = json.loads(text)
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


@dataclass
class CdagDifference:
    """Where two nodes first differ: the byte, the field of EXPECTED it lies in, the op (if
    any), both bytes, both lengths, and GOT's reader error (if it is not a valid node)."""

    byte: int
    field: str
    op: int | None
    expected: str
    got: str
    lengths: tuple[int, int]
    node: str
    got_error: str | None

    def describe(self) -> str:
        lines = [f"{self.node}: first difference at byte {self.byte}: {self.field}",
                 f"  expected {self.expected}, got {self.got}"]
        if self.lengths[0] != self.lengths[1]:
            lines.append(f"  lengths {self.lengths[0]} and {self.lengths[1]}")
        if self.got_error:
            lines.append(f"  GOT is not a valid node: {self.got_error}")
        return "\n".join(lines)


def field_map(data: bytes) -> tuple[str, list]:
    """EXPECTED's kind and (offset, size, field) spans; InvalidInput if it is not valid."""
    spans: list = []
    kind = data[8] if len(data) > 8 else None
    if kind == TraceNodeKind.BRANCH:
        encode_branch(decode_branch(data), spans)
        return "branch", spans
    encode_region(decode_region(data), spans)
    return "region", spans


def cdag_diff(expected: bytes, got: bytes) -> CdagDifference | None:
    """None if the two nodes are the same bytes, else where they first differ."""
    if expected == got:
        return None
    node, spans = field_map(expected)
    at = next((i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
              min(len(expected), len(got)))
    field = name_at(spans, at) if at < len(expected) else "past the end of EXPECTED"
    match = re.match(r"ops\[(\d+)\]", field)
    try:
        (decode_branch if got[8:9] == b"\x01" else decode_region)(got)
        error = None
    except InvalidInput as e:
        error = e.message
    return CdagDifference(at, field, int(match.group(1)) if match else None,
                          expected[at:at + 1].hex() or "end of data",
                          got[at:at + 1].hex() or "end of data", (len(expected), len(got)),
                          node, error)


def as_json(d: CdagDifference | None) -> dict:
    return {"identical": True} if d is None else {"identical": False} | asdict(d)

