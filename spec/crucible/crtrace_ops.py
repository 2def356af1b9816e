"""Ops `crtrace.decode` and `crtrace.encode`: a .crtrace image to its loaded form and back.

Wire form of a loaded trace: num_ops, num_metas, entries (each a TraceRing::Entry image, hex),
meta_starts (integers, none = 4294967295), scope_hashes and callsite_hashes (hex), metas
(TensorMeta field objects as `layout.decode` gives them), names ({"0x<hash>": name}).
encode(decode(f)) == f for every canonical file (168-byte metas, name table sorted by hash,
nothing after it); other valid files come back in canonical form.
"""

from __future__ import annotations

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput, SpecError
from ..core.layout_ops import from_wire, to_wire, values_strategy, wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, HASH64, HEX_INT, U32, Field, Int, Json, List, record
from ..core.strategies import st
from .crtrace import (
    E18_1,
    E18_2,
    E18_3,
    E18_4,
    ONE_INPUT_RECORD,
    LoadedTrace,
    header,
    parse_crtrace,
    write_crtrace,
)
from .tensor_meta import TENSOR_META
from .trace_ring import ENTRY, MAX_SCALARS
from .types import ScalarType

_HEX64 = Int(64, hex=True)
SCALAR_TYPES = list(ScalarType)
ONE_INPUT_ENTRY = ENTRY.pack(ENTRY.default_values() | {"num_inputs": 1}).hex()
"""A ring entry with one input and nothing else."""


def trace_to_wire(t: LoadedTrace) -> dict:
    return {
        "num_ops": len(t.entries), "num_metas": len(t.metas),
        "entries": [ENTRY.pack(e).hex() for e in t.entries],
        "meta_starts": list(t.meta_starts),
        "scope_hashes": [_HEX64.encode(h) for h in t.scope_hashes],
        "callsite_hashes": [_HEX64.encode(h) for h in t.callsite_hashes],
        "metas": [to_wire(TENSOR_META, m) for m in t.metas],
        "names": {_HEX64.encode(h): t.names[h] for h in sorted(t.names)},
    }


def check_counts(args: dict) -> None:
    """num_ops and num_metas must count the entries and metas given."""
    if (args["num_ops"], args["num_metas"]) != (len(args["entries"]), len(args["metas"])):
        raise InvalidInput(f"args.num_ops/num_metas: {args['num_ops']}/{args['num_metas']}, but "
                           f"{len(args['entries'])} entries and {len(args['metas'])} metas are "
                           f"given")


def names_from_wire(obj) -> dict[int, str]:
    """{"0x<hash>": name} as {hash: name}."""
    if not isinstance(obj, dict):
        raise InvalidInput("args.names: expected an object {\"0x<hash>\": name}")
    names = {}
    for key, name in obj.items():
        if not isinstance(name, str):
            raise InvalidInput(f"args.names[{key}]: a name is a string")
        try:
            names[_HEX64.decode(key, f"args.names[{key}]")] = name
        except SpecError:
            raise InvalidInput(f"args.names: key {key!r} is not a 64-bit hex hash") from None
    return names


def trace_from_wire(args: dict) -> LoadedTrace:
    """The loaded trace the encode args describe; malformed parts are invalid_input."""
    check_counts(args)
    entries = []
    for i, image in enumerate(args["entries"]):
        try:
            entries.append(ENTRY.unpack(image))
        except InvalidInput as e:
            raise InvalidInput(f"args.entries[{i}]: {e.message}") from None
    return LoadedTrace(
        entries=entries, meta_starts=args["meta_starts"],
        scope_hashes=args["scope_hashes"], callsite_hashes=args["callsite_hashes"],
        metas=[from_wire(TENSOR_META, m, f"args.metas[{i}]")
               for i, m in enumerate(args["metas"])],
        names=names_from_wire(args["names"]))


