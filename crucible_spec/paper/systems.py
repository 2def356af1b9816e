"""The five systems the paper has a part for, and the one rule that says which system a spec
module belongs to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class System:
    """A seed system: its key (the part's folder), its name and what it is."""

    key: str
    name: str
    about: str


SYSTEMS: tuple[System, ...] = (
    System("crucible", "Crucible", "the C++ runtime that records a model's ops, detects its "
           "iterations, plans its memory and replays it: chapters numbered as Crucible's own "
           "documents number them"),
    System("pyc", "PyC", "a C11 compiler engine: an IR, a fixed pass pipeline, a memory "
           "planner, a scored kernel registry, a content-addressed compile cache and "
           "reason-coded dispatch"),
    System("symplex", "SympleX", "a tensor superoptimizer: a tensor-expression language, "
           "e-graph rewriting, polyhedral guardrails and a roofline tile search"),
    System("ringkernel", "RingKernel", "a GPU-native persistent actor framework: hybrid "
           "logical clocks, SPSC queues, kernel-to-kernel messaging, checkpoints and TLA+ "
           "specifications"),
    System("vyre", "vyre", "a self-substrate for tensor-train chain fusion: 16.16 fixed-point "
           "lanes, the contraction step and the fusion pressure"),
)

_KEYS = {s.key for s in SYSTEMS}
def system_of(module: str) -> str:
    """The key of the system a spec module (`ringkernel.hlc.clock`) belongs to: the system package
    it lives in; the shared core counts as Crucible's."""
    head = module.split(".")[0]
    return head if head in _KEYS else "crucible"


def system(key: str) -> System:
    return next(s for s in SYSTEMS if s.key == key)
