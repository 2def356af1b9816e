"""Chapter 7: the iteration detector, a K=5 signature matcher over schema hashes."""

from __future__ import annotations

from .layout import Member, array, bool_, hash64, pad, struct, u8, u32

K = 5
"""Signature length: the first K schema hashes after a reset."""

ITERATION_DETECTOR = struct("IterationDetector", [
    Member("expected_hash_", hash64),
    Member("signature", array(hash64, K)),
    Member("match_pos_", u8),
    Member("confirmed", bool_),
    Member("pad0_", pad(2)),
    Member("ops_since_boundary", u32),
    Member("signature_len", u32),
    Member("pad1_", pad(4)),
    Member("boundaries_detected", u32),
    Member("last_completed_len", u32),
    Member("pad2_", pad(56)),
], size=128, align=8, chapter=7, doc="Detector state: two cache lines, all zero at start.")
