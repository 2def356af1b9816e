"""Chapter 19: RingKernel's migration.tla (an actor moving from a source GPU to a target GPU)
as an explicit-state machine, with its invariants stated over messages, not id sets.

1. Phases Running -> Quiesced -> Transferring -> Swapping -> Complete, one step each.
2. While Running (routing at the source) a message is appended to the source queue; once
   quiesced, to the staging buffer (the spec: until the transfer; the .tla also while
   Swapping, E19.63); once Complete, to the target queue.
3. CaptureState freezes the source's state; Transfer restores it on the target, whose queue
   becomes the source queue followed by the staging buffer, and the target's checksum is taken
   over what it restored; SwapRouting (checksums equal) flips routing to the target.
4. Finalize, once Complete, folds late ids into the target's state and clears the source and
   the staging buffer; the target delivers from the head of its queue.
5. Invariants: each step keeps the phase or moves it along one edge of step 1 (PhaseLegal,
   over the last transition); routing is at the target exactly when Complete; every accepted
   message is queued (source, staging or target) or delivered (NoMessageLoss); deliveries
   come in acceptance order (FIFOPreserved); from Swapping on, the target restored exactly
   the captured state (ChecksumMatch, with the state itself as the checksum).

Bounds: the .cfg's MAX_MSGS 4. The .tla's checksum is the cardinality of the set, and its
target checksum is taken over the captured state, not over what the target restored.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import NamedTuple

from ...core.errata import NO_ERRATA, SEEDS, erratum
from ...core.machine import Machine

MAX_MSGS = 4
PHASES = ("Running", "Quiesced", "Transferring", "Swapping", "Complete")
RUNNING, QUIESCED, TRANSFERRING, SWAPPING, COMPLETE = range(5)
LEGAL = frozenset({(p, p) for p in range(5)} | {(p, p + 1) for p in range(4)})
"""PhaseLegal as a relation: stay, or move to the next phase."""


class MigrationModel(NamedTuple):
    phase: int
    src_queue: tuple[int, ...]
    tgt_queue: tuple[int, ...]
    src_state: frozenset[int]
    tgt_state: frozenset[int]
    captured: frozenset[int]
    staging: tuple[int, ...]
    at_target: bool
    next_msg: int
    delivered: tuple[int, ...]
    checksum_src: frozenset[int]
    checksum_tgt: frozenset[int]
    previous_phase: int


LATE_ACCEPT = "E19.63"

erratum(
    LATE_ACCEPT, "migration.tla accepts messages while Swapping into a staging buffer that "
                 "Finalize discards; its NoMessageLoss counts ids, not messages",
    seed=SEEDS["ringkernel"],
    location="docs/verification/migration.tla AcceptDuringQuiesce, Finalize, NoMessageLoss",
    ops=(),
    witness={"machine": "ringkernel.tla.migration.migration_machine", "invariant": "NoMessageLoss"},
    flag="model",
    detail="AcceptDuringQuiesce is enabled in Quiesced, Transferring and Swapping, but Transfer "
           "(Transferring -> Swapping) has already copied the staging buffer to the target. A "
           "message accepted while Swapping stays in the buffer, and Finalize empties the "
           "buffer and only adds its id to tgt_state: it is never delivered. NoMessageLoss "
           "passes because it asks whether the id is in src_state, tgt_state or delivered. "
           "The spec stops accepting once the transfer is taken (senders wait for the swap).",
)


erratum(
    "E19.67", "actor_lifecycle.tla's StateTransitionsLegal and migration.tla's PhaseLegal are "
              "type membership, not a transition relation",
    seed=SEEDS["ringkernel"],
    location="docs/verification/actor_lifecycle.tla StateTransitionsLegal; "
             "docs/verification/migration.tla PhaseLegal",
    ops=(),
    witness={"documents": "state transitions follow the diagrammed edges only; the phase "
                          "machine never skips forward",
             "checks": "state[a] \\in ActorState; phase \\in Phases"},
    flag="doc",
    detail="Both comments admit the check is vacuous. The spec keeps the previous state and "
           "checks each step against the diagram's edges; a planted step that skips a phase "
           "is found (PO19.62, PO19.65).",
)

erratum(
    "E19.71", "migration.tla's checksum is the cardinality of the state, and the target's is "
              "taken over the captured state rather than over what the target restored",
    seed=SEEDS["ringkernel"],
    location="docs/verification/migration.tla Checksum, Transfer, ChecksumMatch",
    ops=(),
    witness={"documents": "the state captured on the source equals the state restored on the "
                          "target",
             "checks": "Cardinality(captured_state) = Cardinality(captured_state)"},
    flag="doc",
    detail="Transfer sets checksum_tgt from captured_state, the same value checksum_src came "
           "from, so ChecksumMatch holds whatever the target restored; and two different sets "
           "of one size would match anyway. The spec's checksum is the restored state itself, "
           "so a transfer of the live state instead of the snapshot is found (PO19.62).",
)


def accept_staged(phase: int, errata: frozenset[str] = NO_ERRATA) -> bool:
    """Whether a message is staged in `phase`: quiesced and before the transfer."""
    return phase in (QUIESCED, TRANSFERRING) or (phase == SWAPPING and LATE_ACCEPT in errata)


def transfer(s: MigrationModel) -> MigrationModel:
    """Restore the captured state on the target; its queue is the source's, then the staging."""
    restored = s.captured
    return s._replace(tgt_state=restored, tgt_queue=s.src_queue + s.staging,
                      checksum_tgt=restored, phase=SWAPPING)


