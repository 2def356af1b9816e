"""Chapter 18: transactions, the log of which region is active at which step."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from ..core.layout import Member, enum_of, hash64, pad, ptr, struct, u8, u64


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

E18_9 = "E18.9"
TXLOG_CAPACITY = 16
"""Real code: `Transaction.h`, `TransactionLog<N = 16>`."""


def default_txlog_capacity() -> int:
    """TransactionLog's default N, read when a log is made (so the constant is read at call
    time, not bound into the class at import)."""
    return TXLOG_CAPACITY


@dataclass
class Tx:
    """A Transaction's fields (ts_ns is opaque and left out); region is a region id."""

    step_id: int = 0
    content_hash: int = 0
    merkle_root: int = 0
    region: int | None = None
    status: TxStatus = TxStatus.RECORDING


@dataclass
class TransactionLog:
    """TransactionLog<N>: a ring of N >= 2 transactions (one must be able to stay active while
    another is recorded); transactions are named by slot index."""

    capacity: int = field(default_factory=default_txlog_capacity)
    entries: list[Tx] = field(default_factory=list)
    head: int = 0
    count: int = 0
    active: int | None = None

    def __post_init__(self) -> None:
        assert self.capacity & (self.capacity - 1) == 0 and self.capacity >= 2
        self.entries = self.entries or [Tx() for _ in range(self.capacity)]


def begin_tx(log: TransactionLog, step: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """A fresh RECORDING transaction at the head slot. The spec never reuses the slot of the
    active transaction (the head steps past it); under E18.9 the seed overwrites it."""
    mask = log.capacity - 1
    if E18_9 not in errata and log.active == log.head & mask:
        log.head += 1  # 0. keep the active transaction
    slot = log.head & mask  # 1. reset the head slot
    log.entries[slot] = Tx(step_id=step)
    log.head += 1  # 2
    log.count = min(log.count + 1, log.capacity)
    return slot


def commit(log: TransactionLog, slot: int, region: int | None, content_hash: int,
           merkle_root: int) -> bool:
    """Only a RECORDING (or CLOSED) transaction commits."""
    tx = log.entries[slot]
    if tx.status not in (TxStatus.RECORDING, TxStatus.CLOSED):
        return False
    tx.region, tx.content_hash, tx.merkle_root = region, content_hash, merkle_root
    tx.status = TxStatus.COMMITTED
    return True


def activate(log: TransactionLog, slot: int) -> tuple[bool, int | None]:
    """Only a COMMITTED transaction activates; the active one becomes SUPERSEDED. Returns
    whether it activated and the superseded slot (what the C++ returns, or null)."""
    tx = log.entries[slot]
    if tx.status != TxStatus.COMMITTED:
        return False, None
    old = log.active
    if old is not None:
        log.entries[old].status = TxStatus.SUPERSEDED
    tx.status = TxStatus.ACTIVE
    log.active = slot
    return True, old


def previous(log: TransactionLog) -> int | None:
    """The most recent SUPERSEDED transaction, scanning back from the head over count."""
    for i in range(log.count):
        slot = (log.head - 1 - i) & (log.capacity - 1)
        if log.entries[slot].status == TxStatus.SUPERSEDED:
            return slot
    return None


def rollback(log: TransactionLog) -> bool:
    """The active transaction is ROLLED_BACK and the previous one ACTIVE again."""
    p = previous(log)
    if p is None:
        return False
    if log.active is not None:
        log.entries[log.active].status = TxStatus.ROLLED_BACK
    log.entries[p].status = TxStatus.ACTIVE
    log.active = p
    return True


def at_most_one_active(log: TransactionLog) -> bool:
    """Invariant: one ACTIVE transaction at most, and it is the one active() names."""
    actives = [k for k, tx in enumerate(log.entries) if tx.status == TxStatus.ACTIVE]
    return actives == ([] if log.active is None else [log.active])


erratum(
    E18_9, "begin_tx can overwrite the active transaction once the log wraps",
    seed="crucible@8d2680a2", location="include/crucible/Transaction.h: begin_tx",
    ops=("txlog.simulate",),
    witness={"args": {"capacity": 2, "steps": [
        {"op": "begin", "step": 1}, {"op": "commit", "slot": 0},
        {"op": "activate", "slot": 0}, {"op": "begin", "step": 2},
        {"op": "begin", "step": 3}]},
        "spec": {"active": 0, "active_status": 3}, "seed": {"active": 0, "active_status": 0}},
    flag="result",
    detail="The log says active() stays valid until the ring wraps, but begin_tx resets the "
           "head slot unconditionally: N begins without an activation overwrite the ACTIVE "
           "transaction in place, so active() names a RECORDING entry of another step and "
           "the log holds no ACTIVE transaction. The spec's begin_tx steps past the active "
           "slot.",
)
