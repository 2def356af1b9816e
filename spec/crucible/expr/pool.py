"""Chapter 14: ExprPool, the interning pool of symbolic expressions (facts §5.1-§5.6).

A node is a frozen record (op, args, payload, flags, symbol_id, seq); `seq` counts creations.
1. Construction: capacity starts at the group width G = 16 and doubles until it reaches the
   initial capacity (65536 by default); then BOOL_TRUE, BOOL_FALSE and the INTEGERs -128..127
   are interned in that order (258 nodes).
2. Interning (intern_node): first the grow check, capacity doubles while
   count * 8 >= capacity * 7; then the structural key (op, children, payload, flags,
   symbol_id) finds the existing node, or a new node is made with the next `seq`.
3. Flags: integer_flags, float_flags and composite_flags of §5.5.
4. Canonical order: the real pool sorts children by address, which nobody else can reproduce
   (E14.500); within one arena block that is creation order, so the spec sorts by `seq`.
5. expr_hash (§5.3) packs op, nargs, flags and symbol_id, mixes them with the payload by
   wymix, then mixes in the children; the spec feeds each child's `seq` where the real pool
   feeds its address, so only atom hashes are comparable with the real pool's.

The constructors (add, mul, floor_div, ...) are the methods of the mixins this class joins.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.errata import NO_ERRATA
from ..hashing import PHI, wymix
from .canon import CanonMixin, float_bits
from .divide import DivideMixin
from .logic import LogicMixin
from .node import ExprFlags, Op

F = ExprFlags
G = 16
"""Swiss-table group width on the default (SSE2) build. Real code: `SwissTable.h`."""
DEFAULT_INITIAL_CAPACITY = 65536
"""ExprPool's default initial capacity. Real code: `ExprPool.h`, constructor."""
FX_SEED = 0x517CC1B727220A95
"""The FxHash constant xored onto the payload. Real code: `ExprPool.h`, `expr_hash`."""
NO_SYMBOL = 0xFFFFFFFF
"""SymbolId::none(): the symbol_id of every node that is not a SYMBOL."""
INT_CACHE = range(-128, 128)
"""The integers interned at construction. Real code: `ExprPool.h`, `int_cache_`."""
NUMERIC4 = 0x0407
REAL3 = 0x0406
BOOL_FLAGS = int(F.IS_BOOLEAN)
M64 = (1 << 64) - 1


@dataclass(frozen=True, eq=False)
class Node:
    """One interned expression; identity is equality (one pool, one node per structure)."""

    op: Op
    args: tuple[Node, ...]
    payload: int
    flags: int
    symbol_id: int
    seq: int

    def is_int(self, v: int | None = None) -> bool:
        """An INTEGER node (of value v when given)."""
        return self.op == Op.INTEGER and (v is None or self.payload == v)


def integer_flags(v: int) -> int:
    """NUMERIC4 | sign bits | parity (§5.5)."""
    sign = (F.IS_POSITIVE | F.IS_NONNEGATIVE if v > 0 else
            F.IS_NEGATIVE | F.IS_NONPOSITIVE if v < 0 else
            F.IS_ZERO | F.IS_NONNEGATIVE | F.IS_NONPOSITIVE)
    return NUMERIC4 | int(sign) | int(F.IS_EVEN if v % 2 == 0 else F.IS_ODD)


def float_flags(v: float) -> int:
    """REAL3 | sign bits (0.0 and -0.0 are zero); NaN gets REAL3 only; never IS_INTEGER."""
    if v > 0:
        return REAL3 | 0x0028
    if v < 0:
        return REAL3 | 0x0050
    return REAL3 | 0x00E0 if v == 0 else REAL3


_AND_MASKED = {Op.ADD, Op.MUL, Op.MIN, Op.MAX}
_INTEGRAL = {Op.FLOOR_DIV, Op.CLEAN_DIV, Op.CEIL_DIV, Op.MOD, Op.PYTHON_MOD, Op.MODULAR_INDEXING,
             Op.LSHIFT, Op.RSHIFT, Op.CEIL_TO_INT, Op.FLOOR_TO_INT, Op.TRUNC_TO_INT,
             Op.ROUND_TO_INT, Op.BITWISE_AND, Op.BITWISE_OR, Op.POW_BY_NATURAL,
             Op.IS_NON_OVERLAPPING_AND_DENSE}
_REAL = {Op.FLOAT_TRUE_DIV, Op.INT_TRUE_DIV, Op.TO_FLOAT, Op.TRUNC_TO_FLOAT, Op.FLOAT_POW,
         Op.ROUND_DECIMAL, Op.SQRT, Op.COS, Op.SIN, Op.TAN, Op.COSH, Op.SINH, Op.TANH, Op.ASIN,
         Op.ACOS, Op.ATAN, Op.EXP, Op.LOG, Op.ASINH, Op.LOG2}
_BOOLEAN = {Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.AND, Op.OR, Op.NOT}


