"""Chapter 18: transactions, the log of which region is active at which step."""

from __future__ import annotations

import enum

from .layout import Member, enum_of, hash64, pad, ptr, struct, u8, u64


class TxStatus(enum.IntEnum):
    """Transaction state; CLOSED is documented but never entered at 8d2680a2."""

    RECORDING = 0
    CLOSED = 1
    COMMITTED = 2
    ACTIVE = 3
    SUPERSEDED = 4
    ROLLED_BACK = 5


TRANSACTION = struct("Transaction", [
    Member("step_id", u64),
    Member("content_hash", hash64),
    Member("merkle_root", hash64),
    Member("region", ptr),
    Member("ts_ns", u64, doc="steady-clock timestamp: opaque, not deterministic"),
    Member("status", enum_of(TxStatus, u8), default=TxStatus.RECORDING),
    Member("pad", pad(7)),
], size=48, align=8, chapter=18, doc="One step's record.")
