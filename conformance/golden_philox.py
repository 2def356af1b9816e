"""Golden cases of the Philox group (chapter 17): blocks, the 64-bit form with the float
conversions and Box-Muller of its words, to_uniform, Box-Muller and the per-op keys. They
hold under the profile crucible@8d2680a2 (to_uniform's x = 0xfffffffe gives 1.0 there)."""

from __future__ import annotations

from .golden_case import Case


def _group(g: dict, prefix: str) -> list[dict]:
    """The philox group whose name starts with `prefix` (names carry notes in parentheses)."""
    return next(v for k, v in g["philox"].items() if k.startswith(prefix))


def _field(case: dict, prefix: str):
    return next(v for k, v in case.items() if k.startswith(prefix))


def cases(g: dict) -> list[Case]:
    """The golden file's values for these ops, as wire cases."""
    out = [Case("philox.block", {"ctr": c["ctr"], "key": c["key"]}, {"out": c["out"]})
           for c in _group(g, "generate_ctr_key")]
    for c in _group(g, "generate_offset_key"):
        out.append(Case("philox.offset", {"offset": c["offset"], "key": c["key"]},
                        {"out": c["out"]}))
        out += [Case("philox.to_uniform", {"x": x}, {"f32_bits": f, "f64_bits": d},
                     "a word of generate(offset, key)")
                for x, f, d in zip(c["out"], c["to_uniform_f32_bits"], c["to_uniform_d_bits"],
                                   strict=True)]
        n0, n1 = _field(c, "box_muller_r0r1_f32_bits")
        out.append(Case("philox.box_muller", {"a": c["out"][0], "b": c["out"][1]},
                        {"n0_bits": n0, "n1_bits": n1}, "libm-dependent (glibc)"))
    out += [Case("philox.to_uniform", {"x": c["x"]},
                 {"f32_bits": c["f32_bits"], "f64_bits": c["f64_bits"]})
            for c in _group(g, "to_uniform")]
    out += [Case("philox.box_muller", {"a": c["u1"], "b": c["u2"]},
                 {"n0_bits": c["n0_bits"], "n1_bits": c["n1_bits"]}, "libm-dependent (glibc)")
            for c in _group(g, "box_muller")]
    out += [Case("philox.op_key", {k: c[k] for k in ("master_counter", "op_index",
                                                     "content_hash")}, {"out": c["out"]})
            for c in g["hashes"]["philox_op_key"]]
    return out
