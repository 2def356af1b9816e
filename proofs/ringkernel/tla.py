"""Chapter 19 obligations: RingKernel's six TLA+ models, each explored exhaustively as a spec
machine with invariants that check something, and each with planted bugs the checker finds.

Distinct states at each model's bounds, next to TLC's published counts (distinct / generated).
"the .tla's variables" is the number of distinct states once the spec's extra history (the
last step, the previous state, crossings, a delivery count) is projected away; where the
bounds are the .cfg's it equals TLC's count, and the transitions + 1 equal TLC's generated
count where the state is the .tla's own (k2k_delivery, tenant_isolation, and hlc's compiled
search, which checks the last step on each step instead of keeping it in the state).

PO19.60 explores hlc at its .cfg by the compiled search (fast/numba/ringkernel/tla.py) over
the .tla's variables: 4,581,712 distinct states, 16,697,237 transitions. The seed's report
rounds these to 4.6M / 16.7M; the exact figures are those of a separate transcription of
hlc.tla that counts as TLC does (one state per valuation of its four variables; generated =
initial states plus every successor computed), which also gives 112,516 / 315,160 at
MaxEvents 3. The spec machine's own states (the last step kept) are counted by the same
search with its history.

| model | bounds | spec machine states / transitions | the .tla's variables | TLC |
|---|---|---|---|---|
| hlc | cfg (MaxEvents 4), compiled | 10,307,138 / 37,884,953 | 4,581,712 | 4.6M / 16.7M |
| hlc | MaxEvents 3, Python | 240,184 / 678,545 | 112,516 | (as TLC counts: 112,516 / 315,160) |
| k2k_delivery | cfg | 241 / 398 | 241 | 241 / 399 |
| migration | cfg | 425 / 853 (E19.63 on: 726 / 1,446) | 725 with E19.63 | 725 / 1,445 |
| multi_gpu_k2k | cfg | 11,271 / 25,546 | 3,452 | 3,452 / 9,571 |
| tenant_isolation | cfg | 12,261 / 26,952 | 12,261 | 12,261 / 26,953 |
| actor_lifecycle | cfg | 7,015 / 17,618 | 2,681 | 2,681 / 7,015 |
"""

from __future__ import annotations

from ...fast.numba.ringkernel.tla import search_hlc
from ...spec.core.errata import NO_ERRATA
from ...spec.core.machine import Machine
from ...spec.core.registry import Mutant
from ...spec.ringkernel.tla import actor_lifecycle as al
from ...spec.ringkernel.tla import delivery as k2k
from ...spec.ringkernel.tla import hlc
from ...spec.ringkernel.tla import migration as mig
from ...spec.ringkernel.tla import multi_gpu_k2k as mg
from ...spec.ringkernel.tla import tenant_isolation as ti
from ..core.model import CompiledMachine, Exploration
from ..core.obligation import model_obligation

TLC_HLC = (4_581_712, 16_697_238)
"""hlc.tla at its .cfg: TLC's distinct states and states generated (the module docstring)."""


def hlc_at_cfg(m: Machine, errata: frozenset[str]) -> CompiledMachine:
    """hlc's machine `m` searched by the compiled search at the .cfg's bound, whose distinct
    states and states generated must be TLC's."""

    def search() -> Exploration:
        found = search_hlc(errata)
        counts = (found.states, found.transitions + 1)
        violation = found.violation
        if violation is None and counts != TLC_HLC:
            violation = (f"{counts[0]:,} distinct / {counts[1]:,} generated states, not TLC's "
                         f"{TLC_HLC[0]:,} / {TLC_HLC[1]:,}")
        return Exploration(found.states, found.transitions, violation, found.trace)

    return CompiledMachine(m.name, m.initial, m.steps, m.invariants, m.done, search,
                           lambda: search_hlc(errata, max_events=2))


@model_obligation(
    "PO19.60",
    "hlc.tla at its .cfg (2 nodes, MaxPhysical 3, MaxEvents 4), every interleaving of "
    "AdvanceWall, Tick and Receive of any emitted event: each received timestamp stays below "
    "the receiver's clock; no step lowers a physical component and the stepping clock "
    "strictly grows; each node's events strictly increase; no clock passes the wall; and the "
    ".tla's variables take TLC's 4,581,712 distinct states (16,697,238 generated).",
    covers=("HlcTimestamp", "HlcClock"),
    subject=hlc.hlc_machine,
    mutants=(
        Mutant.edit("tie ignores the message's logical", "the GPU rule: max(L, msg.l) + 1 "
                    "becomes L + 1", hlc.receive, "max(c[1], ts[1]) + 1", "c[1] + 1"),
        Mutant.edit("message wins keeps local logical", "recv.l + 1 becomes L + 1",
                    hlc.receive, "return (p, ts[1] + 1)", "return (p, c[1] + 1)"),
        Mutant.edit("tick repeats", "a tick on the same physical keeps the logical counter",
                    hlc.tick, "(c[0], c[1] + 1)", "(c[0], c[1])"),
    ),
)
def hlc_causal(machine):
    return [hlc_at_cfg(machine(NO_ERRATA), NO_ERRATA)]


