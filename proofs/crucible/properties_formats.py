"""Chapters 17 and 18 as properties over seeded hypothesis draws: the .crtrace writer and
loader, the CDAG region and branch codecs (round trips, and mutated files that either decode
canonically or are rejected with an offset), and the Philox block's inverse."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.cdag import (
    Reader,
    decode_branch,
    decode_region,
    encode_branch,
    encode_region,
    op_body_size,
    region_size,
)
from ...spec.crucible.cdag_ops import branch_values, region_values
from ...spec.crucible.crtrace import (
    LoadedTrace,
    check_meta_total,
    frame,
    meta_record_size,
    name_table_end,
    parse_crtrace,
    write_crtrace,
)
from ...spec.crucible.crtrace_ops import traces
from ...spec.crucible.philox import block_inverse, philox_block, philox_round
from ...spec.crucible.tensor_meta import TENSOR_META
from ..core.obligation import Property, property_obligation

POOL_SIZE = 40
"""Valid nodes to mutate, drawn once per process: drawing a trace or a region costs far more
than decoding a file, so the fuzz draws its bases from a fixed pool (encoded per case, so a
planted bug in an encoder is never kept in the pool)."""
U32 = st.integers(0, 2**32 - 1)


@functools.cache
def pool(name: str) -> tuple:
    """POOL_SIZE seeded draws of the spec strategy `name` (traces, regions or branches)."""
    from ...conformance.vectors import draw

    strategy = {"traces": traces, "regions": region_values, "branches": branch_values}[name]
    return tuple(draw(strategy(), POOL_SIZE, f"{name} fuzz pool"))
COUNT_VALUES = st.sampled_from((0, 1, 2, 3, 8, 255, 0xFFFF, 0xFFFFFFFF)) | U32


@st.composite
def mutated(draw, bases: st.SearchStrategy) -> bytes:
    """A valid file (bytes, offsets of its count fields) with 1-4 of: a byte flip, a
    truncation, inserted, appended or deleted bytes, a count rewritten."""
    data, counts = draw(bases)
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("flip", "truncate", "insert", "append", "delete", "count")))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "append":
            data += draw(st.binary(min_size=1, max_size=200))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 8))]
        elif counts:
            c = draw(st.sampled_from(counts))
            width = 4 if c + 4 <= len(data) else 2
            data[c:c + width] = (draw(COUNT_VALUES) & ((1 << 8 * width) - 1)).to_bytes(
                width, "little")
    return bytes(data)


# --- .crtrace (chapter 18) ------------------------------------------------------------------


def _crtrace_round_trip(t: LoadedTrace) -> None:
    data = write_crtrace(t)
    assert parse_crtrace(data) == t
    assert write_crtrace(parse_crtrace(data)) == data


@property_obligation(
    "PO18.70",
    "Writing a trace and loading the file gives the trace back, and the file back.",
    covers=("crtrace.encode", "crtrace.decode"),
    subject=parse_crtrace,
    mutants=(Mutant.edit("scope is callsite", "the loader reads each op's callsite hash as its "
                         "scope hash", parse_crtrace, 'append(r["scope_hash"])',
                         'append(r["callsite_hash"])'),),
)
def crtrace_round_trip(_subject):
    return [Property("a trace", _crtrace_round_trip, strategy=traces, examples=60)]


def legacy_file(t: LoadedTrace, size: int, with_names: bool) -> bytes:
    """The file of `t` with metas cut to `size` bytes (a legacy writer)."""
    data = write_crtrace(t)
    f = frame(data)
    metas = b"".join(data[f.meta_start + k * 168: f.meta_start + k * 168 + size]
                     for k in range(f.num_metas))
    tail = data[f.meta_end:] if with_names else b""
    return data[:f.meta_start] + metas + tail


def _legacy(case: tuple[LoadedTrace, int]) -> None:
    t, size = case
    default = TENSOR_META.pack(TENSOR_META.default_values())
    t.metas = [TENSOR_META.unpack(TENSOR_META.pack(m)[:size] + default[size:]) for m in t.metas]
    for with_names in (False, True):
        data = legacy_file(t, size, with_names)
        f = frame(data)
        if f.meta_size != size:
            # Ambiguous: the larger records fit and end the file exactly or before a
            # well-formed name table, which detection prefers.
            assert f.meta_size > size
            end = name_table_end(data, f.meta_end)
            assert f.meta_end == len(data) or end == len(data)
            continue
        assert parse_crtrace(data) == \
            (t if with_names else LoadedTrace(t.entries, t.meta_starts, t.scope_hashes,
                                              t.callsite_hashes, t.metas, {}))


@property_obligation(
    "PO18.71",
    "A legacy file with 160- or 144-byte meta records (with or without names) loads as the "
    "trace whose metas are those prefixes of a default meta, unless the larger records "
    "also frame the file exactly.",
    covers=("crtrace.decode",),
    subject=parse_crtrace,
    mutants=(Mutant.edit("largest fit only", "record size detection ignores a name table "
                         "after the records (the seed's E18.1)", meta_record_size,
                         "end == len(data) or name_table_end(data, end) == len(data)",
                         "end == len(data)"),),
)
def crtrace_legacy_records(_subject):
    return [Property("a trace and a legacy record size", _legacy,
                     strategy=lambda: st.tuples(traces(), st.sampled_from((160, 144))),
                     examples=100)]


def _loads_or_invalid(data: bytes) -> None:
    try:
        t = parse_crtrace(data)
    except InvalidInput as e:
        assert e.message.startswith("offset "), e.message
        return
    assert parse_crtrace(write_crtrace(t)) == t


def crtrace_files() -> st.SearchStrategy:
    """Mutated .crtrace files (the counts at offsets 8 and 12 among the mutations)."""
    return mutated(st.sampled_from(pool("traces")).map(lambda t: (write_crtrace(t), [8, 12])))


CRTRACE_FUZZ = Property("a mutated file", _loads_or_invalid, strategy=crtrace_files,
                        examples=200)


@property_obligation(
    "PO18.72",
    "A mutated .crtrace file either loads as a trace that writes and loads back to itself, or "
    "is rejected with InvalidInput naming an offset; nothing else.",
    covers=("crtrace.decode",),
    subject=parse_crtrace,
    mutants=(Mutant.edit("meta total unchecked", "the loader accepts records using other "
                         "than num_metas metas (the seed's E18.4)", check_meta_total,
                         "if used != num_metas and E18_4 not in errata:", "if False:"),),
)
def crtrace_fuzz(_subject):
    return [CRTRACE_FUZZ]


# --- CDAG (chapter 18) ----------------------------------------------------------------------


def _cdag_size_round_trip(region) -> None:
    data = encode_region(region)
    assert len(data) == region_size(region)
    assert encode_region(decode_region(data)) == data


@property_obligation(
    "PO18.73",
    "A region file is region_size bytes long, and decoding it and encoding the result gives "
    "the same bytes.",
    covers=("cdag.encode", "cdag.decode"),
    subject=encode_region,
    mutants=(Mutant.edit("index arrays one word each", "the body counts 4 bytes per tensor, "
                         "not 2 per input and 1 per output", op_body_size,
                         "4 * (2 * nin + nout)", "4 * (nin + nout)"),),
)
def cdag_size_and_round_trip(_subject):
    return [Property("a region", _cdag_size_round_trip, strategy=region_values, examples=60)]


def canonical_or_rejected(decode, encode, data: bytes) -> None:
    """`data` decodes to a node that encodes back to `data`, or is InvalidInput at an offset."""
    try:
        node = decode(data)
    except InvalidInput as e:
        assert e.message.startswith("offset "), e.message
        return
    assert encode(node) == data


COUNTS = ("num_ops", "num_inputs", "num_outputs", "num_scalar_args", "num_slots", "num_arms")


def _with_counts(encode, node) -> tuple[bytes, list[int]]:
    """The file of `node` and the offsets of its count fields."""
    spans: list = []
    data = encode(node, spans)
    return data, [at for at, _, name in spans if name.rsplit(".", 1)[-1] in COUNTS]


def region_files() -> st.SearchStrategy:
    return mutated(st.sampled_from(pool("regions")).map(
        lambda r: _with_counts(encode_region, r)))


def branch_files() -> st.SearchStrategy:
    return mutated(st.sampled_from(pool("branches")).map(
        lambda b: _with_counts(encode_branch, b)))


REGION_FUZZ = Property("a mutated region file",
                       lambda data: canonical_or_rejected(decode_region, encode_region, data),
                       strategy=region_files, examples=300)
BRANCH_FUZZ = Property("a mutated branch file",
                       lambda data: canonical_or_rejected(decode_branch, encode_branch, data),
                       strategy=branch_files, examples=300)


@property_obligation(
    "PO18.74",
    "A mutated CDAG region file either decodes to a region that encodes back to the same bytes "
    "or is rejected with InvalidInput naming an offset.",
    covers=("cdag.decode",),
    subject=decode_region,
    mutants=(Mutant.edit("trailing bytes read", "the reader ignores bytes after the node (the "
                         "seed's E18.6)", Reader.end, "if self.left and not lenient:",
                         "if False:"),),
)
def cdag_region_fuzz(_subject):
    return [REGION_FUZZ]


@property_obligation(
    "PO18.75",
    "A mutated CDAG branch file either decodes to a branch that encodes back to the same bytes "
    "or is rejected with InvalidInput naming an offset.",
    covers=("cdag.decode_branch",),
    subject=decode_branch,
    mutants=(Mutant.edit("trailing bytes read", "decode_branch ignores bytes after the arms",
                         decode_branch, "r.end(lenient)\n    return CdagBranch",
                         "return CdagBranch"),),
)
def cdag_branch_fuzz(_subject):
    return [BRANCH_FUZZ]


# --- Philox (chapter 17) --------------------------------------------------------------------

WORD = st.integers(0, 2**32 - 1)


def _inverts(case: tuple[list[int], list[int]]) -> None:
    ctr, key = case
    assert block_inverse(philox_block(ctr, key), key) == ctr


@property_obligation(
    "PO17.70",
    "block_inverse undoes philox_block: every counter comes back under every key.",
    covers=("philox.block",),
    subject=philox_block,
    mutants=(Mutant.edit("key words swapped", "the round XORs c1 with the second key word",
                         philox_round, "hi1 ^ ctr[1] ^ key[0]", "hi1 ^ ctr[1] ^ key[1]"),
             Mutant.edit("keys in order", "the inverse undoes the rounds with the round keys "
                         "in forward order", block_inverse, "reversed(keys)", "keys")),
)
def block_inverts(_subject):
    return [Property("a counter and a key", _inverts,
                     strategy=lambda: st.tuples(st.lists(WORD, min_size=4, max_size=4),
                                                st.lists(WORD, min_size=2, max_size=2)),
                     examples=100)]

