"""Wire types: one declaration gives an op argument its JSON encoding, its Python value, its
hypothesis strategy and the numpy column a fast kernel receives (design §2, §4).

JSON conventions (§4): hashes, keys, pointers and bit patterns are "0x"-prefixed lowercase hex
(any width accepted on input); counts, sizes, offsets, ordinals are JSON integers; byte strings
are lowercase hex; booleans are JSON booleans. Structural mistakes are `bad_request`; values the
spec rejects (out of range, unknown ordinal) are `invalid_input`.
"""

from __future__ import annotations

import enum
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .bits import to_signed, to_unsigned
from .errors import BadRequest, InvalidInput
from .strategies import st

MISSING: Any = object()


@dataclass(frozen=True)
class Ragged:
    """A column of variable-length items: item i is values[offsets[i]:offsets[i + 1]]."""

    values: Any
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1


class Type:
    """Base of all wire types."""

    def decode(self, value: Any, path: str) -> Any:
        raise NotImplementedError

    def encode(self, value: Any) -> Any:
        raise NotImplementedError

    def strategy(self) -> st.SearchStrategy:
        raise NotImplementedError

    def to_column(self, values: list) -> Any:
        return list(values)

    def from_column(self, column: Any) -> list:
        return list(column)

    def describe(self) -> str:
        raise NotImplementedError

    def json_schema(self, result: bool = False) -> dict:
        """The JSON Schema (draft 2020-12) of this type as an argument, or as a result."""
        raise NotImplementedError


HEX_INT = "^0[xX][0-9a-fA-F]+$"
"""An integer in hex on input: any width, either case."""


