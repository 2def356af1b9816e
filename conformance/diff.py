"""First-difference location between an expected and a received answer.

A difference is named by its JSON path (`result.fields.sizes[3]`). For a byte-string result
field it also gives the first differing byte offset and, where the op can say, the field of
the record that byte belongs to (`TensorMeta.dtype`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..spec.core.errors import SpecError
from ..spec.core.f32_tensor import Envelope, F32Tensor
from ..spec.core.registry import Op
from ..spec.core.schema import Bytes, Int

SHOWN_RUNS = 12
"""Runs of indices an `index_runs` text names; the indices of later runs are counted."""


def index_runs(indices: list[int], shown: int = SHOWN_RUNS) -> str:
    """Ascending indices as runs ("5, 7-9, 12"): the first `shown` runs, then how many indices
    are left out."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs[:shown])
    left = sum(b - a + 1 for a, b in runs[shown:])
    return text + (f" and {left} more" if left else "")


@dataclass(frozen=True)
class Difference:
    """Where two answers first disagree."""

    path: str
    expected: Any
    got: Any
    byte: int | None = None
    field: str | None = None
    note: str = ""

    def describe(self) -> str:
        where = self.path
        if self.byte is not None:
            where += f" byte {self.byte}" + (f" ({self.field})" if self.field else "")
        text = f"{where}: expected {_short(self.expected)}, got {_short(self.got)}"
        return text + (f" [{self.note}]" if self.note else "")

    def to_json(self) -> dict:
        return {"path": self.path, "expected": self.expected, "got": self.got,
                "byte": self.byte, "field": self.field, "note": self.note,
                "text": self.describe()}


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_difference(expected: Any, got: Any, path: str) -> Difference | None:
    """The first place (depth first, in expected's key order) where `got` departs."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected:
            if key not in got:
                return Difference(f"{path}.{key}", expected[key], None, note="missing")
            d = first_difference(expected[key], got[key], f"{path}.{key}")
            if d:
                return d
        extra = sorted(set(got) - set(expected))
        return Difference(f"{path}.{extra[0]}", None, got[extra[0]], note="unexpected field") \
            if extra else None
    if isinstance(expected, list) and isinstance(got, list):
        for i, (e, g) in enumerate(zip(expected, got, strict=False)):
            d = first_difference(e, g, f"{path}[{i}]")
            if d:
                return d
        if len(expected) != len(got):
            return Difference(f"{path}.length", len(expected), len(got))
        return None
    if type(expected) is not type(got) or expected != got:
        return Difference(path, expected, got)
    return None


def byte_difference(d: Difference, op: Op, args: dict) -> Difference:
    """Refine a difference in a byte-string or hex-word result field to its first differing
    byte (a word counts in memory order: little-endian)."""
    name = d.path.removeprefix("result.")
    field = op.result.fields.get(name)
    if field is not None and isinstance(field.type, Int) and field.type.hex:
        return _word_difference(d, field.type)
    if field is None or not isinstance(field.type, Bytes) or not isinstance(d.got, str):
        return d
    try:
        want, have = bytes.fromhex(d.expected), bytes.fromhex(d.got)
    except ValueError:
        return d
    at = next((i for i, (a, b) in enumerate(zip(want, have, strict=False)) if a != b),
              min(len(want), len(have)))
    where = None
    if op.locate:
        try:
            where = op.locate(op.args.decode(args, "args"))(at)
        except (SpecError, LookupError, ValueError):
            where = None
    exp = want[at:at + 1].hex() or "end of data"
    got = have[at:at + 1].hex() or "end of data"
    note = f"lengths {len(want)} and {len(have)}" if len(want) != len(have) else ""
    return Difference(d.path, exp, got, byte=at, field=where, note=note)


def _word_difference(d: Difference, t: Int) -> Difference:
    try:
        want, have = int(d.expected, 16), int(d.got, 16)
    except (TypeError, ValueError):
        return d
    size = t.bits // 8
    if not 0 <= have < 1 << t.bits:
        return d
    at = next((i for i in range(size) if (want >> 8 * i) & 0xFF != (have >> 8 * i) & 0xFF), None)
    if at is None:
        return d
    return Difference(d.path, d.expected, d.got, byte=at,
                      field=f"u{t.bits} little-endian: expected {(want >> 8 * at) & 0xFF:02x}, "
                            f"got {(have >> 8 * at) & 0xFF:02x}")


def compare(op: Op, args: dict, expected_result: dict | None, expected_error: str | None,
            response: dict) -> Difference | None:
    """None when the response is what the spec says, else its first difference."""
    ok = response.get("ok")
    if ok is True and "result" in response:
        if expected_error is not None:
            return Difference("error", expected_error, response["result"],
                              note="expected an error, got a result")
        d = first_difference(expected_result, response["result"], "result")
        if d is None or within_envelope(op, expected_result, response["result"]):
            return None
        if _same_values(op, expected_result, response["result"]):
            return Difference(d.path, d.expected, d.got,
                              note="same value, but not the canonical encoding")
        tensor = tensor_field(op, d.path)
        if tensor is not None:
            return tensor_difference(d, op, tensor, expected_result[tensor],
                                     response["result"].get(tensor))
        return byte_difference(d, op, args)
    if ok is False and isinstance(response.get("error"), dict):
        code = response["error"].get("code")
        message = str(response["error"].get("message", ""))[:200]
        if expected_error is None:
            return Difference("result", expected_result, f"error {code}: {message}",
                              note="expected a result, got an error")
        if code != expected_error:
            return Difference("error.code", expected_error, code, note=message)
        return None
    return Difference("response", "{id, ok, result} or {id, ok: false, error}", response,
                      note="malformed response")


def _compare_terms(op: Op) -> dict[str, int]:
    if not op.compare.startswith("ulp:"):
        return {}
    return {k: int(v) for k, v in
            (item.split("=") for item in op.compare.removeprefix("ulp:").split(","))}


def envelope(op: Op) -> dict[int, int]:
    """The op's numeric envelope, word bits -> ulps: compare "ulp:f32=4,f64=2" allows each
    float bit-pattern field (a hex u32 for f32, u64 for f64) that many units in the last
    place; "exact" (the default) allows none."""
    widths = {"f32": 32, "f64": 64}
    return {widths[k]: v for k, v in _compare_terms(op).items() if k in widths}


def tensor_envelope(op: Op) -> Envelope:
    """The envelope of the op's float32 tensors: compare "ulp:f32=N[,floor=E]" (chapter 12);
    0 ulps when the op is exact."""
    terms = _compare_terms(op)
    return Envelope(terms.get("f32", 0), terms.get("floor"))


def _decoded_tensors(t: F32Tensor, want: Any, got: Any) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        return t.decode(want, "expected"), t.decode(got, "got")
    except SpecError:
        return None


def tensor_field(op: Op, path: str) -> str | None:
    """The float32 tensor result field a difference's path lies in, if any."""
    name = path.removeprefix("result.").split(".")[0].split("[")[0]
    field = op.result.fields.get(name)
    return name if field is not None and isinstance(field.type, F32Tensor) else None


