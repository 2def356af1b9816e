"""Many wire structs and trace ops decoded a field at a time: the fast path of a long
`trace.build` or `pipeline.run` request, whose ops and metas the spec decodes one value at a
time (`from_wire`, `recorded_from_wire`).

The check is sound, not complete (as spec.wire_columns): a batch is accepted only when every
object has known fields, every given value is one the spec's decoder accepts (integers and
hex through `fast_column`, booleans as JSON booleans, arrays of integers no longer than their
C array) and nothing else (padding, nested structs) is given. Then the values are exactly what
the spec's decoder returns; anything else returns None and the caller decodes item by item,
whose first error is the answer."""

from __future__ import annotations

from itertools import accumulate, chain, pairwise, repeat
from operator import itemgetter
from typing import Any

import numpy as np

from ...spec.core.layout import ArrayOf, CType, Prim, Struct, bool_, default_of, hash64, i64, u8
from ...spec.core.layout_ops import int_type
from ...spec.core.wire_columns import fast_column
from ...spec.crucible.build_trace import RecordedOp
from ...spec.crucible.tensor_meta import MAX_DIMS, TENSOR_META
from ...spec.crucible.trace_build_ops import MAX_TENSORS, OP_KEYS, recorded_ops

_OP_SCALARS = {"schema_hash": hash64, "shape_hash": hash64, "scope_hash": hash64,
               "callsite_hash": hash64, "op_flags": u8, "grad_enabled": bool_}
"""The scalar fields of a recorded op; an absent one is zero (False)."""


def scalar_column(ctype: Prim, values: list) -> np.ndarray | None:
    """The decoded values of one scalar member as a column, or None (see the module)."""
    if ctype.wire == "bool":
        return np.array(values, dtype=np.bool_) if set(map(type, values)) <= {bool} else None
    return fast_column(int_type(ctype), values)


def member_values(ctype: CType, values: list) -> list | None:
    """The decoded values of one member given in several objects, or None (see the module)."""
    if isinstance(ctype, Prim):
        column = scalar_column(ctype, values)
        return None if column is None else column.tolist()
    if isinstance(ctype, ArrayOf) and isinstance(ctype.elem, Prim) and ctype.elem.wire != "bool":
        if set(map(type, values)) - {list} or max(map(len, values), default=0) > ctype.count:
            return None
        flat = member_values(ctype.elem, list(chain.from_iterable(values)))
        if flat is None:
            return None
        pad, ends = default_of(ctype.elem, None), list(accumulate(map(len, values), initial=0))
        return [flat[a:b] + [pad] * (ctype.count - (b - a)) for a, b in pairwise(ends)]
    return None


def structs_from_wire(ctype: Struct, objs: list) -> list[dict] | None:
    """`from_wire(ctype, obj)` of every object, or None (see the module)."""
    if set(map(type, objs)) - {dict}:
        return None
    names, defaults = ctype.wire_members
    keysets = set(map(frozenset, objs))
    given = frozenset().union(*keysets)
    if not given <= names.keys():
        return None
    uniform = len(keysets) == 1
    decoded = {}
    for name in given:
        values = member_values(names[name].member.ctype,
                               list(map(itemgetter(name), objs)) if uniform else
                               [o[name] for o in objs if name in o])
        if values is None:
            return None
        decoded[name] = iter(values)
    base = {n: defaults[n] if n in defaults else default_of(p.member.ctype, p.member.default)
            for n, p in names.items()}
    lists = [n for n, v in base.items() if isinstance(v, list)]
    if uniform:  # every object gives the same members: build the dicts a row at a time
        columns = [decoded[n] if n in given else map(list, repeat(v, len(objs))) if n in lists
                   else repeat(v, len(objs)) for n, v in base.items()]
        return [dict(zip(base, row, strict=True)) for row in zip(*columns, strict=True)]
    out = []
    for obj in objs:
        d = base | {n: list(base[n]) for n in lists}
        for name in obj:
            d[name] = next(decoded[name])
        out.append(d)
    return out


def recorded_ops_from_wire(ops: Any) -> list[RecordedOp] | None:
    """`recorded_ops(ops)` of a trace.build request, or None (see the module)."""
    if not isinstance(ops, list) or set(map(type, ops)) - {dict}:
        return None
    if not frozenset().union(*map(frozenset, ops)) <= OP_KEYS:
        return None
    fields: dict[str, list] = {}
    for name, ctype in _OP_SCALARS.items():
        values = member_values(ctype, [o[name] for o in ops if name in o])
        if values is None:
            return None
        it, default = iter(values), default_of(ctype, None)
        fields[name] = [next(it) if name in o else default for o in ops]
    sides = {}
    for side in ("inputs", "outputs"):
        lists = [o.get(side, []) for o in ops]
        if set(map(type, lists)) - {list} or max(map(len, lists), default=0) > MAX_TENSORS:
            return None
        metas = structs_from_wire(TENSOR_META, list(chain.from_iterable(lists)))
        if metas is None or any(m["ndim"] > MAX_DIMS for m in metas):
            return None
        it = iter(metas)
        sides[side] = [[next(it) for _ in range(len(x))] for x in lists]
    scalars = [o.get("scalars", []) for o in ops]
    if set(map(type, scalars)) - {list} or max(map(len, scalars), default=0) > MAX_TENSORS:
        return None
    flat = member_values(i64, list(chain.from_iterable(scalars)))
    if flat is None:
        return None
    it = iter(flat)
    return [RecordedOp(fields["schema_hash"][k], fields["shape_hash"][k], len(sides["inputs"][k]),
                       len(sides["outputs"][k]), [next(it) for _ in range(len(scalars[k]))],
                       fields["grad_enabled"][k], fields["op_flags"][k],
                       sides["inputs"][k] + sides["outputs"][k] or None,
                       fields["scope_hash"][k], fields["callsite_hash"][k])
            for k in range(len(ops))]


def decoded_ops(ops: Any) -> list[RecordedOp]:
    """The recorded ops of a request: a field at a time where the check accepts them, else
    through the spec's `recorded_ops` (whose first error is the answer)."""
    recorded = recorded_ops_from_wire(ops)
    return recorded_ops(ops) if recorded is None else recorded
