"""Chapter 19: RingKernel's six TLA+ models as spec machines. Once the spec's history is
projected away, each model at its .cfg's bounds has TLC's published distinct count (facts
§3.6); the spec's machines break nothing; each model erratum's seed machine breaks its
invariant along the hand-derived shortest trace, while the .tla's weak invariant does not
notice. hlc's compiled search finds the Python search's states, and TLC's counts at the .cfg."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
import pytest

from crucible_spec import load_all
from crucible_spec.fast.numba.ringkernel.tla import INVARIANTS, HlcLayout, Search, search_hlc
from crucible_spec.proofs.core import patch
from crucible_spec.proofs.core.model import explore
from crucible_spec.proofs.ringkernel import tla as proofs_tla
from crucible_spec.spec.core.errata import NO_ERRATA, profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.ringkernel.tla import actor_lifecycle as al
from crucible_spec.spec.ringkernel.tla import delivery as k2k
from crucible_spec.spec.ringkernel.tla import hlc
from crucible_spec.spec.ringkernel.tla import migration as mig
from crucible_spec.spec.ringkernel.tla import multi_gpu_k2k as mg
from crucible_spec.spec.ringkernel.tla import tenant_isolation as ti
from crucible_spec.witness import check

load_all()
SEED = profile_errata("ringkernel@1.1.0")


def reachable(m) -> tuple[set, int]:
    """Every reachable state of m and the transitions taken, invariants not checked."""
    seen, queue, transitions = {m.initial}, [m.initial], 0
    for s in queue:
        for _, t in m.steps(s):
            transitions += 1
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return seen, transitions


TLC = [  # (model, module, machine, TLC distinct, TLC generated where the state is the .tla's)
    ("k2k_delivery", k2k, lambda: k2k.k2k_machine(NO_ERRATA), 241, 399),
    ("migration", mig, lambda: mig.migration_machine(frozenset({mig.LATE_ACCEPT})), 725, None),
    ("multi_gpu_k2k", mg, mg.multi_gpu_machine, 3452, None),
    ("tenant_isolation", ti, ti.tenant_machine, 12261, 26953),
    ("actor_lifecycle", al, al.lifecycle_machine, 2681, None),
]


@pytest.mark.parametrize("name, module, build, distinct, generated", TLC,
                         ids=[row[0] for row in TLC])
def test_the_tla_variables_have_tlcs_distinct_count(name, module, build, distinct, generated):
    """migration.tla is the spec's machine with E19.63 on (accepting while Swapping)."""
    states, transitions = reachable(build())
    assert len({module.tla_view(s) for s in states}) == distinct, name
    if generated is not None:
        assert transitions + 1 == generated


MACHINES = [lambda: hlc.hlc_machine(NO_ERRATA, 3), lambda: k2k.k2k_machine(NO_ERRATA),
            lambda: mig.migration_machine(NO_ERRATA), mg.multi_gpu_machine,
            ti.tenant_machine, al.lifecycle_machine]


def test_the_spec_machines_break_nothing_within_the_time():
    start = time.perf_counter()
    found = [explore(build()) for build in MACHINES]
    assert [f.violation for f in found] == [None] * 6
    assert all(f.states > 200 for f in found)
    assert time.perf_counter() - start < 90


@pytest.mark.parametrize("eid, invariant, trace", [
    ("E19.63", "NoMessageLoss", ["BeginQuiesce", "CaptureState", "Transfer",
                                 "AcceptDuringQuiesce", "SwapRouting", "Finalize"]),
])
def test_each_model_erratum_has_its_shortest_counterexample(eid, invariant, trace):
    e = REGISTRY.errata[eid]
    assert e.witness["invariant"] == invariant
    assert check(e) == "reproduced: " + " -> ".join(trace)


def _all_states_satisfy(m, predicate) -> bool:
    states, _ = reachable(replace(m, invariants=()))
    return all(predicate(s) for s in states)


def test_the_tla_weak_invariants_do_not_notice_the_seed_bugs():
    """hlc.tla's PhysicalTimeMonotonic (a bound) holds under the GPU receive rule; migration's
    id-set NoMessageLoss and cardinality ChecksumMatch hold while messages are lost."""
    assert _all_states_satisfy(hlc.hlc_machine(SEED, 3), lambda s: all(
        c[0] <= hlc.MAX_PHYSICAL for c in s.clocks))
    assert _all_states_satisfy(mig.migration_machine(SEED), lambda s: all(
        m in s.src_state | s.tgt_state | set(s.delivered) for m in range(1, s.next_msg))
        and (s.phase < mig.SWAPPING or len(s.checksum_src) == len(s.checksum_tgt)))


def test_host_and_gpu_receive_on_the_facts_example():
    """Local (5,0), message (5,7): the host rule gives (5,8), the GPU loop (5,1)."""
    assert hlc.receive((5, 0), (5, 7), 5) == (5, 8)
    assert hlc.receive((5, 0), (5, 7), 5, frozenset({hlc.GPU_RECEIVE})) == (5, 1)
    assert hlc.receive((5, 0), (5, 7), 9) == (9, 0)
    assert hlc.receive((6, 2), (5, 7), 5) == (6, 3)
    assert hlc.tick((3, 4), 3) == (3, 5) and hlc.tick((3, 4), 4) == (4, 0)


