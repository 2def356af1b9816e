"""Serve's quick path for a batch request line of integers: the line is read into columns
without building one Python value per item, and the answer is written a column at a time.

1. The line is exactly `{"id":<integer>,"op":"<name>","batch":[<items>]}`, in that order and
   with no whitespace (the form the runner and the bench write).
2. The op is answered by a kernel; its args are integers and fixed arrays of integers, with
   no rule across fields (`Op.arg_rules`), its results hex integers and fixed arrays of them;
   an op with a per-item check has its vectorised form (`Op.check_columns`).
3. numba reads the items into columns (fast/numba/core/json_scan.py): each item has every
   field once, in any order, each value a JSON integer or a "0x" string that fits.
4. The columns pass the op's check, the kernel answers them, and the answer is written as
   rows of one byte array (spec.core.wire_columns.hex_rows).

Wherever a step does not hold (None), the line is read and answered the usual way, which
gives every item exactly what it gets alone; this path gives the same answer, only sooner.
"""

from __future__ import annotations

import json
import re
from functools import cache

import numpy as np

from ..engine import Implementation
from ..spec.core.registry import REGISTRY, Op
from ..spec.core.schema import Array, Int
from ..spec.core.wire_columns import hex_rows

HEAD = re.compile(rb'\{"id":(0|-?[1-9][0-9]{0,17}),"op":"([a-z0-9_]+\.[a-z0-9_.]+)",'
                  rb'"batch":\[')
"""Step 1's head; the id (up to 18 digits, no "-0") is echoed as the parser would write it."""
ITEM_HEAD, ITEM_TAIL = '{"ok":true,"result":', "}"


@cache
def item_layout(op: str) -> tuple[np.ndarray, ...] | None:
    """What the scanner needs of op `op`'s args (field tokens, their offsets, array lengths,
    widths, signedness), or None where step 2 does not hold for the args."""
    tokens, counts, bits, signed = [], [], [], []
    for name, f in REGISTRY.ops[op].args.fields.items():
        t = f.type
        item = t.item if isinstance(t, Array) else t
        if not isinstance(item, Int) or not name.isascii() or '"' in name or "\\" in name:
            return None
        tokens.append(json.dumps(name).encode("ascii") + b":")
        counts.append(t.n if isinstance(t, Array) else 0)
        bits.append(item.bits)
        signed.append(item.signed)
    if not tokens:
        return None
    offsets = np.cumsum([0, *map(len, tokens)]).astype(np.int64)
    return (np.frombuffer(b"".join(tokens), dtype=np.uint8), offsets,
            np.array(counts, dtype=np.int64), np.array(bits, dtype=np.int64),
            np.array(signed, dtype=np.bool_))


def answer_quick(line: bytes, impl: Implementation) -> str | None:
    """The answer line's text (without its newline), or None where a step does not hold."""
    head = HEAD.match(line)
    if head is None or not line.endswith(b"]}") or head.end() >= len(line) - 2:
        return None
    op = REGISTRY.ops.get(head.group(2).decode("ascii"))
    if op is None or impl.route(op).how != "kernel" or op.arg_rules is not None or \
            (op.check and not op.check_columns):
        return None
    layout = item_layout(op.name)
    if layout is None:
        return None
    columns = scan(op, np.frombuffer(line, dtype=np.uint8)[head.end():len(line) - 2], layout)
    if columns is None or (op.check_columns and not op.check_columns(columns)):
        return None
    n = len(next(iter(columns.values())))
    try:
        results = impl.run_columns(op, columns)
    except Exception:  # answered the usual way, which gives each item its own error
        return None
    rows = hex_rows(op.result, results, n, ITEM_HEAD, ITEM_TAIL)
    if rows is None:
        return None
    rid = head.group(1).decode("ascii")
    return '{"id":' + rid + ',"ok":true,"results":[' + rows.decode("ascii") + "]}"


def scan(op: Op, items: np.ndarray, layout: tuple[np.ndarray, ...]) -> dict | None:
    """The argument columns of the items, or None where the scanner refuses them."""
    from ..fast.numba.core.json_scan import scan_items

    names, offsets, counts, bits, signed = layout
    most = int(np.count_nonzero(items == ord("{")))
    out = np.empty((most, int(np.maximum(counts, 1).sum())), dtype=np.uint64)
    n = scan_items(items, names, offsets, counts, bits, signed, out)
    if n <= 0:
        return None
    columns, at = {}, 0
    for (name, f), many in zip(op.args.fields.items(), counts.tolist(), strict=True):
        item = f.type.item if isinstance(f.type, Array) else f.type
        width = max(many, 1)
        block = out[:n, at:at + width].astype(np.dtype(f"u{item.bits // 8}"))
        block = block.view(item.np_dtype)
        columns[name] = block if many else block.reshape(n)
        at += width
    return columns
