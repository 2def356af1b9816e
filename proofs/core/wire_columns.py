"""Chapter 1's columnar wire encoding as a property: for the result fields of every registered
op, a column written a column at a time (`encode_column`, `rows_text`) is exactly what the
per-item encoder writes of each value (`Type.encode`, then the compact JSON text)."""

from __future__ import annotations

import json
from functools import cache

from hypothesis import strategies as st

from ...spec.core import wire_columns as wc
from ...spec.core.registry import REGISTRY, Mutant
from ...spec.core.schema import Array, Bool, Bytes, Int, List, Record, Type
from .obligation import Property, property_obligation


def columnar(t: Type) -> bool:
    """Whether a field of type `t` is one the column encoders take: integers, booleans, bytes,
    and fixed arrays and lists of them."""
    if isinstance(t, (Array, List)):
        return columnar(t.item)
    return isinstance(t, (Int, Bool, Bytes))


@cache
def result_records() -> list[Record]:
    """Per op whose result has column-encodable fields, those fields as one record."""
    out = {}
    for op in REGISTRY.ops.values():
        fields = {n: f for n, f in op.result.fields.items() if columnar(f.type)}
        if fields:
            rec = Record(fields)
            out.setdefault(repr(rec), rec)
    return list(out.values())


def _batches() -> st.SearchStrategy[tuple[Record, list[dict]]]:
    return st.sampled_from(result_records()).flatmap(
        lambda rec: st.tuples(st.just(rec), st.lists(rec.strategy(), min_size=1, max_size=6)))


def _alike(case: tuple[Record, list[dict]]) -> None:
    rec, values = case
    per_item = [rec.encode(v) for v in values]
    columns = rec.columns(values)
    for name, f in rec.fields.items():
        assert wc.encode_column(f.type, columns[name]) == [d[name] for d in per_item], name
    texts = wc.rows_text(rec, columns, len(values))
    if texts is not None:
        assert texts == [json.dumps(d, separators=(",", ":")) for d in per_item]


@property_obligation(
    "PO1.76",
    "For the result fields of every op (integers, hex integers, booleans, bytes, and fixed "
    "arrays and lists of them), encode_column of a column is the per-item encoding of each "
    "value, and rows_text, where it writes a batch, writes exactly the compact JSON text of "
    "each encoded result.",
    covers=("core.wire_columns.encode_column", "core.wire_columns.rows_text",
            "core.wire_columns.hex_digits"),
    subject=wc.encode_column,
    mutants=(
        Mutant.edit("list items left raw", "a list column's items are not encoded (hex "
                    "integers come out as ints)", wc.encode_column,
                    "encode_column(t.item, column.values)",
                    "np.asarray(column.values).tolist()"),
        Mutant.edit("hex written as decimal", "every integer column is written as decimals",
                    wc._encode_ints, "if not t.hex:", "if True:"),
        Mutant.edit("hex digits little-endian", "the digits are written least significant "
                    "byte first", wc.hex_digits, '.astype(f">u{bits // 8}")',
                    '.astype(f"<u{bits // 8}")'),
        Mutant.edit("lists cut short", "each list loses its last item", wc.encode_column,
                    "flat[offs[i]:offs[i + 1]]", "flat[offs[i]:offs[i + 1] - 1]"),
    ),
)
def columns_encode_as_items(_subject):
    return [Property("result fields of every op", _alike, strategy=_batches, examples=300)]
