"""Chapter 19: RingKernel's content digest and delta checkpoints (checkpoint.rs content_digest,
delta_from, applied_with_delta).

A chunk's identity is (type, chunk_id) for DeviceMemory and Custom chunks and (type, None) for
every other type. A checkpoint is indexed by identity with the LAST chunk of an identity
winning.

content_digest(chunks): the lowercase 8-hex CRC-32/IEEE of, per chunk of a known type in order,
the 16-byte record [type u32, chunk_id or 0 u64, 4 zero bytes] followed by the chunk's data.
Lengths are not framed and the order counts: it names a chunk sequence, it is no content
address.

delta(base, new):
1. A chunk of `new` goes into the delta when base has no chunk of its identity or base's chunk
   of that identity holds other bytes; an unchanged chunk is left out. Chunks keep new's order.
2. The metadata is new's with custom["ringkernel.delta.parent_digest"] = base's digest and
   custom["crucible.delta.layout"] = new's chunk sequence, one comma-separated token per chunk:
   "+" for the delta's next chunk, else the identity ("T" or "T:id") of the base chunk it
   keeps. A base identity the layout does not name is deleted: the layout is the tombstone
   list and the order at once (RingKernel records neither, E19.43). A `new` that already holds
   either key is refused (RingKernel overwrites the parent key, E19.44).

apply(base, delta):
1. The delta must record a parent digest (RingKernel checks none when the key is absent,
   E19.45), and it must be base's digest.
2. The chunks are the layout's, in its order (RingKernel: base's chunks in base order, each
   replaced by the delta's chunk of its identity, then the delta's other chunks, E19.43).
3. The metadata is the delta's without the two delta keys (RingKernel keeps them, E19.44).

The result of delta and of apply keeps the header of new and of the delta (RingKernel makes a
fresh one: flags 0, E19.46).

So apply(base, delta(base, new)) == new for every base and new: deletions, order and repeated
identities included.
"""

from __future__ import annotations

import struct as _struct
import zlib
from dataclasses import replace

from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from .checkpoint import CHUNK_TYPES, E19_46, KEYED, Checkpoint, Chunk

E19_43 = "E19.43"
E19_44 = "E19.44"
E19_45 = "E19.45"

PARENT_KEY = "ringkernel.delta.parent_digest"
"""Real code: checkpoint.rs, DELTA_PARENT_DIGEST_KEY."""
LAYOUT_KEY = "crucible.delta.layout"
"""The spec's key: new's chunk sequence (step 2 of delta)."""
DELTA_KEYS = (PARENT_KEY, LAYOUT_KEY)
FROM_DELTA = "+"

Identity = tuple[int, int | None]


def identity(c: Chunk) -> Identity | None:
    """(type, id) for DeviceMemory and Custom, (type, None) for other known types; None for
    an unknown type."""
    if c.type not in CHUNK_TYPES:
        return None
    return (c.type, c.id if c.type in KEYED else None)


def content_digest(chunks: tuple[Chunk, ...]) -> str:
    """CRC-32 over each known chunk's 16-byte identity record and data, as 8 lowercase hex."""
    crc = 0
    for c in chunks:
        ident = identity(c)
        if ident is not None:
            crc = zlib.crc32(_struct.pack("<IQ4x", ident[0], ident[1] or 0) + c.data, crc)
    return f"{crc:08x}"


def index(chunks: tuple[Chunk, ...]) -> dict[Identity, Chunk]:
    """Chunks by identity; the last chunk of an identity wins."""
    return {ident: c for c in chunks if (ident := identity(c)) is not None}


def token(ident: Identity) -> str:
    return f"{ident[0]}" if ident[1] is None else f"{ident[0]}:{ident[1]}"


def parse_token(text: str) -> Identity:
    """The identity a layout token names; invalid_input when it names none."""
    kind, _, cid = text.partition(":")
    if not kind.isdigit() or int(kind) not in CHUNK_TYPES or \
            (int(kind) in KEYED) != bool(cid) or (cid and not cid.isdigit()) or \
            (cid and int(cid) >= 1 << 64):
        raise InvalidInput(f"delta.metadata.custom[{LAYOUT_KEY!r}]: {text!r} is no chunk "
                           "identity")
    return (int(kind), int(cid) if cid else None)


