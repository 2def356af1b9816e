"""Obligation of the ControlBlock lifecycle (chapter 19): host calls and kernel threads, every
interleaving, keep each message handled once and has_terminated honest (PO19.71).

States at the bounds (2 messages, capacity 2, 3 activate/deactivate calls): 186 states and
313 transitions with one kernel thread, 608 and 1,463 with two."""

from __future__ import annotations

from ...spec.core.errata import NO_ERRATA
from ...spec.core.registry import Mutant
from ...spec.ringkernel import control_block as cb
from ..core.obligation import model_obligation


@model_obligation(
    "PO19.71",
    "The ControlBlock lifecycle (host activate / deactivate / send / terminate against 1 and "
    "2 kernel threads running the message loop; 2 messages, capacity 2): each message is "
    "handled at most once; 0 <= input_head - input_tail <= capacity; messages_processed "
    "counts every completed message; has_terminated is set only once every thread has left "
    "the loop; KernelState agrees with is_active, should_terminate and has_terminated.",
    covers=("ControlBlock", "KernelState"),
    subject=cb.lifecycle_machine,
    mutants=(
        Mutant.edit("host copies the block", "E19.83 always on", cb.host_steps,
                    "if E19_83 in errata:", "if True:"),
        Mutant.edit("thread 0 reports", "E19.84 always on", cb.leave,
                    "i == 0 if E19_84 in errata else last", "i == 0"),
        Mutant.edit("every thread polls", "E19.85 always on", cb.thread_step,
                    "polls = i == 0 or E19_85 in errata", "polls = True"),
        Mutant.edit("uncounted completion", "a completion leaves messages_processed",
                    cb.thread_step, "messages_processed=cb.messages_processed + 1",
                    "messages_processed=cb.messages_processed"),
        Mutant.edit("terminate leaves is_active", "terminate sets should_terminate only",
                    cb.host_change, "should_terminate=1, is_active=0", "should_terminate=1"),
        Mutant.edit("tail kept", "a completion does not advance input_tail", cb.thread_step,
                    "input_tail=cb.input_tail + 1,", ""),
    ),
)
def lifecycle(machine):
    return [machine(NO_ERRATA, threads=1), machine(NO_ERRATA, threads=2)]
