"""DetSafe (chapter 11) as a property: generated programs, recorded, compiled and replayed twice in
a pool of arbitrary bytes, give every op's output bytes exactly as recorded, under the spec and
under the seed's profile. The mutants are bugs of the pieces replay composes: a slot's life not
extended by a read, a split free block not shrunk, a pass that restarts without re-arming its
guard."""

from __future__ import annotations

from hypothesis import strategies as st

from ...spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from ...spec.core.registry import Mutant
from ...spec.crucible import build_trace, memory_plan, replay_engine
from ...spec.crucible.detsafe import ARITY, KERNELS, Program, ProgramOp, det_safe
from ..core.obligation import Property, property_obligation

SEED = profile_errata(SEEDS["crucible"])


@st.composite
def programs(draw, max_inputs: int = 3, max_ops: int = 14) -> tuple:
    """A program over [s, s] float32 tensors (any bit patterns), the pool's first bytes and a
    profile."""
    size = draw(st.integers(1, 4))
    raw = st.binary(min_size=4 * size * size, max_size=4 * size * size)
    inputs = tuple(draw(st.lists(raw, min_size=1, max_size=max_inputs)))
    ops = []
    for i in range(draw(st.integers(1, max_ops))):
        kernel = draw(st.sampled_from(sorted(KERNELS)))
        live = st.integers(0, len(inputs) + i - 1)
        ops.append(ProgramOp(kernel, tuple(draw(live) for _ in range(ARITY.get(kernel, 1)))))
    garbage = draw(st.binary(min_size=1, max_size=12))
    return Program(size, inputs, tuple(ops)), garbage, draw(st.sampled_from([NO_ERRATA, SEED]))


def _check(case: tuple) -> None:
    program, garbage, errata = case
    assert det_safe(program, garbage, errata)


@property_obligation(
    "PO11.190",
    "DetSafe: a recorded program of up to 14 kernel calls over float32 [s, s] tensors (s <= 4, "
    "any bits), built into its trace graph, planned, and replayed twice through CrucibleContext "
    "in one pool that starts with arbitrary bytes, matches every op in both passes and gives "
    "each op's output bytes exactly as the eager recording did (the spec and the seed's "
    "profile).",
    covers=("trace.build", "plan.compute", "context.simulate"),
    subject=memory_plan.sweep,
    mutants=(
        Mutant.edit("a read does not extend the slot", "a slot dies at its last write, so a "
                    "later reader finds its bytes reused", build_trace.build_trace,
                    "extend(e.slot, i)\n", "pass\n"),
        Mutant.edit("split block not shrunk", "lowest fit hands out the front of a larger free "
                    "block and leaves the block whole", memory_plan._lowest_fit,
                    "entry[0] += size\n", "pass\n"),
        Mutant.edit("reset without re-arming", "a completed pass goes back to op 0 but keeps the "
                    "last op's guard as the expected one", replay_engine.reset,
                    "    e.cursor = 0\n    prime(e)", "    e.cursor = 0"),
    ),
)
def det_safe_replay(_subject):
    return [Property("a program, the pool's bytes and a profile", _check, strategy=programs,
                     examples=300)]
