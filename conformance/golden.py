"""The golden values of the real Crucible, as wire cases of our ops.

Each group of the golden file that an op covers becomes (op, args, result) cases with the
provenance "crucible 8d2680a2". Groups whose ops do not exist yet are listed in PENDING.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

GOLDEN_FILE = Path(__file__).parent / "golden" / "crucible-8d2680a2.json"
PROVENANCE = "crucible 8d2680a2"
PROFILE = "crucible@8d2680a2"


@dataclass(frozen=True)
class Case:
    """One request and the answer the real code gives (wire JSON)."""

    op: str
    args: dict
    result: dict
    note: str = ""


@cache
def golden() -> dict:
    return json.loads(GOLDEN_FILE.read_text())


def cases() -> list[Case]:
    """Every golden value an existing op reproduces, in a fixed order."""
    g = golden()
    out: list[Case] = []
    for name, info in g["layout"].items():
        if name != "strong_types":
            out.append(Case("layout.info", {"struct": name},
                            {k: info[k] for k in ("sizeof", "alignof", "offsets")}))
    h = g["hashes"]
    out += [Case("hash.fmix64", {"x": c["in"]}, {"out": c["out"]}) for c in h["fmix64"]]
    out += [Case("hash.wymix", {"a": c["a"], "b": c["b"]}, {"out": c["out"]})
            for c in h["wymix"]]
    out += [Case("hash.kdimmix", {"index": i}, {"out": v}) for i, v in enumerate(h["kDimMix"])]
    for c in h["fnv1a_string (crucible_hash_string)"]:
        out.append(Case("hash.schema", {"name": c["in"]}, {"out": c["out"]}))
        out.append(Case("hash.fnv1a", {"data": c["in"].encode().hex()}, {"out": c["out"]}))
    out.append(Case("hash.schema", {"name": None}, {"out": h["crucible_hash_string(NULL)"]},
                    "crucible_hash_string(NULL)"))
    out += [Case("hash.shape", {"shapes": c["shapes"]}, {"out": c["out"]})
            for c in h["shape_hash (crucible_hash_shapes)"]]
    out += [Case("types.element_size", {"dtype": c["ordinal"]},
                 {"element_size": c["element_size"]}, c["name"])
            for c in g["types"]["scalar_type_element_size"]]
    out += [Case("meta.storage_nbytes", {k: c[k] for k in ("sizes", "strides", "dtype")},
                 {"nbytes": c["nbytes"]}, c["desc"]) for c in g["compute_storage_nbytes"]]
    return out


def raw_images() -> list[tuple[str, str, str]]:
    """(struct, hex, description) of every populated record image."""
    return [(name, rb["hex"], rb["desc"]) for name, rb in golden()["raw_bytes"].items()]