def tensor_difference(d: Difference, op: Op, name: str, want_wire: Any,
                      got_wire: Any) -> Difference:
    """A tensor field's first element outside the op's envelope: its index, its byte offset
    in `data` (the first differing byte of its little-endian word), both values and bits, the
    distance in ulps and the largest distance in the tensor."""
    pair = _decoded_tensors(op.result.fields[name].type, want_wire, got_wire)
    if pair is None:
        return d
    want, got = pair
    if want.shape != got.shape:
        return Difference(f"result.{name}.shape", list(want.shape), list(got.shape))
    env = tensor_envelope(op)
    dist = env.distances(want, got)
    outside = np.flatnonzero(dist > env.ulps)
    if outside.size == 0:
        return d
    flat = int(outside[0])
    index = [int(i) for i in np.unravel_index(flat, want.shape)] if want.ndim else []
    a = int(want.reshape(-1).view(np.uint32)[flat])
    b = int(got.reshape(-1).view(np.uint32)[flat])
    at = next(i for i in range(4) if (a >> 8 * i) & 0xFF != (b >> 8 * i) & 0xFF)
    worst = int(np.argmax(dist))
    worst_at = [int(i) for i in np.unravel_index(worst, want.shape)] if want.ndim else []
    note = (f"{dist[flat]:g} ulps (envelope {env.ulps}); {outside.size} of {dist.size} "
            f"elements outside; largest {dist[worst]:g} ulps at {worst_at}")
    return Difference(f"result.{name}{index}", f"{_f32(a)} (0x{a:08x})", f"{_f32(b)} (0x{b:08x})",
                      byte=4 * flat + at, field=f"element {index} of shape {list(want.shape)}",
                      note=note)


def _f32(bits: int) -> str:
    return repr(float(np.uint32(bits).view(np.float32)))


def ulp_distance(a: int, b: int, bits: int) -> int:
    """Units in the last place between two IEEE bit patterns (+0 and -0 are 0 apart)."""
    sign = 1 << (bits - 1)
    return abs((-(a & ~sign) if a & sign else a) - (-(b & ~sign) if b & sign else b))


def within_envelope(op: Op, expected: dict, got: Any) -> bool:
    """Every field of `got` is the expected one, or a float within the op's envelope."""
    ulps = envelope(op)
    if not ulps or not isinstance(got, dict) or set(got) != set(expected):
        return False
    for name, want in expected.items():
        t = op.result.fields[name].type
        if got[name] == want:
            continue
        if isinstance(t, F32Tensor):
            pair = _decoded_tensors(t, want, got[name])
            if pair is None or not tensor_envelope(op).holds(*pair):
                return False
            continue
        try:
            a, b = int(want, 16), int(got[name], 16)
        except (TypeError, ValueError):
            return False
        if not (isinstance(t, Int) and t.hex and t.bits in ulps and 0 <= b < 1 << t.bits
                and ulp_distance(a, b, t.bits) <= ulps[t.bits]):
            return False
    return True


def _same_values(op: Op, expected: dict, got: Any) -> bool:
    try:
        a, b = op.result.decode(got, "result"), op.result.decode(expected, "result")
    except SpecError:
        return False
    return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and a.tobytes() == b.tobytes())
    return a == b