def test_the_gpu_inbox_overwrites_and_the_spec_inbox_drops():
    full = k2k.Inbox(2, 0, ((0, 1), (0, 2)))
    assert k2k.send(full, (0, 3)) is None
    over = k2k.send(full, (0, 3), frozenset({k2k.NO_FULL_CHECK}))
    assert over == k2k.Inbox(3, 0, ((0, 3), (0, 2)))


def test_the_errata_are_declared_for_the_seed():
    ids = {f"E19.{n}" for n in range(63, 72)}
    assert ids <= set(REGISTRY.errata) and ids <= SEED
    assert {REGISTRY.errata[i].flag for i in ids} == {"model", "doc"}


# The compiled search (fast/numba/ringkernel/tla.py) against the Python one, the reference.

AS_TLC_COUNTS = {2: (2_744, 5_458), 3: (112_516, 315_160), 4: (4_581_712, 16_697_238)}
"""hlc.tla's distinct states and states generated, counted as TLC does by a separate C
transcription of the .tla (one state per valuation of clocks, wall, events, received;
generated = the initial state plus every successor computed). The seed's TLC report gives
~4.6M / ~16.7M at the .cfg (MaxEvents 4)."""


@pytest.mark.parametrize("max_events", [2, pytest.param(3, marks=pytest.mark.slow(seconds=15))])
def test_the_compiled_search_reaches_the_python_searchs_states(max_events):
    """With the last step kept, the spec machine's states (each one at MaxEvents 2) and
    transitions; without it, the same states projected to the .tla's variables (each one),
    and TLC's counts."""
    states, transitions = reachable(hlc.hlc_machine(NO_ERRATA, max_events))
    kept = search_hlc(NO_ERRATA, max_events, history=True)
    assert (kept.states, kept.transitions, kept.violation) == (len(states), transitions, None)
    if max_events == 2:
        layout = HlcLayout(hlc.NODES, hlc.MAX_PHYSICAL, max_events, True)
        assert {layout.unpack(int(k)) for k in kept.keys} == states
    view = search_hlc(NO_ERRATA, max_events)
    layout = HlcLayout(hlc.NODES, hlc.MAX_PHYSICAL, max_events, False)
    assert {hlc.tla_view(layout.unpack(int(k))) for k in view.keys} == \
        {hlc.tla_view(s) for s in states}
    assert (view.states, view.transitions + 1) == AS_TLC_COUNTS[max_events]


@pytest.mark.slow(seconds=8)
def test_at_the_cfg_the_tla_variables_have_tlcs_counts():
    found = search_hlc()
    assert found.violation is None
    assert (found.states, found.transitions + 1) == AS_TLC_COUNTS[4]
    assert (round(found.states / 1e6, 1), round((found.transitions + 1) / 1e6, 1)) == (4.6, 16.7)


def test_the_compiled_search_names_the_machines_invariants_in_their_order():
    assert tuple(name for name, _ in hlc.hlc_machine().invariants) == INVARIANTS


def _planted():
    po = REGISTRY.obligations["PO19.60"]
    return [(m.name, lambda m=m: patch.edited(m.target, m.old, m.new, m.occurrence), NO_ERRATA)
            for m in po.mutants] + [("E19.1", contextlib.nullcontext,
                                     frozenset({hlc.GPU_RECEIVE}))]


@pytest.mark.parametrize("name, planted, errata", _planted(), ids=[p[0] for p in _planted()])
def test_a_planted_bug_or_erratum_breaks_the_same_invariant_on_the_same_steps(
        name, planted, errata):
    """The compiled search is built from the spec's own tick and receive: an edit planted in
    either is what it explores."""
    with planted():
        python = explore(hlc.hlc_machine(errata, 3))
        compiled = [search_hlc(errata, 3, history=True), search_hlc(errata, 4)]
    assert python.violation is not None
    assert [(c.violation, c.trace) for c in compiled] == [(python.violation, python.trace)] * 2


def test_po19_60_fails_when_the_counts_are_not_tlcs(monkeypatch):
    fake = Search(4_581_711, 16_697_237, None, None, np.zeros(0, np.uint64))
    monkeypatch.setattr(proofs_tla, "search_hlc", lambda errata: fake)
    found = explore(proofs_tla.hlc_at_cfg(hlc.hlc_machine(), NO_ERRATA))
    assert found.violation == ("4,581,711 distinct / 16,697,238 generated states, not TLC's "
                               "4,581,712 / 16,697,238")


@pytest.mark.slow(seconds=12)
def test_warm_compiles_the_search_into_the_cache(tmp_path):
    script = ("from crucible_spec.proofs.ringkernel import tla\n"
              "from crucible_spec.commands import warm\n"
              "print([(po, error) for po, _, error in warm.warm_searches()])\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, check=True, env=env).stdout
    assert out.strip() == "[('PO19.60', '')]"
    assert {p.name.split(".")[1].rsplit("-", 1)[0] for p in tmp_path.rglob("tla.*.nbi")} >= {
        "hlc_search",
        "rehash"}