@model_obligation(
    "PO19.61",
    "k2k_delivery.tla over a ring inbox (2 actors, MaxMsgs 4, QueueCap 2): every accepted "
    "message is unread or delivered; per (sender, receiver) nothing is delivered before an "
    "earlier message; no message is delivered twice (counted); head - tail <= QueueCap; "
    "delivered ones were accepted and dropped ones were not.",
    covers=("K2KInboxHeader",),
    subject=k2k.k2k_machine,
    mutants=(
        Mutant.edit("no full check", "the GPU send: a full inbox is overwritten", k2k.send,
                    "q.head - q.tail >= QUEUE_CAP and", "False and"),
        Mutant.edit("full one late", "full only past the capacity", k2k.send,
                    ">= QUEUE_CAP", "> QUEUE_CAP"),
        Mutant.edit("reads the newest", "the receiver reads the slot before head", k2k.take,
                    "q.slots[q.tail % QUEUE_CAP]", "q.slots[(q.head - 1) % QUEUE_CAP]"),
        Mutant.edit("tail kept", "a receive does not advance tail", k2k.take,
                    "q._replace(tail=q.tail + 1)", "q"),
    ),
)
def k2k_delivery(machine):
    return [machine(NO_ERRATA)]


@model_obligation(
    "PO19.62",
    "migration.tla (MaxMsgs 4): each step keeps the phase or moves it one phase on; routing "
    "is at the target exactly when Complete; every accepted message is queued or delivered; "
    "deliveries come in acceptance order; from Swapping on the target restored exactly the "
    "captured state.",
    covers=("MigrationState",),
    subject=mig.migration_machine,
    mutants=(
        Mutant.edit("transfer of the live state", "the v1.0 model: the target gets src_state, "
                    "not the snapshot", mig.transfer, "restored = s.captured",
                    "restored = s.src_state"),
        Mutant.edit("accepts while swapping", "E19.63: staged after the transfer",
                    mig.accept_staged, "phase in (QUIESCED, TRANSFERRING)",
                    "phase in (QUIESCED, TRANSFERRING, SWAPPING)"),
        Mutant.edit("staging buffer not moved", "the target gets the source queue only",
                    mig.transfer, "tgt_queue=s.src_queue + s.staging", "tgt_queue=s.src_queue"),
        Mutant.edit("staging first", "the buffer goes before the source queue", mig.transfer,
                    "s.src_queue + s.staging", "s.staging + s.src_queue"),
        Mutant.edit("capture skips transferring", "CaptureState goes straight to Swapping",
                    mig.migration_steps, "s._replace(phase=TRANSFERRING",
                    "s._replace(phase=SWAPPING"),
    ),
)
def migration(machine):
    return [machine(NO_ERRATA)]


@model_obligation(
    "PO19.63",
    "multi_gpu_k2k.tla (GPUs g1, g2 NVLinked; a1 on g1, a2 and a3 on g2; MaxMsgs 3): every "
    "sent id is in exactly one stage or delivered; per (sender, receiver) nothing is "
    "delivered while an earlier message is in flight; a message crosses at most once between "
    "NVLinked GPUs and at most twice otherwise.",
    covers=("K2KRouteEntry",),
    subject=mg.multi_gpu_machine,
    mutants=(
        Mutant.edit("host path over NVLink", "RouteHost without its no-NVLink guard",
                    mg.route_host, "if has_nvlink(ACTOR_GPU[f], ACTOR_GPU[e.to]):", "if False:"),
        Mutant.edit("send queue not popped", "RouteP2P leaves the message in the send queue",
                    mg.route_p2p, "send_queue=_set(s.send_queue, f, s.send_queue[f][1:])",
                    "send_queue=s.send_queue"),
        Mutant.edit("inbox in front", "a handoff puts the message at the head of the inbox",
                    mg.handoff, "(*s.recv_queue[e.to], e._replace(crossings=e.crossings + 1))",
                    "(e._replace(crossings=e.crossings + 1), *s.recv_queue[e.to])"),
    ),
)
def multi_gpu(machine):
    return [machine()]


@model_obligation(
    "PO19.64",
    "tenant_isolation.tla (2 tenants, 3 kernels, MaxMsgs 3): every delivered message joins "
    "two kernels registered to one tenant; no id is delivered twice; each sent id is "
    "delivered or rejected, exactly one; each inbox holds exactly the ids delivered to it.",
    covers=("K2KBroker",),
    subject=ti.tenant_machine,
    mutants=(
        Mutant.edit("tenants not compared", "only registration is checked", ti.routed,
                    " and tf == tt", ""),
        Mutant.edit("unregistered receiver", "an unregistered receiver counts as in the "
                    "sender's tenant", ti.routed, "UNREGISTERED not in (tf, tt) and tf == tt",
                    "tf != UNREGISTERED and tt in (tf, UNREGISTERED)"),
        Mutant.edit("sender's inbox", "the message lands in the sender's inbox",
                    ti.tenant_steps, "b | {m} if i == t", "b | {m} if i == f"),
    ),
)
def tenant_isolation(machine):
    return [machine()]


@model_obligation(
    "PO19.65",
    "actor_lifecycle.tla (3 actors, a1 the parent of a2 and a3, MaxSteps 8): each step moves "
    "one actor along an edge of the lifecycle diagram; no snapshot goes down; a Terminated "
    "actor never changes; a Restart leaves the live state at the snapshot and an Active live "
    "state is never below it; a Terminated parent has only Terminated children.",
    covers=("ActorLifecycle",),
    subject=al.lifecycle_machine,
    mutants=(
        Mutant.edit("destroy ignores children", "a parent terminates before its children",
                    al.destroy, "a.state != TERMINATED and children_done",
                    "a.state != TERMINATED"),
        Mutant.edit("restart forgets the snapshot", "a restart zeroes the snapshot",
                    al.restart, "live=a.snapshot", "live=0, snapshot=0"),
        Mutant.edit("work after termination", "DoWork is enabled when Terminated", al.do_work,
                    "if a.state == ACTIVE", "if a.state in (ACTIVE, TERMINATED)"),
        Mutant.edit("quiesce from spawning", "a step skips Active", al.quiesce,
                    "if a.state == ACTIVE", "if a.state in (ACTIVE, SPAWNING)"),
    ),
)
def actor_lifecycle(machine):
    return [machine()]
