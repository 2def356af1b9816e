"""Batch adapters for `crtrace.decode` / `crtrace.encode`, shared by numba and cupy.

The spec frames a file, checks its counts and reads its name table; a backend supplies
`convert` (op records -> ring entries, tensor counts, scope and callsite hashes) and `restore`
(the inverse); the metas go through the layout kernels and columns, one member at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import REGISTRY
from ...spec.core.schema import BYTES
from ...spec.crucible.crtrace import (
    HEADER_SIZE,
    TRACE_OP_RECORD,
    check_meta_starts,
    check_meta_total,
    check_names,
    check_parallel,
    check_writable_meta,
    frame,
    header,
    meta_starts_of,
    name_table,
    parse_names,
)
from ...spec.crucible.crtrace_ops import check_counts, names_from_wire
from ...spec.crucible.tensor_meta import TENSOR_META
from ...spec.crucible.trace_ring import ENTRY
from .layout_batch import leaf_table
from .layout_columns import decode_columns, encode_columns
from .trace_file import META as META_DTYPE
from .trace_file import meta_bytes, suspects

REC = TRACE_OP_RECORD.size
META = TENSOR_META.size
GRAD_BYTE = ENTRY.offsets["grad_enabled"]

Convert = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
Restore = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _rows_hex(matrix: np.ndarray) -> list[str]:
    text = matrix.tobytes().hex()
    w = 2 * matrix.shape[1] if matrix.ndim == 2 else 0
    return [text[i * w:(i + 1) * w] for i in range(matrix.shape[0])]


def decode_one(data: bytes, convert: Convert, gather) -> dict:
    f = frame(data)
    names = parse_names(data, f.meta_end)
    metas = meta_bytes(data, f)
    records = np.frombuffer(data, np.uint8, count=REC * f.num_ops,
                            offset=HEADER_SIZE).reshape(f.num_ops, REC)
    entries, tensors, scope, callsite = convert(records)
    check_meta_total(int(tensors.sum()), f.num_metas, frozenset())
    table = leaf_table(TENSOR_META)
    return {
        "num_ops": f.num_ops, "num_metas": f.num_metas, "entries": _rows_hex(entries),
        "meta_starts": meta_starts_of(tensors.tolist()),
        "scope_hashes": [f"0x{h:016x}" for h in scope.tolist()],
        "callsite_hashes": [f"0x{h:016x}" for h in callsite.tolist()],
        "metas": decode_columns(TENSOR_META, gather(metas, table.offsets, table.sizes)),
        "names": {f"0x{h:016x}": names[h] for h in sorted(names)},
    }


def encode_one(args: dict, restore: Restore, scatter) -> bytes:
    check_counts(args)
    n = len(args["entries"])
    check_parallel(n, meta_starts=args["meta_starts"], scope_hashes=args["scope_hashes"],
                   callsite_hashes=args["callsite_hashes"])
    for i, image in enumerate(args["entries"]):
        if len(image) != ENTRY.size:
            raise InvalidInput(f"args.entries[{i}]: TraceRing::Entry: expected {ENTRY.size} "
                               f"bytes, got {len(image)}")
    entries = np.frombuffer(b"".join(args["entries"]), np.uint8).reshape(n, ENTRY.size)
    bad = np.nonzero(entries[:, GRAD_BYTE] > 1)[0]
    if bad.size:
        raise InvalidInput(f"args.entries[{bad[0]}]: grad_enabled at byte {GRAD_BYTE}: "
                           f"0x{entries[bad[0], GRAD_BYTE]:02x} is not a bool (0 or 1)")
    counts = entries[:, 16:20].copy().view("<u2").reshape(n, 2).astype(np.int64).sum(axis=1)
    check_meta_starts(args["meta_starts"], counts.tolist(), len(args["metas"]))
    names = names_from_wire(args["names"])
    check_names(names)
    table = leaf_table(TENSOR_META)
    metas = scatter(encode_columns(TENSOR_META, args["metas"]), table.offsets, table.sizes, META)
    for k in np.flatnonzero(suspects(metas.view(META_DTYPE).reshape(len(metas)))):
        check_writable_meta(int(k), TENSOR_META.unpack(metas[k].tobytes()))
    records = restore(entries, np.array(args["scope_hashes"], dtype=np.uint64),
                      np.array(args["callsite_hashes"], dtype=np.uint64))
    return (header(n, len(args["metas"])) + records.tobytes() + metas.tobytes()
            + name_table(names))


def decode_batch(hex, convert: Convert, gather) -> dict:
    """crtrace.decode over a batch of files (columns in, columns out)."""
    rows = [decode_one(f, convert, gather) for f in BYTES.from_column(hex)]
    out = {k: [r[k] for r in rows] for k in REGISTRY.ops["crtrace.decode"].result.fields}
    return out | {k: np.array(out[k], dtype=np.uint32) for k in ("num_ops", "num_metas")}


def encode_batch(restore: Restore, scatter, **columns) -> dict:
    """crtrace.encode over a batch of loaded traces (columns in, columns out)."""
    args = REGISTRY.ops["crtrace.encode"].args
    n = len(columns["num_ops"])
    return {"hex": BYTES.to_column([encode_one(a, restore, scatter)
                                    for a in args.rows(columns, n)])}
