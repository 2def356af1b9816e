"""Profiles and errata (design §5).

The spec states intended behaviour. Where a seed implementation departs from it, an erratum
records the divergence; a profile is a set of errata turned on. `crucible` (the default) has
none, `crucible@8d2680a2` has every erratum of Crucible at that commit, and so on per seed.
"""

from __future__ import annotations

from .registry import REGISTRY, Erratum

DEFAULT_PROFILE = "crucible"

SEEDS = {
    "crucible": "crucible@8d2680a2",
    "crucible cost model": "crucible@9cf2c965",
    "pyc": "pyc@fdf1563",
    "ringkernel": "ringkernel@1.1.0",
    "vyre": "vyre@0.6.3",
    "vyre 0.6.5": "vyre@0.6.5",
    "symplex": "symplex@1.0.0",
}

FLAGS = {
    "result": "the seed answers the witness differently (witness: args, spec and seed answers, "
              "each a result object or {\"error\": code}; checked live when it has args)",
    "ub": "the seed has undefined behaviour there; the spec rejects or defines the case",
    "doc": "the seed's code is right and its documentation is not",
    "model": "the seed's protocol breaks an invariant the spec's keeps (witness: the spec module "
             "and function that build the protocol's machine for a set of errata, and the "
             "invariant; the model checker finds the seed's shortest counterexample, checked "
             "live, and none in the spec's)",
}

Errata = frozenset
"""The ids of the errata active in a profile."""

NO_ERRATA: frozenset[str] = frozenset()


def erratum(id: str, title: str, *, seed: str, location: str, ops: tuple[str, ...],
            witness: dict, flag: str, detail: str, also: tuple[dict, ...] = (),
            also_seeds: tuple[str, ...] = ()) -> Erratum:
    """Declare an erratum next to the spec text it amends; `also` holds witnesses
    ({op, args, spec, seed}) for the other ops it reaches, `also_seeds` the later versions of
    the seed (profile names) that still have it."""
    if flag not in FLAGS:
        raise ValueError(f"{id}: unknown flag {flag!r}")
    if any(set(w) != {"op", "args", "spec", "seed"} for w in also):
        raise ValueError(f"{id}: each further witness is {{op, args, spec, seed}}")
    if flag == "model" and set(witness) != {"machine", "invariant"}:
        raise ValueError(f"{id}: a model witness is {{machine, invariant}}")
    if not set(also_seeds) <= set(SEEDS.values()):
        raise ValueError(f"{id}: unknown seed profiles in {also_seeds}")
    e = Erratum(id, title, seed, location, ops, witness, flag, detail, also, also_seeds)
    REGISTRY.add_erratum(e)
    return e


def result_witnesses(e: Erratum) -> list[tuple[str, dict]]:
    """(op, witness) for each runnable witness of a result erratum: its own, then `also`."""
    if e.flag != "result":
        return []
    own = [(e.witness.get("op", e.ops[0]), e.witness)] if "args" in e.witness else []
    return own + [(w["op"], w) for w in e.also]


def profiles() -> dict[str, frozenset[str]]:
    """Every profile offered and the errata it turns on: the default, and each seed's profile
    once its chapters hold an erratum (an empty seed profile would reproduce nothing)."""
    out = {DEFAULT_PROFILE: NO_ERRATA}
    for seed in SEEDS.values():
        errata = frozenset(e.id for e in REGISTRY.errata.values()
                           if seed in (e.seed, *e.also_seeds))
        if errata:
            out[seed] = errata
    return out


def profile_errata(name: str) -> frozenset[str]:
    """The errata of profile `name`; KeyError names the known profiles, or says the seed's
    chapters have not landed."""
    known = profiles()
    if name in known:
        return known[name]
    if name in SEEDS.values():
        raise KeyError(f"profile {name!r} is not offered yet: its seed's chapters hold no "
                       f"erratum; known: {', '.join(sorted(known))}")
    raise KeyError(f"unknown profile {name!r}; known: {', '.join(sorted(known))}")
