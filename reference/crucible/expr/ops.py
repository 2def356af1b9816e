"""Reference for `expr.canon`: ExprPool's canonicalising constructors written out plainly from
the facts (§5.2-§5.7). A node is a position in one list (so creation order is canonical
order); a dict from structure to position interns; constants fold with Python's own `//`
and `%` and an explicit wrap to i64."""

from __future__ import annotations

import math
import struct

from ....spec.core.errors import InvalidInput

_OPS = ("INTEGER FLOAT SYMBOL BOOL_TRUE BOOL_FALSE ADD MUL POW EQ NE LT LE GT GE AND OR NOT "
         "FLOOR_DIV CLEAN_DIV CEIL_DIV INT_TRUE_DIV FLOAT_TRUE_DIV MOD PYTHON_MOD "
         "MODULAR_INDEXING CEIL_TO_INT FLOOR_TO_INT TRUNC_TO_FLOAT TRUNC_TO_INT ROUND_TO_INT "
         "ROUND_DECIMAL TO_FLOAT LSHIFT RSHIFT POW_BY_NATURAL FLOAT_POW WHERE IDENTITY MIN MAX "
         "IS_NON_OVERLAPPING_AND_DENSE SQRT COS COSH SIN SINH TAN TANH ASIN ACOS ATAN EXP LOG "
         "ASINH LOG2 ABS BITWISE_AND BITWISE_OR BITWISE_XOR NEG")
NAMES = _OPS.split()
ONE_ARG = {*NAMES[25:30], "TO_FLOAT", "IDENTITY", "NOT", "NEG", "ABS", *NAMES[41:55]}
THREE_ARGS = {"MODULAR_INDEXING", "WHERE"}
ANY_ARGS = {"ADD": 0, "MUL": 0, "AND": 0, "OR": 0, "MIN": 1, "MAX": 1,
            "IS_NON_OVERLAPPING_AND_DENSE": 0}
_INTEGRAL = ("FLOOR_DIV CLEAN_DIV CEIL_DIV MOD PYTHON_MOD MODULAR_INDEXING LSHIFT RSHIFT "
               "CEIL_TO_INT FLOOR_TO_INT TRUNC_TO_INT ROUND_TO_INT BITWISE_AND BITWISE_OR "
               "POW_BY_NATURAL IS_NON_OVERLAPPING_AND_DENSE")
INTEGRAL = set(_INTEGRAL.split())
REALS = {"FLOAT_TRUE_DIV", "INT_TRUE_DIV", "TO_FLOAT", "TRUNC_TO_FLOAT", "FLOAT_POW",
         "ROUND_DECIMAL", *NAMES[41:55]}
RELATIONS = {"EQ", "NE", "LT", "LE", "GT", "GE", "AND", "OR", "NOT"}


def wrap(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q)


def trunc_rem(a: int, b: int) -> int:
    return wrap(a - b * trunc_div(a, b))


def int_flags(v: int) -> int:
    sign = 0x28 if v > 0 else 0x50 if v < 0 else 0xE0
    return 0x407 | sign | (0x100 if v % 2 == 0 else 0x200)


def hash_of(op: int, payload: int, sym: int, flags: int) -> int:
    a = (op | flags << 16 | sym << 32) ^ 0x9E3779B97F4A7C15
    p = a * ((payload % 2**64) ^ 0x517CC1B727220A95)
    return (p % 2**64) ^ (p >> 64)


