"""The ControlBlock lifecycle machine: the spec's protocol explored at 1 and 2 kernel threads,
each RingKernel erratum's shortest counterexample, and single steps checked by hand against
the host code (ringkernel-cuda kernel.rs) and the generated loop (ring_kernel.rs, whose
generate_kernel_wrapper was compiled with rustc and run: every thread runs the loop, and
`if (tid == 0)` sets has_terminated)."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.proofs.core.model import explore
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.ringkernel import control_block as cb
from crucible_spec.witness import check

load_all()


@pytest.mark.parametrize("threads,states,transitions", [(1, 186, 313), (2, 608, 1463)])
def test_the_spec_protocol_holds_everywhere(threads, states, transitions):
    e = explore(cb.lifecycle_machine(threads=threads))
    assert (e.violation, e.states, e.transitions) == (None, states, transitions)


def test_host_copies_undo_a_completion():
    e = explore(cb.rmw_machine(frozenset({cb.E19_83})))
    assert e.violation == cb.COUNTED
    assert e.trace[-1] == "host writes back (deactivate)" and "T0 completes it" in e.trace


def test_thread_0_reports_termination_while_thread_1_runs():
    e = explore(cb.terminated_machine(frozenset({cb.E19_84})))
    assert (e.violation, e.trace) == (cb.STOPPED, ["terminate", "T0 reads should_terminate"])


def test_two_threads_handle_one_message():
    e = explore(cb.block_machine(frozenset({cb.E19_85})))
    assert e.violation == cb.HANDLED_ONCE
    assert e.trace[-2:] == ["T1 reads head and tail", "T1 handles the message"]


def test_two_threads_that_both_complete_pass_input_head():
    """E19.85 alone, continued: one message sent, both threads complete it: tail = head + 1."""
    s = cb.Lifecycle(cb.ACTIVE, cb.Control(is_active=1, input_head=1),
                     (cb.Thread(cb.COMPLETE, 0),) * 2, (2, 0))
    for i in (0, 1):
        s = cb.thread_step(s, i, frozenset({cb.E19_85}))
    assert (s.cb.input_head, s.cb.input_tail, s.cb.messages_processed) == (1, 2, 2)


def test_the_last_thread_out_sets_has_terminated():
    s = cb.Lifecycle(cb.TERMINATING, cb.Control(should_terminate=1), (cb.Thread(),) * 2,
                     (0, 0))
    first = cb.thread_step(s, 0, frozenset())
    assert first.cb.has_terminated == 0 and first.threads[0].pc == cb.EXITED
    assert cb.thread_step(first, 1, frozenset()).cb.has_terminated == 1


def test_host_calls_follow_kernel_state():
    """Deactivate only from Active; terminate from Launched, Active or Deactivated."""
    base = cb.Lifecycle(cb.LAUNCHED, cb.Control(), (cb.Thread(),), (0, 0))
    assert list(cb.host_actions(base)) == ["activate", "terminate"]
    active = base._replace(state=cb.ACTIVE, cb=cb.Control(is_active=1))
    assert list(cb.host_actions(active)) == ["deactivate", "send", "terminate"]
    assert list(cb.host_actions(base._replace(state=cb.TERMINATING))) == []


@pytest.mark.parametrize("eid", ["E19.83", "E19.84", "E19.85"])
def test_every_erratum_reproduces(eid):
    assert check(REGISTRY.errata[eid]).startswith("reproduced")
