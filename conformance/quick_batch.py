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

An op in `TEXT_PATHS` (trace.build under numba) replaces steps 2 to 4 with its own scanner of
nested items that writes each answer's text (fast/numba/crucible/trace_build_ops.py).

Wherever a step does not hold (None), the line is read and answered the usual way, which
gives every item exactly what it gets alone; this path gives the same answer, only sooner.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..engine import Implementation
from ..spec.core.registry import REGISTRY, Op
from ..spec.core.schema import Array, Int
from ..spec.core.wire_columns import hex_rows

HEAD = re.compile(r'\{"id":(0|-?[1-9][0-9]{0,17}),"op":"([a-z0-9_]+\.[a-z0-9_.]+)","batch":\[')
"""Step 1's head; the id (up to 18 digits, no "-0") is echoed as the parser would write it."""
ITEM_HEAD, ITEM_TAIL = '{"ok":true,"result":', "}"


@dataclass(frozen=True)
class ItemLayout:
    """What the scanner needs of an op's args: each field's `"name":` bytes (`names`, cut at
    `offsets`), array length (0: a plain integer), width and signedness, and its element type."""

    names: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray
    bits: np.ndarray
    signed: np.ndarray
    elements: tuple[Int, ...]


@cache
def item_layout(op: str) -> ItemLayout | None:
    """The scanner's layout of op `op`'s args, or None where step 2 does not hold for them."""
    fields = REGISTRY.ops[op].args.fields
    elements = tuple(f.type.item if isinstance(f.type, Array) else f.type
                     for f in fields.values())
    if not fields or not all(isinstance(t, Int) for t in elements) or \
            not all(name.isascii() and '"' not in name and "\\" not in name for name in fields):
        return None
    tokens = [json.dumps(name).encode("ascii") + b":" for name in fields]
    return ItemLayout(np.frombuffer(b"".join(tokens), dtype=np.uint8),
                      np.cumsum([0, *map(len, tokens)]).astype(np.int64),
                      np.array([getattr(f.type, "n", 0) for f in fields.values()], dtype=np.int64),
                      np.array([t.bits for t in elements], dtype=np.int64),
                      np.array([t.signed for t in elements], dtype=np.bool_), elements)


def answer_quick(line: str, impl: Implementation) -> str | None:
    """The answer line's text (without its newline), or None where a step does not hold."""
    head = HEAD.match(line)
    if head is None or not line.endswith("]}") or head.end() >= len(line) - 2 or \
            not line.isascii():
        return None
    op = REGISTRY.ops.get(head.group(2))
    if op is None or impl.route(op).how != "kernel":
        return None
    text_path = TEXT_PATHS.get((impl.name, op.name))
    if text_path is None and (op.arg_rules is not None or (op.check and not op.check_columns)
                              or item_layout(op.name) is None):
        return None
    items = np.frombuffer(line.encode("ascii"), dtype=np.uint8)[head.end():len(line) - 2]
    try:
        rows = (text_path or integer_rows)(op, items, impl)
    except Exception:  # answered the usual way, which gives each item its own error
        return None
    if rows is None:
        return None
    return '{"id":' + head.group(1) + ',"ok":true,"results":[' + rows + "]}"


def integer_rows(op: Op, items: np.ndarray, impl: Implementation) -> str | None:
    """Steps 3 and 4: the items' answers, comma-separated, or None."""
    columns = scan(op, items, item_layout(op.name))
    if columns is None or (op.check_columns and not op.check_columns(columns)):
        return None
    n = len(next(iter(columns.values())))
    rows = hex_rows(op.result, impl.run_columns(op, columns), n, ITEM_HEAD, ITEM_TAIL)
    return None if rows is None else rows.decode("ascii")


def trace_rows(op: Op, items: np.ndarray, impl: Implementation) -> str | None:
    """trace.build's items answered by fast/numba/crucible/trace_build_ops.py, or None."""
    from ..fast.numba.crucible.trace_build_ops import answer_texts

    texts = answer_texts(items, impl.errata)
    return None if texts is None else ",".join(ITEM_HEAD + t + ITEM_TAIL for t in texts)


TEXT_PATHS = {("numba", "trace.build"): trace_rows}
"""Ops whose items a backend reads and answers with a scanner of its own (nested items, which
replace steps 2 to 4)."""


def scan(op: Op, items: np.ndarray, layout: ItemLayout) -> dict | None:
    """The argument columns of the items, or None where the scanner refuses them."""
    from ..fast.numba.core.json_scan import scan_items

    widths = np.maximum(layout.counts, 1)
    out = np.empty((int(np.count_nonzero(items == ord("{"))), int(widths.sum())),
                   dtype=np.uint64)
    n = scan_items(items, layout.names, layout.offsets, layout.counts, layout.bits,
                   layout.signed, out)
    if n <= 0:
        return None
    columns, at = {}, 0
    for name, element, many, width in zip(op.args.fields, layout.elements,
                                          layout.counts.tolist(), widths.tolist(), strict=True):
        block = out[:n, at:at + width].astype(np.dtype(f"u{element.bits // 8}"))
        block = block.view(element.np_dtype)
        columns[name] = block if many else block.reshape(n)
        at += width
    return columns