def crtrace_decode(hex: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Load a .crtrace image (the real loader's rules, less its errata)."""
    return trace_to_wire(parse_crtrace(hex, errata))


def crtrace_encode(**args) -> dict:
    """The canonical .crtrace image of a loaded trace."""
    return {"hex": write_crtrace(trace_from_wire(args))}


def loadable(m: dict) -> dict:
    """A drawn meta made one a loader accepts: ndim mod 9, the ScalarType its dtype picks,
    used sizes in [0, 2^20) and strides in [-2^20, 2^20) (unused dimensions keep any
    value)."""
    dtype = SCALAR_TYPES[m["dtype"] % len(SCALAR_TYPES)]
    n = m["ndim"] % 9
    sizes = [s % (1 << 20) for s in m["sizes"][:n]] + m["sizes"][n:]
    strides = [s % (1 << 21) - (1 << 20) for s in m["strides"][:n]] + m["strides"][n:]
    return m | {"ndim": n, "dtype": int(dtype), "sizes": sizes, "strides": strides}


def traces() -> st.SearchStrategy:
    """Writable loaded traces: 0-5 ops with 0-3 inputs and outputs, random metas, names."""
    def loaded(e: dict, nin: int, nout: int, nsc: int) -> dict:
        """An entry as a loader makes it: small counts, no scalars past the count."""
        n = min(nsc, MAX_SCALARS)
        return e | {"num_inputs": nin, "num_outputs": nout, "num_scalar_args": nsc,
                    "scalar_values": e["scalar_values"][:n] + [0] * (MAX_SCALARS - n)}

    one = st.tuples(values_strategy(ENTRY), st.integers(0, 3), st.integers(0, 3),
                    st.integers(0, 7)).map(lambda t: loaded(*t))

    @st.composite
    def build(draw):
        entries = draw(st.lists(one, max_size=5))
        starts, cursor = [], 0
        for e in entries:
            n = e["num_inputs"] + e["num_outputs"]
            starts.append(cursor if n else 0xFFFFFFFF)
            cursor += n
        metas = [loadable(draw(values_strategy(TENSOR_META))) for _ in range(cursor)]
        hashes = st.lists(st.integers(0, 2**64 - 1), min_size=len(entries),
                          max_size=len(entries))
        names = draw(st.dictionaries(st.integers(0, 2**64 - 1), st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
            max_size=12), max_size=4))
        return LoadedTrace(entries, starts, draw(hashes), draw(hashes), metas, names)

    return build()


_DECODE_RESULT = record(
    num_ops=U32, num_metas=U32, entries=Json("[Entry image hex]", List(BYTES)),
    meta_starts=Json("[u32]", List(U32)), scope_hashes=Json("[u64 hex]", List(HASH64)),
    callsite_hashes=Json("[u64 hex]", List(HASH64)),
    metas=Json("[TensorMeta fields]", js.array(wire_schema(TENSOR_META, True))),
    names=Json("{hash: name}", js.mapping(js.STRING, "^0x[0-9a-f]{16}$")))

declare(
    "crtrace.decode", chapter=18,
    summary="Load a .crtrace image: ring entries, meta starts, scope/callsite hashes, metas, "
            "names.",
    args=record(hex=Field(BYTES, "the file's bytes")),
    result=_DECODE_RESULT, spec=(parse_crtrace,), errata=(E18_1, E18_2, E18_3, E18_4),
    domain=lambda: traces().map(lambda t: {"hex": write_crtrace(t)}),
    invalid=(
        InvalidCase("a truncated header", lambda: st.just({"hex": "4352545201000000"})),
        InvalidCase("a wrong magic", lambda: st.just({"hex": "58525452" + "01" + "00" * 11})),
        InvalidCase("version 2", lambda: st.just({"hex": "4352545202" + "00" * 11})),
        InvalidCase("2^32-1 ops claimed in 16 bytes",
                    lambda: st.just({"hex": "4352545201000000ffffffff00000000"})),
        InvalidCase("metas cut short",
                    lambda: st.just({"hex": "43525452010000000000000002000000" + "00" * 200})),
        InvalidCase("a meta with nine dimensions", lambda: st.just({"hex": (
            header(1, 1) + bytes.fromhex(ONE_INPUT_RECORD)
            + TENSOR_META.pack(TENSOR_META.default_values() | {"ndim": 9})).hex()})),
    ),
    edges=lambda: [{"hex": write_crtrace(LoadedTrace()).hex()},
                   {"hex": "43525452010000000000000000000000"}],
)

declare(
    "crtrace.encode", chapter=18,
    summary="The canonical .crtrace image of a loaded trace (the inverse of crtrace.decode).",
    args=record(
        num_ops=Field(U32), num_metas=Field(U32),
        entries=Field(List(BYTES), "TraceRing::Entry images"),
        meta_starts=Field(List(U32), "running meta cursor, none for an op without tensors"),
        scope_hashes=Field(List(HASH64)), callsite_hashes=Field(List(HASH64)),
        metas=Field(Json("[TensorMeta fields]", js.array(wire_schema(TENSOR_META)))),
        names=Field(Json("{hash: name}", js.mapping(js.STRING, HEX_INT)), default={})),
    result=record(hex=BYTES), spec=(write_crtrace,),
    domain=lambda: traces().map(lambda t: _encode_args(trace_to_wire(t))),
    invalid=(
        InvalidCase("meta starts a file cannot express", lambda: st.just({
            "num_ops": 1, "num_metas": 0, "entries": ["00" * 64], "meta_starts": [3],
            "scope_hashes": ["0x0"], "callsite_hashes": ["0x0"], "metas": []})),
        InvalidCase("an entry image of the wrong size", lambda: st.just({
            "num_ops": 1, "num_metas": 0, "entries": ["00" * 63],
            "meta_starts": [4294967295], "scope_hashes": ["0x0"], "callsite_hashes": ["0x0"],
            "metas": []})),
        InvalidCase("a meta with nine dimensions", lambda: st.just({
            "num_ops": 1, "num_metas": 1, "entries": [ONE_INPUT_ENTRY],
            "meta_starts": [0], "scope_hashes": ["0x0"], "callsite_hashes": ["0x0"],
            "metas": [{"ndim": 9}]})),
        InvalidCase("a name with a NUL", lambda: st.just({
            "num_ops": 0, "num_metas": 0, "entries": [], "meta_starts": [],
            "scope_hashes": [], "callsite_hashes": [], "metas": [], "names": {"0x1": "a\0b"}})),
    ),
)


def _encode_args(wire: dict) -> dict:
    """Encode args (Python values) from a decode result (wire form)."""
    return wire | {"entries": [bytes.fromhex(e) for e in wire["entries"]],
                   "scope_hashes": [int(h, 16) for h in wire["scope_hashes"]],
                   "callsite_hashes": [int(h, 16) for h in wire["callsite_hashes"]]}
