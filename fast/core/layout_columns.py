"""Column-at-a-time conversion between leaf matrices and wire field values, for the layout
kernels: one numpy operation per member across every record of a batch, instead of one
recursive walk per record. Validation reuses the spec's scalar parser."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...spec.core.bits import to_unsigned
from ...spec.core.errors import InvalidInput
from ...spec.core.layout import ArrayOf, CType, Pad, Struct, default_of, leaves
from ...spec.core.layout_ops import scalar_from_wire


def decode_columns(s: Struct, raw: np.ndarray) -> list[dict]:
    """Wire field values of every record, from its (records x leaves) uint64 matrix."""
    values, _ = _to_wire(s, raw, 0, leaves(s))
    return values


def _to_wire(ctype: CType, raw: np.ndarray, j: int, lv: tuple) -> tuple[list, int]:
    if isinstance(ctype, Struct):
        names, cols = [], []
        for p in ctype.all_placed():
            col, j = _to_wire(p.member.ctype, raw, j, lv)
            names.append(p.name)
            cols.append(col)
        return [dict(zip(names, row, strict=True)) for row in zip(*cols, strict=True)], j
    if isinstance(ctype, Pad):
        text = raw[:, j:j + ctype.size].astype(np.uint8).tobytes().hex()
        w = 2 * ctype.size
        return [text[i * w:(i + 1) * w] for i in range(raw.shape[0])], j + ctype.size
    if isinstance(ctype, ArrayOf) and not isinstance(ctype.elem, (Struct, ArrayOf, Pad)):
        block = raw[:, j:j + ctype.count]
        return _scalars(ctype.elem, block, lv[j:j + ctype.count]).tolist(), j + ctype.count
    if isinstance(ctype, ArrayOf):
        cols = []
        for _ in range(ctype.count):
            col, j = _to_wire(ctype.elem, raw, j, lv)
            cols.append(col)
        return [list(row) for row in zip(*cols, strict=True)], j
    return _scalars(ctype, raw[:, j], lv[j:j + 1]).tolist(), j + 1


def _scalars(prim: Any, a: np.ndarray, lv: tuple) -> np.ndarray:
    """Wire values of one scalar member (a 1-D column or a 2-D block of array elements)."""
    bits = 8 * prim.size
    if prim.wire == "bool":
        grid = a.reshape(a.shape[0], -1) if a.size else np.zeros((0, 1), np.uint64)
        bad = np.argwhere(grid > 1)
        if bad.size:
            row, col = (int(x) for x in bad[0])
            leaf = lv[col]
            raise InvalidInput(f"{'.'.join(map(str, leaf.path))} at byte {leaf.offset}: "
                               f"0x{int(grid[row, col]):02x} is not a bool (0 or 1)")
        return a == 1
    if prim.wire == "hex":
        fmt = f"0x{{:0{bits // 4}x}}".format
        return np.array([fmt(v) for v in a.ravel().tolist()], dtype=object).reshape(a.shape)
    if prim.signed:
        shift = np.uint64(64 - bits)
        return (a << shift).view(np.int64) >> np.int64(64 - bits)
    return a


def encode_columns(s: Struct, fields: list[Any]) -> np.ndarray:
    """The (records x leaves) uint64 matrix of every record's wire field values."""
    cols: list[np.ndarray] = []
    _from_wire(s, fields, "args.fields", None, cols)
    return np.stack(cols, axis=1) if cols else np.zeros((len(fields), 0), np.uint64)


def _from_wire(ctype: CType, objs: list, path: str, default: Any, out: list) -> None:
    if isinstance(ctype, Struct):
        names = {p.name for p in ctype.all_placed()}
        objs = [{} if obj is _MISSING else obj for obj in objs]
        for obj in objs:
            if not isinstance(obj, dict):
                raise InvalidInput(f"{path}: expected an object of {ctype.name} fields")
            unknown = sorted(set(obj) - names)
            if unknown:
                raise InvalidInput(f"{path}: {ctype.name} has no field {unknown[0]!r}")
        base = default_of(ctype, default)
        for p in ctype.all_placed():
            member = [obj.get(p.name, _MISSING) for obj in objs]
            _from_wire(p.member.ctype, member, f"{path}.{p.name}", base[p.name], out)
    elif isinstance(ctype, ArrayOf):
        dflt = default_of(ctype, default)
        for obj in objs:
            if obj is not _MISSING and (not isinstance(obj, list) or len(obj) > ctype.count):
                raise InvalidInput(f"{path}: expected a list of at most {ctype.count} items")
        for i in range(ctype.count):
            items = [o[i] if o is not _MISSING and i < len(o) else _MISSING for o in objs]
            _from_wire(ctype.elem, items, f"{path}[{i}]", dflt[i], out)
    elif not isinstance(ctype, Pad) and (column := _int_column(ctype, objs, default)) is not None:
        out.append(column)
    else:
        values = [default if v is _MISSING else scalar_from_wire(ctype, v, path) for v in objs]
        if isinstance(ctype, Pad):
            block = np.frombuffer(b"".join(values), dtype=np.uint8).reshape(len(values),
                                                                            ctype.size)
            out.extend(block[:, i].astype(np.uint64) for i in range(ctype.size))
        else:
            bits = 8 * ctype.size
            out.append(np.array([to_unsigned(int(v), bits) for v in values], dtype=np.uint64))


def _int_column(prim: Any, objs: list, default: Any) -> np.ndarray | None:
    """Fast path for a member given as plain JSON integers (or booleans) in range: the whole
    column at once. Anything else (hex strings, bad values) takes the per-value parser."""
    want = bool if prim.wire == "bool" else int
    values = [default if v is _MISSING else v for v in objs]
    if not values or any(type(v) is not want for v in values):
        return None
    bits = 8 * prim.size
    signed = prim.signed and prim.wire == "int"
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= min(values) or not max(values) <= hi:
        return None
    if signed:
        return np.array(values, dtype=np.int64).view(np.uint64) & np.uint64((1 << bits) - 1)
    return np.array(values, dtype=np.uint64)


_MISSING = object()
