"""Readable listings of the files the spec reads: a .crtrace (header, then per op its index,
name, hashes, scalars and the TensorMeta of each input and output), a CDAG node (its decoded
fields, then its ops) and a Cipher checkpoint store (HEAD, the log, each stored region). Each
listing is a stream of lines or of JSON-ready records, so a 100k-op trace is printed op by op.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..spec.core.errata import NO_ERRATA
from ..spec.core.errors import InvalidInput
from ..spec.crucible.cipher import Cipher
from ..spec.crucible.types import NONE32, DeviceType, ScalarType
from .oracle_cdag import decoded
from .trace_fields import TraceFile


def _enum_name(kind, value: int) -> str:
    try:
        return kind(value).name
    except ValueError:
        return str(value)


def meta_record(m: dict) -> dict:
    """A TensorMeta as a listing shows it: used dims only, names for dtype and device."""
    n = m["ndim"]
    return {"dtype": _enum_name(ScalarType, m["dtype"]), "sizes": m["sizes"][:n],
            "strides": m["strides"][:n],
            "device": f"{_enum_name(DeviceType, m['device_type']).lower()}:{m['device_idx']}",
            "data_ptr": f"0x{m['data_ptr']:x}", "storage_offset": m["storage_offset"],
            "requires_grad": m["requires_grad"]}


def trace_op_record(t: TraceFile, i: int) -> dict:
    """Op i of a loaded trace: index, name, hashes (hex), flags, scalars and tensors."""
    e, start = t.trace.entries[i], t.trace.meta_starts[i]
    n_in, n_out = e["num_inputs"], e["num_outputs"]
    metas = [] if start == NONE32 else t.trace.metas[start:start + n_in + n_out]
    return {
        "index": i, "name": t.op_name(i),
        "schema_hash": f"0x{e['schema_hash']:016x}", "shape_hash": f"0x{e['shape_hash']:016x}",
        "scope_hash": f"0x{t.trace.scope_hashes[i]:016x}",
        "callsite_hash": f"0x{t.trace.callsite_hashes[i]:016x}",
        "grad_enabled": e["grad_enabled"], "op_flags": e["op_flags"],
        "scalars": e["scalar_values"][:min(e["num_scalar_args"], 5)],
        "inputs": [meta_record(m) for m in metas[:n_in]],
        "outputs": [meta_record(m) for m in metas[n_in:]],
    }


def trace_header(t: TraceFile) -> dict:
    f = t.frame
    return {"kind": "crtrace", "num_ops": f.num_ops, "num_metas": f.num_metas,
            "meta_record_bytes": f.meta_size, "names": len(t.trace.names), "bytes": len(t.data)}


def _tensor_line(label: str, m: dict) -> str:
    return (f"    {label:7} {m['dtype']} {m['sizes']} strides {m['strides']} {m['device']} "
            f"ptr {m['data_ptr']}")


def trace_op_lines(r: dict) -> Iterator[str]:
    """One op of a listing: a line of hashes, then a line per tensor."""
    scalars = f" scalars {r['scalars']}" if r["scalars"] else ""
    yield (f"op {r['index']} {r['name']}  schema {r['schema_hash']} shape {r['shape_hash']} "
           f"scope {r['scope_hash']} callsite {r['callsite_hash']} grad "
           f"{int(r['grad_enabled'])} flags 0x{r['op_flags']:02x}{scalars}")
    for k, m in enumerate(r["inputs"]):
        yield _tensor_line(f"in[{k}]", m)
    for k, m in enumerate(r["outputs"]):
        yield _tensor_line(f"out[{k}]", m)


def dump_trace(t: TraceFile, ops: slice, as_json: bool) -> Iterator[str]:
    """A .crtrace listing: the header, then the ops `ops` selects (clipped to the file)."""
    head = trace_header(t)
    chosen = range(*ops.indices(t.num_ops))
    if as_json:
        yield json.dumps(head | {"ops_shown": [chosen.start, chosen.stop]}, sort_keys=True)
        for i in chosen:
            yield json.dumps(trace_op_record(t, i), sort_keys=True)
        return
    yield (f"crtrace: {head['num_ops']} ops, {head['num_metas']} metas "
           f"({head['meta_record_bytes']}-byte records), {head['names']} names, "
           f"{head['bytes']} bytes")
    for i in chosen:
        yield from trace_op_lines(trace_op_record(t, i))


def dump_cdag(data: bytes, ops: slice, as_json: bool,
              errata: frozenset[str] = NO_ERRATA) -> Iterator[str]:
    """A CDAG node listing: its kind and decoded fields, then (a region's) ops in `ops`."""
    kind, fields = decoded(data, errata)
    node_ops = fields.pop("ops", [])
    chosen = range(*ops.indices(len(node_ops)))
    head = {"kind": f"cdag {kind}", "bytes": len(data), "num_ops": len(node_ops)} | fields
    if as_json:
        yield json.dumps(head, sort_keys=True)
        for i in chosen:
            yield json.dumps({"index": i} | node_ops[i], sort_keys=True)
        return
    yield f"cdag {kind} node: {len(data)} bytes" + (f", {len(node_ops)} ops" if node_ops else "")
    for key, value in fields.items():
        yield f"  {key}: {json.dumps(value, sort_keys=True)}"
    for i in chosen:
        yield f"op {i}: {json.dumps(node_ops[i], sort_keys=True)}"


def is_cipher_store(root: Path) -> bool:
    """A directory laid out as a Cipher store: an objects/ directory, and a HEAD or a log."""
    return (root / "objects").is_dir() and ((root / "HEAD").is_file() or
                                           (root / "log").is_file())


def _store_files(root: Path) -> dict[str, bytes]:
    objects = sorted(str(p.relative_to(root)) for p in (root / "objects").glob("*/*")
                     if p.is_file())
    names = ["HEAD", "log", *objects]
    return {n: (root / n).read_bytes() for n in names if (root / n).is_file()}


def dump_cipher(root: Path, as_json: bool, errata: frozenset[str] = NO_ERRATA) -> Iterator[str]:
    """A Cipher store: its head, every log entry (step, hash, time), then every object with
    the content hash and op count of the region it holds (or why it does not decode)."""
    files = _store_files(root)
    store = Cipher.open(files)
    objects = []
    for name in sorted(n for n in files if n.startswith("objects/")):
        record = {"path": name, "bytes": len(files[name])}
        try:
            kind, fields = decoded(files[name], errata)
            record |= {"kind": kind, "content_hash": fields.get("content_hash"),
                       "num_ops": len(fields.get("ops", []))}
        except InvalidInput as e:
            record |= {"error": e.message}
        objects.append(record)
    head = f"0x{store.head:016x}"
    log = [{"step": e.step_id, "hash": f"0x{e.hash:016x}", "ts": e.ts} for e in store.log]
    if as_json:
        yield json.dumps({"kind": "cipher", "head": head, "log": log, "objects": objects},
                         sort_keys=True)
        return
    yield f"cipher store: head {head}, {len(log)} log entries, {len(objects)} objects"
    for e in log:
        yield f"  step {e['step']}: {e['hash']} at {e['ts']}"
    for o in objects:
        what = o.get("error") or f"{o['kind']} {o['content_hash']}, {o['num_ops']} ops"
        yield f"  {o['path']}: {o['bytes']} bytes, {what}"
