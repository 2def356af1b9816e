"""The brute-force definitions behind the behaviour obligations, on hand-worked cases."""

from __future__ import annotations

from crucible_spec.proofs.crucible.detector import by_definition, canonical_streams
from crucible_spec.proofs.crucible.storage import span_by_formula
from crucible_spec.spec.core.errata import NO_ERRATA

A, B = 0xA, 0xB
SIG = [A, A, A, A, B]


def test_restart_witness_has_two_boundaries_by_definition():
    stream = SIG + SIG + [A] + SIG + SIG
    boundaries, state = by_definition(stream, 5, NO_ERRATA)
    assert [b["index"] for b in boundaries] == [15, 20]
    assert [b["last_completed_len"] for b in boundaries] == [6, 5]
    assert state.confirmed and state.match_pos == 0


def test_seed_restart_misses_the_occurrence_inside_a_a_a():
    stream = SIG + SIG + [A] + SIG + SIG
    boundaries, _ = by_definition(stream, 5, frozenset({"E7.1"}))
    assert [b["index"] for b in boundaries] == [20]


def test_streams_are_enumerated_once_per_renaming():
    assert sorted(canonical_streams(3, 2)) == [(), (0,), (0, 0), (0, 0, 0), (0, 0, 1),
                                               (0, 1), (0, 1, 0), (0, 1, 1)]


def test_span_formula_examples():
    assert span_by_formula([3, 4], [-4, 1], 6) == 48
    assert span_by_formula([2, 0], [1, 1], 6) == 0


def test_a_negative_device_type_is_packed_in_64_bits_as_the_real_code_does():
    """E8.4 path: the real Crucible answers 0x936f864631821f42 for this region."""
    from crucible_spec.engine import Implementation
    from crucible_spec.spec.core.errata import profile_errata

    impl = Implementation("reference", profile_errata("crucible@8d2680a2"))
    meta = {"data_ptr": "0x0", "device_idx": -24, "device_type": -9, "dtype": 56, "ndim": 0,
            "sizes": [], "strides": []}
    answer = impl.call("dag.content_hash", {"ops": [{"inputs": [meta], "schema_hash": "0x138"}]})
    assert answer == {"out": "0x936f864631821f42"}
