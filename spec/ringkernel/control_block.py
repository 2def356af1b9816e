"""Chapter 19: the ControlBlock lifecycle of a persistent ring kernel, as a machine over every
interleaving of the host (activate, deactivate, send, terminate) and the kernel's threads
running the generated message loop.

Host (ringkernel-cuda kernel.rs; KernelState from ringkernel-core runtime.rs):
1. activate (Launched or Deactivated -> Active): is_active = 1.
2. deactivate (Active -> Deactivated): is_active = 0.
3. send (Active, the input queue not full): input_head += 1.
4. terminate (Launched, Active or Deactivated -> Terminating): should_terminate = 1 and
   is_active = 0; once has_terminated reads 1, Terminated.
Each is one atomic store to the fields it names (E19.83: RingKernel copies the whole block to
the host, changes the field and copies the whole block back, undoing what the kernel wrote in
between).

Kernel thread (ringkernel-cuda-codegen ring_kernel.rs), looping:
5. should_terminate set: leave the loop (step 8).
6. is_active 0: back to 5.
7. Thread 0 reads input_head and input_tail; when they differ it handles message input_tail,
   then input_tail += 1 and messages_processed += 1; back to 5 (E19.85: every thread of the
   block does this, so each takes the same message and adds its own 1 to input_tail).
8. A thread leaving the loop counts out; the last one out sets has_terminated (E19.84:
   thread 0 sets it as it leaves, whatever the others are doing).

Invariants: each message is handled at most once; 0 <= input_head - input_tail <= capacity;
messages_processed counts every handled message whose completion is done; has_terminated
means every thread has left the loop; the host's KernelState agrees with the flags.
Bounds: 2 messages, capacity 2, 3 activate/deactivate calls, 1 or 2 threads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.machine import Machine

LAUNCHED, ACTIVE, DEACTIVATED, TERMINATING, TERMINATED = (
    "Launched", "Active", "Deactivated", "Terminating", "Terminated")
MESSAGES, CAPACITY, MOVES = 2, 2, 3
TOP, CHECK, POLL, HANDLE, COMPLETE, EXITED = range(6)
PC_NAMES = ("reads should_terminate", "reads is_active", "reads head and tail",
            "handles the message", "completes it")
E19_83, E19_84, E19_85 = "E19.83", "E19.84", "E19.85"
HANDLED_ONCE = "each message is handled at most once"
COUNTED = "messages_processed counts every completed message"
STOPPED = "has_terminated only once every thread has left the loop"


class Control(NamedTuple):
    """The ControlBlock fields the lifecycle touches."""

    is_active: int = 0
    should_terminate: int = 0
    has_terminated: int = 0
    input_head: int = 0
    input_tail: int = 0
    messages_processed: int = 0


class Thread(NamedTuple):
    pc: int = TOP
    message: int = 0
    """The input_tail it read at step 7."""


class Lifecycle(NamedTuple):
    state: str
    cb: Control
    threads: tuple[Thread, ...]
    handled: tuple[int, ...]
    """Times each message was handled."""
    moves: int = 0
    host: tuple[str, Control] | None = None
    """E19.83: the action under way and the copy of the block it read."""


def host_change(action: str, cb: Control) -> Control:
    """Steps 1-4: the fields the host stores."""
    if action == "activate":
        return cb._replace(is_active=1)
    if action == "deactivate":
        return cb._replace(is_active=0)
    if action == "send":
        return cb._replace(input_head=cb.input_head + 1)
    return cb._replace(should_terminate=1, is_active=0)


NEXT_STATE = {"activate": ACTIVE, "deactivate": DEACTIVATED, "terminate": TERMINATING}


def host_actions(s: Lifecycle) -> Iterator[str]:
    """The host calls that are allowed now."""
    if s.state in (LAUNCHED, DEACTIVATED) and s.moves < MOVES:
        yield "activate"
    if s.state == ACTIVE and s.moves < MOVES:
        yield "deactivate"
    if s.state == ACTIVE and s.cb.input_head < MESSAGES and \
            s.cb.input_head - s.cb.input_tail < CAPACITY:
        yield "send"
    if s.state in (LAUNCHED, ACTIVE, DEACTIVATED):
        yield "terminate"


def host_steps(s: Lifecycle, errata: frozenset[str]) -> Iterator[tuple[str, Lifecycle]]:
    """Steps 1-4, atomic (E19.83: a read of the block, then a write of all of it)."""
    if s.host is not None:
        action, copy = s.host
        yield f"host writes back ({action})", s._replace(
            cb=host_change(action, copy), host=None, state=NEXT_STATE.get(action, s.state))
        return
    if s.state == TERMINATING and s.cb.has_terminated:
        yield "host sees has_terminated", s._replace(state=TERMINATED)
    for action in host_actions(s):
        moves = s.moves + (action in ("activate", "deactivate"))
        if E19_83 in errata:
            yield f"host reads ({action})", s._replace(host=(action, s.cb), moves=moves)
        else:
            yield action, s._replace(cb=host_change(action, s.cb), moves=moves,
                                     state=NEXT_STATE.get(action, s.state))


def leave(s: Lifecycle, i: int, errata: frozenset[str]) -> Lifecycle:
    """Step 8."""
    threads = tuple(Thread(EXITED) if j == i else t for j, t in enumerate(s.threads))
    last = all(t.pc == EXITED for t in threads)
    done = i == 0 if E19_84 in errata else last
    return s._replace(threads=threads,
                      cb=s.cb._replace(has_terminated=1) if done else s.cb)


def thread_step(s: Lifecycle, i: int, errata: frozenset[str]) -> Lifecycle | None:
    """Steps 5-8 for thread i: the state after its next atomic step."""
    t, cb = s.threads[i], s.cb

    def at(pc: int, message: int = 0, **fields: int) -> Lifecycle:
        threads = tuple(Thread(pc, message) if j == i else u for j, u in enumerate(s.threads))
        return s._replace(threads=threads, cb=cb._replace(**fields))

    if t.pc == TOP:
        return leave(s, i, errata) if cb.should_terminate else at(CHECK)
    if t.pc == CHECK:
        return at(POLL) if cb.is_active else at(TOP)
    if t.pc == POLL:
        polls = i == 0 or E19_85 in errata
        return at(HANDLE, cb.input_tail) if polls and cb.input_head != cb.input_tail \
            else at(TOP)
    if t.pc == HANDLE:
        handled = tuple(h + (k == t.message) for k, h in enumerate(s.handled))
        return at(COMPLETE, t.message)._replace(handled=handled)
    if t.pc == COMPLETE:
        return at(TOP, input_tail=cb.input_tail + 1,
                  messages_processed=cb.messages_processed + 1)
    return None


def lifecycle_steps(s: Lifecycle, errata: frozenset[str]) -> Iterator[tuple[str, Lifecycle]]:
    yield from host_steps(s, errata)
    for i in range(len(s.threads)):
        nxt = thread_step(s, i, errata)
        if nxt is not None:
            yield f"T{i} {PC_NAMES[s.threads[i].pc]}", nxt


def counted(s: Lifecycle) -> bool:
    """messages_processed = the handled messages less those still completing."""
    completing = sum(t.pc == COMPLETE for t in s.threads)
    return s.cb.messages_processed == sum(s.handled) - completing


def flags_agree(s: Lifecycle) -> bool:
    """KernelState and the flags say the same (while no host write is under way)."""
    cb = s.cb
    if s.host is not None:
        return True
    return {LAUNCHED: not cb.is_active and not cb.should_terminate,
            ACTIVE: cb.is_active and not cb.should_terminate,
            DEACTIVATED: not cb.is_active and not cb.should_terminate,
            TERMINATING: cb.should_terminate and not cb.is_active,
            TERMINATED: cb.should_terminate and cb.has_terminated}[s.state]


def lifecycle_machine(errata: frozenset[str] = NO_ERRATA, threads: int = 2) -> Machine:
    """The host and `threads` kernel threads from Launched with an empty input queue."""
    start = Lifecycle(LAUNCHED, Control(), (Thread(),) * threads, (0,) * MESSAGES)
    return Machine(
        f"ControlBlock lifecycle threads={threads} messages={MESSAGES}", start,
        lambda s: lifecycle_steps(s, errata), (
            (HANDLED_ONCE, lambda s: all(h <= 1 for h in s.handled)),
            ("the input queue holds 0 to capacity messages",
             lambda s: 0 <= s.cb.input_head - s.cb.input_tail <= CAPACITY),
            (COUNTED, counted),
            (STOPPED, lambda s: not s.cb.has_terminated or
             all(t.pc == EXITED for t in s.threads)),
            ("KernelState agrees with the flags", flags_agree)),
        done=lambda s: s.state == TERMINATED and all(t.pc == EXITED for t in s.threads))


def rmw_machine(errata: frozenset[str] = NO_ERRATA) -> Machine:
    """E19.83 alone, one kernel thread."""
    return lifecycle_machine(errata & {E19_83}, threads=1)


def terminated_machine(errata: frozenset[str] = NO_ERRATA) -> Machine:
    """E19.84 alone, two kernel threads."""
    return lifecycle_machine(errata & {E19_84})


def block_machine(errata: frozenset[str] = NO_ERRATA) -> Machine:
    """E19.85 alone, two kernel threads."""
    return lifecycle_machine(errata & {E19_85})


_MACHINES = "ringkernel.control_block"

erratum(
    E19_83, "The host's activate, deactivate, send and terminate rewrite the whole "
            "ControlBlock, undoing the kernel's writes",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-cuda/src/kernel.rs activate, "
                                       "deactivate, terminate, send_envelope",
    ops=(),
    witness={"machine": f"{_MACHINES}.rmw_machine", "invariant": COUNTED},
    flag="model",
    detail="Each host call reads the 128-byte block to the host, sets one field and writes all "
           "128 bytes back. A message the kernel completes in between (input_tail += 1, "
           "messages_processed += 1) is undone: the counter goes back, the tail goes back, and "
           "the kernel handles the message again. The spec's host stores only the fields it "
           "changes, each atomically.",
)

erratum(
    E19_84, "has_terminated is set by thread 0 alone while other threads may still be in the "
            "loop",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-cuda-codegen/src/ring_kernel.rs "
                                       "generate_epilogue",
    ops=(),
    witness={"machine": f"{_MACHINES}.terminated_machine", "invariant": STOPPED},
    flag="model",
    detail="The epilogue is `if (tid == 0) atomicExch(&control->has_terminated, 1)`: thread 0 "
           "reports the kernel terminated as soon as it leaves, and the host (which then "
           "reads the block as final) races with threads still handling a message. The "
           "spec's threads count out and the last one sets the flag.",
)

erratum(
    E19_85, "Every thread of the block handles the same message and advances input_tail",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-cuda-codegen/src/ring_kernel.rs "
                                       "generate_loop_header, generate_message_complete",
    ops=(),
    witness={"machine": f"{_MACHINES}.block_machine", "invariant": HANDLED_ONCE},
    flag="model",
    detail="The loop header and the completion run in every thread: each reads the same "
           "input_tail, handles that message, then adds 1 to input_tail and to "
           "messages_processed. With a block of n threads one message is handled n times and "
           "the tail moves n places, past input_head when fewer than n messages wait. The "
           "spec lets thread 0 take messages; the others only follow the flags.",
)