def finalize(s: MigrationModel) -> MigrationModel:
    """Fold late ids into the target's state; the source and the staging buffer go."""
    return s._replace(tgt_state=s.tgt_state | (s.src_state - s.captured), src_queue=(),
                      src_state=frozenset(), staging=())


def migration_steps(s: MigrationModel, errata: frozenset[str]
                    ) -> Iterator[tuple[str, MigrationModel]]:
    """The .tla's nine actions; each records the phase it left."""
    s = s._replace(previous_phase=s.phase)
    m = s.next_msg
    if m <= MAX_MSGS:
        if s.phase == RUNNING and not s.at_target:
            yield "AcceptOnSrc", s._replace(src_queue=(*s.src_queue, m),
                                            src_state=s.src_state | {m}, next_msg=m + 1)
        if s.phase == COMPLETE and s.at_target:
            yield "AcceptOnTgt", s._replace(tgt_queue=(*s.tgt_queue, m),
                                            tgt_state=s.tgt_state | {m}, next_msg=m + 1)
        if accept_staged(s.phase, errata):
            yield "AcceptDuringQuiesce", s._replace(staging=(*s.staging, m),
                                                    src_state=s.src_state | {m}, next_msg=m + 1)
    if s.phase == RUNNING:
        yield "BeginQuiesce", s._replace(phase=QUIESCED)
    if s.phase == QUIESCED:
        yield "CaptureState", s._replace(phase=TRANSFERRING, captured=s.src_state,
                                         checksum_src=s.src_state)
    if s.phase == TRANSFERRING:
        yield "Transfer", transfer(s)
    if s.phase == SWAPPING and s.checksum_src == s.checksum_tgt:
        yield "SwapRouting", s._replace(at_target=True, phase=COMPLETE)
    if s.phase == COMPLETE:
        yield "Finalize", finalize(s)
        if s.tgt_queue:
            yield "DeliverOnTgt", s._replace(delivered=(*s.delivered, s.tgt_queue[0]),
                                             tgt_queue=s.tgt_queue[1:])


def no_message_loss(s: MigrationModel) -> bool:
    """Every accepted message is still queued somewhere or delivered."""
    held = set(s.src_queue) | set(s.staging) | set(s.tgt_queue) | set(s.delivered)
    return all(m in held for m in range(1, s.next_msg))


def fifo_preserved(s: MigrationModel) -> bool:
    """Deliveries in acceptance order, and the target queue in order from Swapping on."""
    ordered = all(a < b for a, b in pairwise(s.delivered))
    queue = all(a < b for a, b in pairwise(s.tgt_queue))
    first = not s.delivered or not s.tgt_queue or s.delivered[-1] < s.tgt_queue[0]
    return ordered and (s.phase < SWAPPING or (queue and first))


def migration_machine(errata: frozenset[str] = NO_ERRATA) -> Machine:
    """migration.tla at MAX_MSGS 4."""
    empty: frozenset[int] = frozenset()
    init = MigrationModel(RUNNING, (), (), empty, empty, empty, (), False, 1, (), empty, empty,
                          RUNNING)
    return Machine(
        f"migration.tla max_msgs={MAX_MSGS}", init, lambda s: migration_steps(s, errata), (
            ("NoMessageLoss", no_message_loss),
            ("PhaseLegal", lambda s: (s.previous_phase, s.phase) in LEGAL),
            ("AtomicSwap", lambda s: s.at_target == (s.phase == COMPLETE)),
            ("FIFOPreserved", fifo_preserved),
            ("ChecksumMatch", lambda s: s.phase < SWAPPING or (
                s.checksum_src == s.checksum_tgt == s.captured))),
        done=lambda s: s.phase == COMPLETE)


def tla_view(s: MigrationModel) -> tuple:
    """The .tla's variables, its checksums being cardinalities and delivered a set."""
    return (s.phase, s.src_queue, s.tgt_queue, s.src_state, s.tgt_state, s.captured,
            s.staging, s.at_target, s.next_msg, frozenset(s.delivered), len(s.checksum_src),
            len(s.checksum_tgt))