def composite_flags(op: Op, args: tuple[Node, ...]) -> int:
    """The flags the generic path gives a node of `op` over `args` (§5.5 table)."""
    if op in _AND_MASKED:
        acc = 0xFFFF
        for a in args:
            acc &= a.flags
        return acc & NUMERIC4
    if op == Op.POW:
        return args[0].flags & args[1].flags & 0x0006
    if op in _BOOLEAN:
        return BOOL_FLAGS
    if op in _INTEGRAL:
        return NUMERIC4
    if op in _REAL:
        return REAL3
    if op == Op.WHERE:
        return args[1].flags & args[2].flags & NUMERIC4 if len(args) >= 3 else 0
    if op == Op.IDENTITY:
        return args[0].flags if args else 0
    if op == Op.NEG:
        return args[0].flags & NUMERIC4 if args else 0
    return 0


def packed_word(op: int, nargs: int, flags: int, symbol_id: int) -> int:
    """op | nargs << 8 | flags << 16 | symbol_id << 32."""
    return op | nargs << 8 | flags << 16 | symbol_id << 32


def expr_hash(op: int, payload: int, symbol_id: int, flags: int,
              children: tuple[int, ...] = ()) -> int:
    """§5.3: mix the packed word with the payload, then the child words (two children: the
    first is xored in, unlike the loop for three or more)."""
    h = wymix(packed_word(op, len(children), flags, symbol_id) ^ PHI, (payload & M64) ^ FX_SEED)
    if len(children) == 1:
        return wymix(h, children[0])
    if len(children) == 2:
        return wymix(h ^ children[0], children[1])
    for c in children:
        h = wymix(h, c)
    return h


def canonical_order(nodes: list[Node] | tuple[Node, ...]) -> list[Node]:
    """Children in canonical order: by creation (the real pool: by address, E14.500)."""
    return sorted(nodes, key=lambda n: n.seq)


def initial_capacity_of(initial_capacity: int) -> int:
    """Step 1: G doubled until it is at least `initial_capacity`."""
    cap = G
    while cap < initial_capacity:
        cap *= 2
    return cap


class ExprPool(CanonMixin, DivideMixin, LogicMixin):
    """The pool: interned nodes, the int cache, the two booleans and the symbol names."""

    def __init__(self, initial_capacity: int = DEFAULT_INITIAL_CAPACITY,
                 errata: frozenset[str] = NO_ERRATA) -> None:
        self.errata = errata
        self.capacity = initial_capacity_of(initial_capacity)  # 1
        self.table: dict[tuple, Node] = {}
        self.symbol_names: dict[int, str] = {}
        self.true_ = self.intern_node(Op.BOOL_TRUE, (), BOOL_FLAGS)  # 3
        self.false_ = self.intern_node(Op.BOOL_FALSE, (), BOOL_FLAGS)
        self.int_cache = {v: self.intern_node(Op.INTEGER, (), integer_flags(v), payload=v)
                          for v in INT_CACHE}  # 4

    def intern_size(self) -> int:
        """Distinct nodes ever interned, intermediate ones included."""
        return len(self.table)

    def intern_capacity(self) -> int:
        return self.capacity

    def grow_check(self) -> None:
        """Step 2's first half: double while the table is 7/8 full (before every intern)."""
        if len(self.table) * 8 >= self.capacity * 7:
            self.capacity *= 2

    def intern_node(self, op: Op, args: tuple[Node, ...], flags: int,
                    symbol_id: int = NO_SYMBOL, payload: int = 0) -> Node:
        """Step 2: the node of this structure, made if it is new."""
        self.grow_check()
        key = (int(op), tuple(a.seq for a in args), payload, flags, symbol_id)
        node = self.table.get(key)
        if node is None:
            node = Node(Op(op), tuple(args), payload, flags, symbol_id, len(self.table))
            self.table[key] = node
        return node

    def intern_composite(self, op: Op, args: list[Node] | tuple[Node, ...]) -> Node:
        """Intern (op, args as given) with composite_flags."""
        return self.intern_node(op, tuple(args), composite_flags(op, tuple(args)))

    def hash_of(self, n: Node) -> int:
        """expr_hash of a node; children stand for themselves by `seq`."""
        return expr_hash(n.op, n.payload, n.symbol_id, n.flags, tuple(a.seq for a in n.args))

    # ── atoms ────────────────────────────────────────────────────────────────────────────────

    def integer(self, v: int) -> Node:
        """The cached node for -128..127, else INTEGER v."""
        if v in self.int_cache:
            return self.int_cache[v]
        return self.intern_node(Op.INTEGER, (), integer_flags(v), payload=v)

    def float_(self, v: float) -> Node:
        return self.intern_node(Op.FLOAT, (), float_flags(v), payload=float_bits(v))

    def symbol(self, name: str, id: int, flags: int) -> Node:
        """SYMBOL id with flags | IS_SYMBOL; the first name given for an id is kept. The
        payload (the real pool: the stored name's address) is 0 here."""
        self.symbol_names.setdefault(id, name)
        return self.intern_node(Op.SYMBOL, (), flags | int(F.IS_SYMBOL), symbol_id=id)

    def bool_true(self) -> Node:
        return self.true_

    def bool_false(self) -> Node:
        return self.false_

    def boolean(self, b: bool) -> Node:
        return self.true_ if b else self.false_