class Pool:
    def __init__(self, capacity: int, errata: frozenset[str]):
        self.cap = 16
        self.seed_sum, self.seed_zero, self.seed_mod, self.seed_mod_zero, self.seed_maybe_zero, \
            self.seed_nest, self.seed_ceil, self.seed_mod_index = (e in errata for e in (
                "E14.501", "E14.502", "E14.503", "E14.504", "E14.505", "E14.550", "E14.551",
                "E14.552"))
        while self.cap < capacity:
            self.cap *= 2
        self.nodes: list[tuple] = []
        self.index: dict[tuple, int] = {}
        self.names: dict[int, str] = {}
        self.T = self.node("BOOL_TRUE", (), 0x1000)
        self.F = self.node("BOOL_FALSE", (), 0x1000)
        for v in range(-128, 128):
            self.node("INTEGER", (), int_flags(v), v)

    def node(self, op: str, kids, flags: int, value: int = 0, sym: int = 0xFFFFFFFF) -> int:
        if len(self.nodes) * 8 >= self.cap * 7:
            self.cap *= 2
        key = (op, tuple(kids), flags, value, sym)
        if key not in self.index:
            self.index[key] = len(self.nodes)
            self.nodes.append(key)
        return self.index[key]

    def op(self, n): return self.nodes[n][0]
    def kids(self, n): return self.nodes[n][1]
    def flags(self, n): return self.nodes[n][2]
    def val(self, n): return self.nodes[n][3]
    def is_int(self, n): return self.op(n) == "INTEGER"
    def is_v(self, n, v): return self.is_int(n) and self.val(n) == v

    def num(self, v): return self.node("INTEGER", (), int_flags(v), v)

    def fl(self, x: float) -> int:
        bits = struct.unpack("<q", struct.pack("<d", x))[0]
        f = 0x42E if x > 0 else 0x456 if x < 0 else 0x4E6 if x == 0 else 0x406
        return self.node("FLOAT", (), f, bits)

    def fval(self, n): return struct.unpack("<d", struct.pack("<q", self.val(n)))[0]

    def generic(self, op: str, kids) -> int:
        fs = [self.flags(k) for k in kids]
        if op in ("ADD", "MUL", "MIN", "MAX"):
            f = 0x407
            for x in fs:
                f &= x
        elif op == "POW":
            f = fs[0] & fs[1] & 6
        elif op in RELATIONS:
            f = 0x1000
        elif op in INTEGRAL:
            f = 0x407
        elif op in REALS:
            f = 0x406
        elif op == "WHERE":
            f = fs[1] & fs[2] & 0x407 if len(fs) >= 3 else 0
        elif op == "IDENTITY":
            f = fs[0] if fs else 0
        elif op == "NEG":
            f = fs[0] & 0x407 if fs else 0
        else:
            f = 0
        return self.node(op, kids, f)

    # sums and products
    def add(self, a, b):
        simple = ("ADD", "MUL", "INTEGER", "FLOAT")
        if self.op(a) not in simple and self.op(b) not in simple:
            return self.mul(self.num(2), a) if a == b else self.generic("ADD", sorted((a, b)))
        if self.is_int(a) and self.is_int(b):
            return self.num(wrap(self.val(a) + self.val(b)))
        if self.op(a) == self.op(b) == "FLOAT":
            return self.fl(self.fval(a) + self.fval(b))
        if self.is_v(a, 0):
            return b
        if self.is_v(b, 0):
            return a
        return self.add_n([a, b])

    def add_n(self, xs):
        const, terms = 0, []
        for x in xs:
            for t in (self.kids(x) if self.op(x) == "ADD" else (x,)):
                if self.is_int(t):
                    const = wrap(const + self.val(t))
                else:
                    terms.append(t)
        if len(terms) > 254:
            raise InvalidInput("args.expr: a sum of more than 254 terms")
        if not terms:
            return self.num(const)
        coeffs: dict[int, int] = {}
        for t in terms:
            c, base = 1, t
            if self.op(t) == "MUL":
                rest = [k for k in self.kids(t) if not self.is_int(k)]
                for k in self.kids(t):
                    if self.is_int(k):
                        c = self.val(k)
                if not rest:
                    const = wrap(const + c)
                    continue
                base = rest[0] if len(rest) == 1 else self.generic("MUL", rest)
            coeffs[base] = wrap(coeffs.get(base, 0) + c)
        out = []
        for base in sorted(coeffs):
            c = coeffs[base]
            if c == 1:
                out.append(base)
            elif c != 0:
                out.append(self.mul_n([self.num(c), base]))
        if const != 0 or not out:
            out.append(self.num(const))
        return out[0] if len(out) == 1 else self.generic("ADD", sorted(out))

    def mul(self, a, b):
        simple = ("MUL", "INTEGER", "FLOAT")
        if self.op(a) not in simple and self.op(b) not in simple:
            return self.generic("MUL", sorted((a, b)))
        if self.is_int(a) and self.is_int(b):
            return self.num(wrap(self.val(a) * self.val(b)))
        if self.op(a) == self.op(b) == "FLOAT":
            return self.fl(self.fval(a) * self.fval(b))
        if self.is_v(a, 0) or self.is_v(b, 0):
            return self.num(0)
        if self.is_v(a, 1):
            return b
        if self.is_v(b, 1):
            return a
        return self.mul_n([a, b])

    def mul_n(self, xs):
        prod, fs = 1, []
        for x in xs:
            for t in (self.kids(x) if self.op(x) == "MUL" else (x,)):
                if self.is_int(t):
                    prod = wrap(prod * self.val(t))
                else:
                    fs.append(t)
        if len(fs) > 254:
            raise InvalidInput("args.expr: a product of more than 254 terms")
        if prod == 0:
            return self.num(0)
        if prod != 1 or not fs:
            fs.append(self.num(prod))
        return fs[0] if len(fs) == 1 else self.generic("MUL", sorted(fs))

    def pow(self, b, e):
        if self.is_v(e, 0):
            return self.num(1)
        if self.is_v(e, 1):
            return b
        if self.is_int(b) and self.is_int(e) and 0 <= self.val(e) <= 62:
            return self.num(wrap(self.val(b) ** self.val(e)))
        return self.node("POW", (b, e), self.flags(b) & self.flags(e) & 6)

    def neg(self, e):
        if self.is_int(e):
            return self.num(wrap(-self.val(e)))
        if self.op(e) == "FLOAT":
            return self.fl(-self.fval(e))
        return self.mul(self.num(-1), e)

    def minmax(self, op, xs):
        items = sorted(t for x in xs for t in (self.kids(x) if self.op(x) == op else (x,)))
        if len(items) > 64:
            raise InvalidInput(f"args.expr: a {op} of more than 64 terms")
        items = [t for i, t in enumerate(items) if i == 0 or items[i - 1] != t]
        return items[0] if len(items) == 1 else self.generic(op, items)

    def min2(self, a, b, op="MIN"):
        if a == b:
            return a
        if self.is_int(a) and self.is_int(b):
            pick = min if op == "MIN" else max
            return self.num(pick(self.val(a), self.val(b)))
        return self.minmax(op, [a, b])

    # relations and logic
    def rel(self, op, a, b):
        if a == b:
            return self.T if op in ("EQ", "LE", "GE") else self.F
        if self.is_int(a) and self.is_int(b):
            x, y = self.val(a), self.val(b)
            truth = {"EQ": x == y, "NE": x != y, "LT": x < y, "LE": x <= y, "GT": x > y,
                     "GE": x >= y}[op]
            return self.T if truth else self.F
        if op in ("EQ", "NE"):
            a, b = sorted((a, b))
        return self.node(op, (a, b), 0x1000)

    def logic(self, op, xs, binary=False):
        absorb, unit = (self.F, self.T) if op == "AND" else (self.T, self.F)
        if binary:
            a, b = xs
            if absorb in (a, b):
                return absorb
            if a == unit:
                return b
            if b == unit or a == b:
                return a
        out = []
        for x in xs:
            for t in (self.kids(x) if self.op(x) == op else (x,)):
                if t == absorb:
                    return absorb
                if t != unit:
                    out.append(t)
        if len(out) > 64:
            raise InvalidInput(f"args.expr: an {op} of more than 64 terms")
        if not out:
            return unit
        return out[0] if len(out) == 1 else self.node(op, tuple(sorted(out)), 0x1000)

    def not_(self, e):
        if e in (self.T, self.F):
            return self.F if e == self.T else self.T
        return self.kids(e)[0] if self.op(e) == "NOT" else self.node("NOT", (e,), 0x1000)

    def where(self, c, t, f):
        if c == self.T or t == f:
            return t
        if c == self.F:
            return f
        return self.node("WHERE", (c, t, f), self.flags(t) & self.flags(f))

    # division
    def coef(self, e):
        if self.is_int(e):
            return self.val(e)
        if self.op(e) == "MUL":
            for k in self.kids(e):
                if self.is_int(k):
                    return self.val(k)
        return 1

    def factor(self, e):
        if self.op(e) == "ADD":
            return math.gcd(*[self.coef(t) for t in self.kids(e)]) or 1
        return abs(self.coef(e))

    def divide(self, e, g):
        if g <= 1:
            return e
        if self.is_int(e):
            return self.num(trunc_div(self.val(e), g))
        if self.op(e) == "ADD":
            return self.add_n([self.divide(t, g) for t in self.kids(e)])
        if self.op(e) == "MUL":
            ks = list(self.kids(e))
            for i, k in enumerate(ks):
                if self.is_int(k):
                    c = trunc_div(self.val(k), g)
                    if c == 1 and len(ks) == 2:
                        return ks[1 - i]
                    ks[i] = self.num(c)
                    return self.mul_n(ks)
        return e

    def floor_div(self, a, b):
        if self.is_v(b, 0) and not self.seed_zero:
            return self.fd_node(a, b)
        if self.is_int(a) and self.is_int(b) and self.val(b) != 0:
            return self.num(wrap(self.val(a) // self.val(b)))
        if self.is_v(a, 0) and self.nonzero(b):
            return self.num(0)
        if self.is_v(b, 1):
            return a
        if self.is_v(b, -1):
            return self.neg(a)
        if a == b and self.nonzero(b):
            return self.num(1)
        if self.op(a) in ("FLOOR_DIV", "CLEAN_DIV") and (self.flags(b) & 0x8 or self.seed_nest):
            return self.floor_div(self.kids(a)[0], self.mul(self.kids(a)[1], b))
        d = self.val(b) if self.is_int(b) else 0
        if self.op(a) == "ADD" and (d > 0 or (self.seed_sum and d != 0)):
            whole = [t for t in self.kids(a) if self.coef(t) != 0 and
                     trunc_rem(self.coef(t), d) == 0]
            rest = [t for t in self.kids(a) if t not in whole]
            if whole:
                qs = [self.divide(t, d) for t in whole]
                q = qs[0] if len(qs) == 1 else self.add_n(qs)
                if not rest:
                    return q
                r = rest[0] if len(rest) == 1 else self.add_n(rest)
                return self.add(q, self.floor_div(r, b))
        g = math.gcd(self.factor(a), self.factor(b))
        if g > 1:
            return self.floor_div(self.divide(a, g), self.divide(b, g))
        return self.fd_node(a, b)

    def fd_node(self, a, b):
        nonneg = self.flags(a) & 0x20 and self.flags(b) & 0x8
        return self.node("FLOOR_DIV", (a, b), 0x21 if nonneg else 0x1)

    def ceil_div(self, a, b):
        if self.is_int(a) and self.is_int(b) and self.val(b) != 0:
            return self.num(wrap(-(-self.val(a) // self.val(b))))
        if self.flags(b) & 0x8 or self.seed_ceil:
            return self.floor_div(self.add(a, self.add(b, self.num(-1))), b)
        if self.flags(b) & 0x10:
            return self.floor_div(self.add(a, self.add(b, self.num(1))), b)
        return self.neg(self.floor_div(self.neg(a), b))

    def mods(self, op, a, b):
        if self.is_v(b, 0) and not self.seed_mod_zero:
            return self.node(op, (a, b), 0x1)
        if self.is_int(a) and self.is_int(b):
            x, y = self.val(a), self.val(b)
            if op == "MOD" and y > 0:
                return self.num(trunc_rem(x, y) if self.seed_mod else x % y)
            if op == "PYTHON_MOD" and y != 0:
                return self.num(wrap(x % y))
        if ((self.is_v(a, 0) or a == b) and self.nonzero(b)) or self.is_v(b, 1):
            return self.num(0)
        if self.is_v(b, 2) and self.flags(a) & 0x300:
            return self.num(0 if self.flags(a) & 0x100 else 1)
        return self.node(op, (a, b), 0x21 if op == "MOD" and self.nonzero(b) else 0x1)

    def nonzero(self, b) -> bool:
        """b is flagged positive or negative (the seed takes any divisor as non-zero)."""
        return bool(self.flags(b) & 0x18) or self.seed_maybe_zero

    def mod_index(self, b, d, m):
        flags = 0x21 if self.nonzero(m) else 0x1
        if self.is_v(d, 0) and not self.seed_zero:
            return self.node("MODULAR_INDEXING", (b, d, m), flags)
        if (self.is_v(b, 0) or self.is_v(m, 1)) and self.nonzero(d) and self.nonzero(m):
            return self.num(0)
        if all(self.is_int(n) for n in (b, d, m)) and self.val(d) and self.val(m):
            q, mv = self.val(b) // self.val(d), self.val(m)
            return self.num(self.neg_m(q, mv) if self.seed_mod_index else wrap(q) % abs(mv))
        if not self.is_v(d, 1):
            g = math.gcd(self.factor(b), self.factor(d))
            if g > 1:
                return self.mod_index(self.divide(b, g), self.divide(d, g), m)
        if self.op(b) == "ADD" and self.is_int(m) and self.is_int(d):
            md = wrap(self.val(m) * self.val(d))
            keep = [t for t in self.kids(b) if md <= 0 or self.coef(t) == 0
                    or trunc_rem(self.coef(t), md) != 0]
            if md > 0 and len(keep) < len(self.kids(b)):
                if not keep:
                    return self.num(0)
                return self.mod_index(keep[0] if len(keep) == 1 else self.add_n(keep), d, m)
        if self.op(b) in ("FLOOR_DIV", "CLEAN_DIV") and (self.flags(d) & 0x8 or self.seed_nest):
            return self.mod_index(self.kids(b)[0], self.mul(self.kids(b)[1], d), m)
        return self.node("MODULAR_INDEXING", (b, d, m), flags)

    @staticmethod
    def neg_m(q: int, m: int) -> int:
        """(q % m), C's remainder moved up by m when negative (a negative m included)."""
        v = trunc_rem(wrap(q), m)
        return wrap(v + m) if v < 0 else v

