"""The .crtrace loader's rules on fixed files, the fuzz obligation PO18.72 run over 10,000
mutated files, and the fast decoders against the reference. The round trip and the legacy
records are property obligations PO18.70 and PO18.71."""

from __future__ import annotations

import re
import struct
import tracemalloc
from dataclasses import replace

import pytest
from hypothesis import given, settings

from crucible_spec.engine import Implementation
from crucible_spec.proofs.core.evidence import check_property
from crucible_spec.proofs.crucible.properties_formats import (
    CRTRACE_FUZZ,
    crtrace_files,
    legacy_file,
)
from crucible_spec.spec.core.errors import InvalidInput, SpecError
from crucible_spec.spec.crucible.crtrace import E18_1, LoadedTrace, frame, parse_crtrace
from crucible_spec.spec.crucible.tensor_meta import TENSOR_META

FUZZ_CASES = 10_000


def test_the_loader_misreads_a_legacy_file_with_a_long_name_table():
    t = LoadedTrace([{"schema_hash": 1, "shape_hash": 2, "num_inputs": 1, "num_outputs": 0,
                      "num_scalar_args": 0, "grad_enabled": False, "op_flags": 0,
                      "scalar_values": [0] * 5}], [0], [0], [0],
                    [TENSOR_META.default_values()], {7: "a-long-enough-name"})
    data = legacy_file(t, 160, with_names=True)
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


@pytest.mark.slow(seconds=50)
def test_fuzz_mutated_files_load_or_are_invalid_input():
    """PO18.72 (mutated files load or are invalid_input) over 10,000 cases."""
    assert check_property(replace(CRTRACE_FUZZ, examples=FUZZ_CASES)).counterexample is None


@pytest.mark.parametrize("backend", ["numba", "cupy"])
@settings(max_examples=500)
@given(data=crtrace_files())
def test_fast_decoders_agree_on_mutated_files(backend, data):
    args = {"hex": data.hex()}

    def answer(impl):
        try:
            return impl.call("crtrace.decode", args)
        except SpecError as e:
            return e.code

    assert answer(Implementation(backend)) == answer(Implementation("reference"))
