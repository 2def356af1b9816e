"""The .crtrace loader and writer: round trips, the loader's rules, and a fuzz over mutated
files (10,000 cases) in which the only outcomes are a loaded trace or invalid_input."""

from __future__ import annotations

import re
import struct
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.conformance.vectors import draw as draw_examples
from crucible_spec.engine import Implementation
from crucible_spec.spec.crtrace import (
    E18_1,
    LoadedTrace,
    frame,
    name_table_end,
    parse_crtrace,
    write_crtrace,
)
from crucible_spec.spec.crtrace_ops import traces
from crucible_spec.spec.errors import InvalidInput, SpecError
from crucible_spec.spec.tensor_meta import TENSOR_META

FUZZ_CASES = 10_000


@given(traces())
def test_write_then_parse_is_the_identity(t: LoadedTrace):
    data = write_crtrace(t)
    assert parse_crtrace(data) == t
    assert write_crtrace(parse_crtrace(data)) == data


def _legacy(t: LoadedTrace, size: int, with_names: bool) -> bytes:
    """The file of `t` with metas cut to `size` bytes (a legacy writer)."""
    data = write_crtrace(t)
    f = frame(data)
    metas = b"".join(data[f.meta_start + k * 168: f.meta_start + k * 168 + size]
                     for k in range(f.num_metas))
    tail = data[f.meta_end:] if with_names else b""
    return data[:f.meta_start] + metas + tail


@pytest.mark.parametrize("size", [160, 144])
@given(t=traces())
def test_legacy_meta_records_read_as_prefixes_of_a_default_meta(size, t):
    t.metas = [TENSOR_META.unpack(TENSOR_META.pack(m)[:size] +
                                  TENSOR_META.pack(TENSOR_META.default_values())[size:])
               for m in t.metas]
    for with_names in (False, True):
        data = _legacy(t, size, with_names)
        f = frame(data)
        if f.meta_size != size:
            # The format is ambiguous here: the larger records fit and end the file exactly
            # or before a well-formed name table, which detection prefers.
            assert f.meta_size > size
            end = name_table_end(data, f.meta_end)
            assert f.meta_end == len(data) or end == len(data)
            continue
        assert parse_crtrace(data) == \
            (t if with_names else LoadedTrace(t.entries, t.meta_starts, t.scope_hashes,
                                              t.callsite_hashes, t.metas, {}))


def test_the_loader_misreads_a_legacy_file_with_a_long_name_table():
    t = LoadedTrace([{"schema_hash": 1, "shape_hash": 2, "num_inputs": 1, "num_outputs": 0,
                      "num_scalar_args": 0, "grad_enabled": False, "op_flags": 0,
                      "scalar_values": [0] * 5}], [0], [0], [0],
                    [TENSOR_META.default_values()], {7: "a-long-enough-name"})
    data = _legacy(t, 160, with_names=True)
    assert frame(data).meta_size == 160
    assert frame(data, frozenset({E18_1})).meta_size == 168
    assert parse_crtrace(data).names == {7: "a-long-enough-name"}


@pytest.mark.parametrize("num_ops,num_metas", [(2**32 - 1, 0), (0, 2**32 - 1),
                                               (2**31, 2**31)])
def test_a_lying_header_is_rejected_without_allocating(num_ops, num_metas):
    data = b"CRTR" + struct.pack("<III", 1, num_ops, num_metas) + bytes(64)
    tracemalloc.start()
    with pytest.raises(InvalidInput, match="offset 16"):
        parse_crtrace(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("data,where", [
    (b"", "offset 0 (header)"), (b"CRTX" + bytes(12), "offset 0 (magic)"),
    (b"CRTR" + struct.pack("<III", 2, 0, 0), "offset 4 (version)"),
    (b"CRTR" + struct.pack("<III", 1, 1, 0) + bytes(79), "offset 16 (op records)"),
    (b"CRTR" + struct.pack("<III", 1, 0, 1) + bytes(100), "offset 16 (meta records)"),
])
def test_errors_name_the_offset_and_the_field(data, where):
    with pytest.raises(InvalidInput, match="^" + re.escape(where)):
        parse_crtrace(data)


POOL = [write_crtrace(t) for t in draw_examples(traces(), 60, "crtrace fuzz pool")]
"""Valid files to mutate (drawn once: generating a trace costs far more than loading one)."""


@st.composite
def mutated(draw):
    """A valid file with 1-4 of: byte flips, a truncation, appended bytes, a rewritten count."""
    data = bytearray(draw(st.sampled_from(POOL)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "append", "count"]))
        if kind == "flip" and data:
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
        elif kind == "truncate":
            del data[draw(st.integers(0, len(data))):]
        elif kind == "append":
            data += draw(st.binary(min_size=1, max_size=200))
        elif len(data) >= 16:
            struct.pack_into("<I", data, draw(st.sampled_from([8, 12])),
                             draw(st.integers(0, 2**32 - 1) | st.integers(0, 8)))
    return bytes(data)


@settings(max_examples=FUZZ_CASES)
@given(mutated())
def test_fuzz_mutated_files_load_or_are_invalid_input(data):
    try:
        t = parse_crtrace(data)
    except InvalidInput as e:
        assert e.message.startswith("offset ")
        return
    assert parse_crtrace(write_crtrace(t)) == t


@pytest.mark.parametrize("backend", ["numba", "cupy"])
@settings(max_examples=500)
@given(data=mutated())
def test_fast_decoders_agree_on_mutated_files(backend, data):
    args = {"hex": data.hex()}

    def answer(impl):
        try:
            return impl.call("crtrace.decode", args)
        except SpecError as e:
            return e.code

    assert answer(Implementation(backend)) == answer(Implementation("reference"))
