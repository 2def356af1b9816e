"""`oracle trace` reads a file through the array loader and the numba pipeline; the spec's loader
and reference pipeline stay its oracle. On the bundled recordings and synthetic traces, under the
default and the seed profile: both pipelines give the same boundaries, region windows, content
hashes and plans, a region rebuilt by the reference from its window alone is the one the whole
reference run built, and every comparison reads the same either way.

Changes are planted at offsets of the .crtrace format itself (16-byte header, 80-byte op
records with the schema hash first, 168-byte TensorMeta records with sizes first).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from crucible_spec.conformance.trace_diff import (
    compare_regions,
    compare_traces,
    numba_facts,
    reference_facts,
)
from crucible_spec.conformance.trace_fields import TraceFile
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible.crtrace import frame, parse_crtrace
from crucible_spec.synthetic_file import synthetic_file

TRACES = Path(__file__).resolve().parents[2] / "examples" / "traces"
RECORD, META = 80, 168
PROFILES = ("crucible", "crucible@8d2680a2")


def files() -> dict[str, bytes]:
    out = {p.stem: p.read_bytes() for p in sorted(TRACES.glob("*.crtrace"))}
    out["synthetic mlp, fresh storages"] = synthetic_file(700, "mlp", 3, fresh_storages=True)
    out["synthetic transformer"] = synthetic_file(1300, "transformer", 1)
    return out


FILES = files()


def spec_loaded(data: bytes, errata: frozenset[str]) -> TraceFile:
    """The file as the spec's loader reads it: no columns, so every tool runs the reference."""
    return TraceFile(data, frame(data, errata), parse_crtrace(data, errata), errata=errata)


def plant(data: bytes, at: int, fmt: str, change) -> bytes:
    out = bytearray(data)
    (value,) = struct.unpack_from(fmt, out, at)
    struct.pack_into(fmt, out, at, change(value))
    return bytes(out)


def meta_at(data: bytes, k: int) -> int:
    """Where meta k lies: after the header and every op record."""
    return 16 + struct.unpack_from("<I", data, 8)[0] * RECORD + k * META


def op_at(data: bytes, share: float) -> int:
    """Where the op record `share` of the way through the trace lies."""
    return 16 + int(struct.unpack_from("<I", data, 8)[0] * share) * RECORD


def meta_share(data: bytes, share: float) -> int:
    """Where the meta `share` of the way through the metas lies."""
    return meta_at(data, int(struct.unpack_from("<I", data, 12)[0] * share))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", list(FILES))
def test_numba_and_reference_runs_give_the_same_region_facts(name, profile):
    errata = profile_errata(profile)
    fast = numba_facts(TraceFile.read(FILES[name], errata), errata)
    ref = reference_facts(spec_loaded(FILES[name], errata), errata)
    assert fast.boundaries == ref.boundaries
    assert fast.regions == ref.regions
    assert ref.regions, "a trace without regions would compare nothing"
    n = len(ref.regions)
    for k in sorted({k for k in (0, 1, n // 2, n - 1) if k < n}):
        assert fast.wire(k) == ref.wire(k), f"region {k}"


CHANGES = {
    "a schema hash (boundaries move)": lambda d: plant(d, op_at(d, 0.6), "<Q",
                                                       lambda v: v ^ 1),
    "a meta's first size (plans change)": lambda d: plant(d, meta_share(d, 0.7), "<q",
                                                          lambda v: v + 3),
    "a scalar": lambda d: plant(d, op_at(d, 0.5) + 32, "<q", lambda v: v + 1),
    "a data pointer": lambda d: plant(d, meta_share(d, 0.8) + 128, "<Q", lambda v: v + 256),
}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("name", list(FILES))
def test_compare_traces_reads_the_same_through_either_pipeline(name, change, profile):
    errata = profile_errata(profile)
    a, b = FILES[name], CHANGES[change](FILES[name])
    fast = compare_traces(TraceFile.read(a, errata), TraceFile.read(b, errata), errata)
    ref = compare_traces(spec_loaded(a, errata), spec_loaded(b, errata), errata)
    assert fast.first is not None
    assert fast.to_json() == ref.to_json()
    assert fast.lines() == ref.lines()


@pytest.mark.parametrize("name", list(FILES))
def test_compare_regions_reads_the_same_through_either_pipeline(name):
    errata = profile_errata("crucible")
    t, ref = TraceFile.read(FILES[name], errata), spec_loaded(FILES[name], errata)
    last = len(reference_facts(ref, errata).regions) - 1
    assert compare_regions(t, 0, last, errata).to_json() == \
        compare_regions(ref, 0, last, errata).to_json()


def test_a_file_the_array_loader_refuses_is_the_spec_loaders_to_judge():
    """E18.4 (seed profile): the header's meta count is not checked against the records', so
    a file whose last op's metas run past the end loads in the spec and is refused by the
    array loader; TraceFile.read then keeps the spec's load (no columns)."""
    errata = profile_errata("crucible@8d2680a2")
    data = FILES["mlp"]
    short = plant(data, 12, "<I", lambda v: v - 1)
    cut = short[:meta_at(short, struct.unpack_from("<I", short, 12)[0])] + \
        data[meta_at(data, struct.unpack_from("<I", data, 12)[0]):]
    t = TraceFile.read(cut, errata)
    assert t.columns is None and t.num_ops == len(parse_crtrace(cut, errata).entries)