@dataclass(frozen=True)
class Int(Type):
    """A fixed-width integer; `hex` selects the "0x..." form of hashes and bit patterns."""

    bits: int
    signed: bool = False
    hex: bool = False

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(f"{'i' if self.signed else 'u'}{self.bits // 8}")

    def decode(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise BadRequest(f"{path}: expected {self.describe()}, got {json_kind(value)}")
        if isinstance(value, str):
            value = _parse_hex_int(value, path)
            if self.signed and (1 << (self.bits - 1)) <= value < (1 << self.bits):
                value = to_signed(value, self.bits)
        if not self.lo <= value <= self.hi:
            raise InvalidInput(f"{path}: {shown(value)} does not fit {self.describe()}")
        return value

    def encode(self, value: int) -> Any:
        if self.hex:
            return f"0x{to_unsigned(value, self.bits):0{self.bits // 4}x}"
        return int(value)

    def strategy(self) -> st.SearchStrategy:
        return st.integers(self.lo, self.hi)

    def to_column(self, values: list) -> np.ndarray:
        return np.array(values, dtype=self.np_dtype)

    def from_column(self, column: np.ndarray | list) -> list:
        values = column.tolist() if isinstance(column, np.ndarray) else column
        return [int(v) for v in values]

    def describe(self) -> str:
        name = f"{'i' if self.signed else 'u'}{self.bits}"
        return f"{name} (hex)" if self.hex else name

    def json_schema(self, result: bool = False) -> dict:
        if result and self.hex:
            return {"type": "string", "pattern": f"^0x[0-9a-f]{{{self.bits // 4}}}$",
                    "description": self.describe()}
        if result:
            return {"type": "integer", "minimum": self.lo, "maximum": self.hi,
                    "description": self.describe()}
        return {"type": ["integer", "string"], "minimum": self.lo, "maximum": self.hi,
                "pattern": HEX_INT, "description": self.describe()}


@dataclass(frozen=True)
class Bool(Type):
    """A boolean; JSON true/false (0 and 1 are accepted on input)."""

    def decode(self, value: Any, path: str) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise BadRequest(f"{path}: expected a boolean, got {json_kind(value)}")

    def encode(self, value: bool) -> bool:
        return bool(value)

    def strategy(self) -> st.SearchStrategy:
        return st.booleans()

    def to_column(self, values: list) -> np.ndarray:
        return np.array(values, dtype=np.bool_)

    def from_column(self, column: np.ndarray) -> list:
        return [bool(v) for v in np.asarray(column).tolist()]

    def describe(self) -> str:
        return "bool"

    def json_schema(self, result: bool = False) -> dict:
        if result:
            return {"type": "boolean"}
        return {"type": ["boolean", "integer"], "enum": [False, True, 0, 1]}


@dataclass(frozen=True)
class Bytes(Type):
    """A byte string, lowercase hex on the wire (upper case and a "0x" prefix accepted)."""

    max_len: int | None = None

    def decode(self, value: Any, path: str) -> bytes:
        if not isinstance(value, str):
            raise BadRequest(f"{path}: expected a hex byte string, got {json_kind(value)}")
        text = value[2:] if value[:2] in ("0x", "0X") else value
        try:
            data = bytes.fromhex(text)
        except ValueError:
            raise BadRequest(f"{path}: not a hex byte string") from None
        if len(text) != 2 * len(data):
            raise BadRequest(f"{path}: hex byte string must have two digits per byte")
        if self.max_len is not None and len(data) > self.max_len:
            raise InvalidInput(f"{path}: {len(data)} bytes exceed the limit of {self.max_len}")
        return data

    def encode(self, value: bytes) -> str:
        return bytes(value).hex()

    def strategy(self) -> st.SearchStrategy:
        return st.binary(max_size=self.max_len if self.max_len is not None else 256)

    def to_column(self, values: list) -> Ragged:
        return _ragged_bytes([bytes(v) for v in values])

    def from_column(self, column: Ragged) -> list:
        raw = np.asarray(column.values, dtype=np.uint8).tobytes()
        offs = np.asarray(column.offsets).tolist()
        return [raw[offs[i] : offs[i + 1]] for i in range(len(offs) - 1)]

    def describe(self) -> str:
        return "bytes (hex)"

    def json_schema(self, result: bool = False) -> dict:
        out: dict[str, Any] = {"type": "string", "description": self.describe()}
        if result:
            out["pattern"] = "^([0-9a-f]{2})*$"
            if self.max_len is not None:
                out["maxLength"] = 2 * self.max_len
        else:
            out["pattern"] = "^(0[xX])?([0-9a-fA-F]{2})*$"
            if self.max_len is not None:
                out["description"] += f", at most {self.max_len} bytes"
        return out


@dataclass(frozen=True)
class Utf8(Type):
    """A text string; kernels receive its UTF-8 bytes. NUL is refused when `c_string` is set."""

    c_string: bool = False

    def decode(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise BadRequest(f"{path}: expected a string, got {json_kind(value)}")
        if self.c_string and "\x00" in value:
            raise InvalidInput(f"{path}: a C string cannot contain NUL")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"{path}: not encodable as UTF-8 (lone surrogate)") from None
        return value

    def encode(self, value: str) -> str:
        return value

    def strategy(self) -> st.SearchStrategy:
        blacklist = ("Cs", "Cc") if self.c_string else ("Cs",)
        return st.text(st.characters(blacklist_categories=blacklist), max_size=64)

    def to_column(self, values: list) -> Ragged:
        return _ragged_bytes([v.encode("utf-8") for v in values])

    def from_column(self, column: Ragged) -> list:
        return [b.decode("utf-8") for b in Bytes().from_column(column)]

    def describe(self) -> str:
        return "string (UTF-8)"

    def json_schema(self, result: bool = False) -> dict:
        return {"type": "string",
                "description": self.describe() + (", no NUL" if self.c_string else "")}


@dataclass(frozen=True)
class Optional(Type):
    """A value or JSON null. Column: (present mask, column of values with `fill` where absent)."""

    inner: Type
    fill: Any

    def decode(self, value: Any, path: str) -> Any:
        return None if value is None else self.inner.decode(value, path)

    def encode(self, value: Any) -> Any:
        return None if value is None else self.inner.encode(value)

    def strategy(self) -> st.SearchStrategy:
        return st.none() | self.inner.strategy()

    def to_column(self, values: list) -> tuple[np.ndarray, Any]:
        present = np.array([v is not None for v in values], dtype=np.bool_)
        return present, self.inner.to_column([self.fill if v is None else v for v in values])

    def from_column(self, column: tuple[np.ndarray, Any]) -> list:
        present, inner = column
        values = self.inner.from_column(inner)
        return [v if p else None for p, v in zip(np.asarray(present).tolist(), values, strict=True)]

    def describe(self) -> str:
        return f"{self.inner.describe()} or null"

    def json_schema(self, result: bool = False) -> dict:
        return nullable(self.inner.json_schema(result))


@dataclass(frozen=True)
class List(Type):
    """A variable-length JSON list. Column: Ragged(values=column of the elements, offsets)."""

    item: Type
    max_len: int | None = None

    def decode(self, value: Any, path: str) -> list:
        if not isinstance(value, list):
            raise BadRequest(f"{path}: expected a list, got {json_kind(value)}")
        if self.max_len is not None and len(value) > self.max_len:
            raise InvalidInput(f"{path}: {len(value)} items exceed the limit of {self.max_len}")
        return [self.item.decode(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def encode(self, value: list) -> list:
        return [self.item.encode(v) for v in value]

    def strategy(self) -> st.SearchStrategy:
        limit = self.max_len if self.max_len is not None else 16
        return st.lists(self.item.strategy(), max_size=limit)

    def to_column(self, values: list) -> Ragged:
        offsets = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum([len(v) for v in values], out=offsets[1:])
        flat = [x for v in values for x in v]
        return Ragged(self.item.to_column(flat), offsets)

    def from_column(self, column: Ragged) -> list:
        flat = self.item.from_column(column.values)
        offs = np.asarray(column.offsets).tolist()
        return [flat[offs[i] : offs[i + 1]] for i in range(len(offs) - 1)]

    def describe(self) -> str:
        return f"list[{self.item.describe()}]"

    def json_schema(self, result: bool = False) -> dict:
        out = {"type": "array", "items": self.item.json_schema(result)}
        return out | ({} if self.max_len is None else {"maxItems": self.max_len})


@dataclass(frozen=True)
class Array(Type):
    """A fixed-length JSON list. Column: a 2-D array (items x n) of the element type."""

    item: Int
    n: int

    def decode(self, value: Any, path: str) -> list:
        if not isinstance(value, list):
            raise BadRequest(f"{path}: expected a list of {self.n}, got {json_kind(value)}")
        if len(value) != self.n:
            raise BadRequest(f"{path}: expected exactly {self.n} items, got {len(value)}")
        return [self.item.decode(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def encode(self, value: list) -> list:
        return [self.item.encode(v) for v in value]

    def strategy(self) -> st.SearchStrategy:
        return st.lists(self.item.strategy(), min_size=self.n, max_size=self.n)

    def to_column(self, values: list) -> np.ndarray:
        return np.array(values, dtype=self.item.np_dtype).reshape(len(values), self.n)

    def from_column(self, column: np.ndarray) -> list:
        return [[int(x) for x in row] for row in np.asarray(column).tolist()]

    def describe(self) -> str:
        return f"{self.item.describe()}[{self.n}]"

    def json_schema(self, result: bool = False) -> dict:
        return {"type": "array", "prefixItems": [self.item.json_schema(result)] * self.n,
                "items": False, "minItems": self.n}


@dataclass(frozen=True)
class Enum(Type):
    """An enum carried as its ordinal; an ordinal outside the enum is `invalid_input`."""

    enum: type[enum.IntEnum]
    bits: int = 8
    signed: bool = False

    def decode(self, value: Any, path: str) -> enum.IntEnum:
        ordinal = Int(self.bits, self.signed).decode(value, path)
        try:
            return self.enum(ordinal)
        except ValueError:
            raise InvalidInput(f"{path}: {ordinal} is not a {self.enum.__name__}") from None

    def encode(self, value: int) -> int:
        return int(value)

    def strategy(self) -> st.SearchStrategy:
        return st.sampled_from(list(self.enum))

    def to_column(self, values: list) -> np.ndarray:
        return np.array([int(v) for v in values], dtype=Int(self.bits, self.signed).np_dtype)

    def from_column(self, column: np.ndarray) -> list:
        return [self.enum(int(v)) for v in np.asarray(column).tolist()]

    def describe(self) -> str:
        return f"{self.enum.__name__} ordinal"

    def json_schema(self, result: bool = False) -> dict:
        ordinals = sorted(int(v) for v in self.enum)
        names = ", ".join(f"{int(v)} {v.name}" for v in sorted(self.enum))
        if result:
            return {"type": "integer", "enum": ordinals, "description": names}
        return {"type": ["integer", "string"], "pattern": HEX_INT,
                "if": {"type": "integer"}, "then": {"enum": ordinals}, "description": names}


@dataclass(frozen=True)
class Json(Type):
    """A JSON value passed to the op as is, which the op's own code decodes (e.g. a layout's
    fields); `schema` states its shape: a Type (used for its JSON Schema only) or a JSON Schema
    written next to that decoder."""

    shape: str
    schema: Type | dict
    example: Callable[[], st.SearchStrategy] = field(default=lambda: st.just({}))

    def decode(self, value: Any, path: str) -> Any:
        return value

    def encode(self, value: Any) -> Any:
        return value

    def strategy(self) -> st.SearchStrategy:
        return self.example()

    def describe(self) -> str:
        return self.shape

    def json_schema(self, result: bool = False) -> dict:
        if isinstance(self.schema, Type):
            return self.schema.json_schema(result)
        return self.schema


@dataclass(frozen=True)
class Field:
    """One named member of a Record, with its default (MISSING = required) and a one-line doc."""

    type: Type
    doc: str = ""
    default: Any = MISSING

    @property
    def required(self) -> bool:
        return self.default is MISSING


@dataclass(frozen=True)
class Record(Type):
    """A JSON object with named fields: an op's args or result."""

    fields: dict[str, Field]

    def decode(self, value: Any, path: str) -> dict:
        if not isinstance(value, dict):
            raise BadRequest(f"{path}: expected an object, got {json_kind(value)}")
        unknown = sorted(set(value) - set(self.fields))
        if unknown:
            raise BadRequest(f"{path}: unknown field {unknown[0]!r}")
        out = {}
        for name, f in self.fields.items():
            if name in value:
                out[name] = f.type.decode(value[name], f"{path}.{name}")
            elif f.required:
                raise BadRequest(f"{path}: missing field {name!r}")
            else:
                out[name] = f.default
        return out

    def encode(self, value: dict) -> dict:
        return {name: f.type.encode(value[name]) for name, f in self.fields.items()}

    def strategy(self) -> st.SearchStrategy:
        return st.fixed_dictionaries({n: f.type.strategy() for n, f in self.fields.items()})

    def columns(self, items: list[dict]) -> dict[str, Any]:
        """The batch of `items` as one column per field."""
        return {n: f.type.to_column([it[n] for it in items]) for n, f in self.fields.items()}

    def rows(self, columns: dict[str, Any], n: int) -> list[dict]:
        """Inverse of `columns`: n per-item dicts."""
        per_field = {name: f.type.from_column(columns[name]) for name, f in self.fields.items()}
        for name, values in per_field.items():
            if len(values) != n:
                raise ValueError(f"column {name!r} has {len(values)} rows, expected {n}")
        return [{name: per_field[name][i] for name in self.fields} for i in range(n)]

    def describe(self) -> str:
        return "{" + ", ".join(f"{n}: {f.type.describe()}" for n, f in self.fields.items()) + "}"

    def json_schema(self, result: bool = False) -> dict:
        props = {}
        for name, f in self.fields.items():
            sub = dict(f.type.json_schema(result))
            if f.doc:
                sub["description"] = f"{f.doc}; {sub['description']}" if "description" in sub \
                    else f.doc
            if not result and not f.required and _is_json(f.default):
                sub["default"] = f.type.encode(f.default) if f.default is not None else None
            props[name] = sub
        required = list(self.fields) if result else [n for n, f in self.fields.items()
                                                      if f.required]
        return {"type": "object", "properties": props, "required": required,
                "additionalProperties": False}


def record(**fields: Field | Type) -> Record:
    """Shorthand: record(x=HASH64) or record(x=Field(HASH64, "doc"))."""
    return Record({n: f if isinstance(f, Field) else Field(f) for n, f in fields.items()})


U8 = Int(8)
U16 = Int(16)
U32 = Int(32)
U64 = Int(64)
I8 = Int(8, signed=True)
I16 = Int(16, signed=True)
I32 = Int(32, signed=True)
I64 = Int(64, signed=True)
HASH64 = Int(64, hex=True)
BITS32 = Int(32, hex=True)
BOOL = Bool()
BYTES = Bytes()


def shown(value: int) -> str:
    """An integer for a message: in decimal, or by its width when too long to print."""
    return str(value) if value.bit_length() <= 256 else f"a {value.bit_length()}-bit integer"


def nullable(schema: dict) -> dict:
    """`schema` that also admits JSON null."""
    types = schema.get("type")
    if types is None:
        return {"anyOf": [schema, {"type": "null"}]}
    out = dict(schema, type=[*([types] if isinstance(types, str) else types), "null"])
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def _is_json(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, str, list, dict))


def _parse_hex_int(text: str, path: str) -> int:
    digits = text[2:]
    if text[:2] not in ("0x", "0X") or not digits or digits.strip(string.hexdigits):
        raise BadRequest(f"{path}: expected an integer or a '0x' hex string, got {text!r}")
    return int(digits, 16)


def _ragged_bytes(items: list[bytes]) -> Ragged:
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in items], out=offsets[1:])
    return Ragged(np.frombuffer(b"".join(items), dtype=np.uint8).copy(), offsets)


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