def with_custom(c: Checkpoint, custom: dict[str, str]) -> Checkpoint:
    return replace(c, metadata=replace(c.metadata, custom=tuple(custom.items())))


def fresh_header(c: Checkpoint, errata: frozenset[str] = NO_ERRATA) -> Checkpoint:
    """The checkpoint as delta and apply return it (RingKernel's Checkpoint::new: flags 0,
    E19.46)."""
    return replace(c, flags=0) if E19_46 in errata else c


def delta_from(base: Checkpoint, new: Checkpoint, errata: frozenset[str] = NO_ERRATA
               ) -> Checkpoint:
    """Steps 1-2 of delta."""
    custom = dict(new.metadata.custom)
    taken = [k for k in DELTA_KEYS if k in custom]
    if taken and E19_44 not in errata:
        raise InvalidInput(f"new.metadata.custom: {taken[0]!r} is reserved for deltas")
    old = index(base.chunks)
    picked, layout = [], []
    for c in new.chunks:
        ident = identity(c)
        if ident is None:
            continue
        if ident in old and old[ident].data == c.data:
            layout.append(token(ident))
        else:
            picked.append(c)
            layout.append(FROM_DELTA)
    custom[PARENT_KEY] = content_digest(base.chunks)
    if E19_43 not in errata:
        custom[LAYOUT_KEY] = ",".join(layout)
    return fresh_header(replace(with_custom(new, custom), chunks=tuple(picked)), errata)


def merged(base: Checkpoint, delta: Checkpoint) -> tuple[Chunk, ...]:
    """RingKernel's step 2 (E19.43): base's chunks, each replaced by the delta's chunk of its
    identity, then the delta's chunks of identities base lacks."""
    fresh, replaced, out = index(delta.chunks), set(), []
    for c in base.chunks:
        ident = identity(c)
        if ident in fresh:
            out.append(fresh[ident])
            replaced.add(ident)
        else:
            out.append(c)
    return tuple(out) + tuple(c for c in delta.chunks
                              if (ident := identity(c)) is not None and ident not in replaced)


def laid_out(base: Checkpoint, delta: Checkpoint, layout: str | None) -> tuple[Chunk, ...]:
    """Step 2: each token's chunk in layout order; base identities it does not name are gone."""
    if layout is None:
        raise InvalidInput(f"delta.metadata.custom: no {LAYOUT_KEY!r} recorded")
    old, fresh, out = index(base.chunks), iter(delta.chunks), []
    for text in layout.split(",") if layout else ():
        if text == FROM_DELTA:
            c = next(fresh, None)
            if c is None:
                raise InvalidInput("delta: its layout places more chunks than it holds")
        else:
            c = old.get(parse_token(text))
            if c is None:
                raise InvalidInput(f"delta: its layout keeps {text}, which the base lacks")
        out.append(c)
    if next(fresh, None) is not None:
        raise InvalidInput("delta: it holds chunks its layout does not place")
    return tuple(out)


def applied(base: Checkpoint, delta: Checkpoint, errata: frozenset[str] = NO_ERRATA
            ) -> Checkpoint:
    """Steps 1-3 of apply."""
    custom = dict(delta.metadata.custom)
    recorded = custom.get(PARENT_KEY)
    if recorded is None and E19_45 not in errata:
        raise InvalidInput(f"delta.metadata.custom: no {PARENT_KEY!r} recorded")
    actual = content_digest(base.chunks)
    if recorded is not None and recorded != actual:
        raise InvalidInput(f"delta parent digest mismatch: it records {recorded}, the base's "
                           f"is {actual}")
    if E19_43 in errata:
        chunks = merged(base, delta)
    else:
        chunks = laid_out(base, delta, custom.get(LAYOUT_KEY))
    if E19_44 not in errata:
        custom = {k: v for k, v in custom.items() if k not in DELTA_KEYS}
    return fresh_header(replace(with_custom(delta, custom), chunks=chunks), errata)
