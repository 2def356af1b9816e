"""Chapter 14 obligations: every integer rewrite rule of ExprPool is sound over the mathematical
integers on its family of left-hand sides, or z3 finds the witness that it is not (PO14.551 to
PO14.596, one per row of spec/crucible/expr/rule_table's RULES, in order); each asks z3 under the
spec's
profile and under Crucible's (E14.501-E14.503): unsat where the profile's pool keeps the rule
sound, sat (a witness) where its erratum or an open finding breaks it. Every node those rules
make carries only sign, zero and parity flags its meaning keeps (PO14.597)."""

from __future__ import annotations

from ....spec.core.errata import NO_ERRATA
from ....spec.core.registry import Mutant
from ....spec.crucible.expr.arith import (
    ceil_div_fold,
    floor_div_fold,
    modular_indexing_fold,
    python_mod_fold,
)
from ....spec.crucible.expr.canon import CanonMixin
from ....spec.crucible.expr.divide import E14_504, E14_505, DivideMixin
from ....spec.crucible.expr.logic import LogicMixin
from ....spec.crucible.expr.rule_table import RULES
from ....spec.crucible.expr.rules import (
    Rule,
    apply,
    differs_formula,
    flags_formula,
    pool_with_symbols,
    seed_errata,
)
from ...core.obligation import Query, z3_obligation

FIRST_ID = 551
RLIMIT = 400_000_000
"""The nested floor divisions over a symbol need more than the default budget."""
LOGIC = "QF_LIA"
"""The solver asked: z3's for linear integer arithmetic answers rules 4 and 5 in about a
second where its general solver takes one or two minutes. The question is the same; an unsat
from either is a proof, and a sat answer comes with its model."""

C, D, L = CanonMixin, DivideMixin, LogicMixin
MUTANTS: dict[str, tuple[Mutant, ...]] = {
    "add 1": (Mutant.edit("x + x = 3x", "the fast path doubles with 3", C.add,
                          "self.mul(self.integer(2), lhs) if lhs is rhs",
                          "self.mul(self.integer(3), lhs) if lhs is rhs"),),
    "add 2": (Mutant.edit("constants subtract", "two INTEGERs fold to l - r", C.add,
                          "add_wrap(lhs.payload, rhs.payload)",
                          "add_wrap(lhs.payload, -rhs.payload)"),),
    "add 3": (Mutant.edit("0 + r = 0", "a zero left operand answers itself", C.add,
                          "return rhs\n    if rhs.is_int(0):",
                          "return lhs\n    if rhs.is_int(0):"),),
    "add 4": (Mutant.edit("coefficients not summed", "equal bases count their terms",
                          C.merge_terms, "total = add_wrap(total, pairs[i][0])",
                          "total = add_wrap(total, 1)"),),
    "add_n 1-6": (Mutant.edit("coefficient sign lost", "a term's coefficient is taken "
                              "without its sign", C.coefficient_split, "coeff = c.payload",
                              "coeff = abs(c.payload)"),),
    "mul 1": (Mutant.edit("product as sum", "the fast path interns an ADD", C.mul,
                          "return self.intern_composite(Op.MUL, self.order(lhs, rhs))",
                          "return self.intern_composite(Op.ADD, self.order(lhs, rhs))"),),
    "mul 2": (Mutant.edit("constants added", "two INTEGERs fold to l + r", C.mul,
                          "self.integer(mul_wrap(lhs.payload, rhs.payload))",
                          "self.integer(add_wrap(lhs.payload, rhs.payload))"),),
    "mul 3-4": (Mutant.edit("1 * r = 1", "a unit left operand answers itself", C.mul,
                            "return rhs\n    if rhs.is_int(1):",
                            "return lhs\n    if rhs.is_int(1):"),),
    "mul 5": (Mutant.edit("constants summed", "mul_n adds its constants", C.mul_n,
                          "int_prod = mul_wrap(int_prod, t.payload)",
                          "int_prod = add_wrap(int_prod, t.payload)"),),
    "mul_n 1": (Mutant.edit("negative product dropped", "only a product above 1 is kept",
                            C.mul_n, "if int_prod != 1 or not buf:",
                            "if int_prod > 1 or not buf:"),),
    "pow 1-4": (Mutant.edit("x^0 = 0", "a zero exponent gives 0", C.pow,
                            "return self.integer(1)\n    if e.is_int(1):",
                            "return self.integer(0)\n    if e.is_int(1):"),),
    "neg 1-2": (Mutant.edit("constant kept", "neg of an INTEGER is itself", C.neg,
                            "wrap64(-e.payload)", "wrap64(e.payload)"),),
    "floor_div 1": (Mutant.edit("ceiling correction", "the fold rounds the wrong way when the "
                                "signs differ", floor_div_fold, "q - 1, q)", "q, q)"),),
    "floor_div 2-5": (Mutant.edit("l // -1 = l", "a divisor of -1 is dropped", D.floor_div,
                                  "return self.neg(lhs)", "return lhs"),),
    "floor_div 6": (Mutant.edit("inner divisor squared", "rule 6 multiplies the inner divisor "
                                "by itself", D.floor_div,
                                "self.mul(lhs.args[1], rhs))",
                                "self.mul(lhs.args[1], lhs.args[1]))"),),
    "floor_div 6 (c < 0)": (Mutant.edit("any outer divisor merges", "the seed's rule 6: a "
                                        "negative outer divisor merges too", D.floor_div,
                                        "if lhs.op in _DIVS and self.merges_divisors(rhs):",
                                        "if lhs.op in _DIVS:"),),
    "floor_div 7": (Mutant.edit("any divisor splits a sum", "the spec's rule 7 takes a "
                                "negative divisor too", D.sum_rule_applies, "return d > 0 or",
                                "return d != 0 or"),),
    "floor_div 8": (Mutant.edit("zero divisor simplified", "the spec's pool skips its rule 0",
                                D.floor_div, "if rhs.is_int(0) and E14_502 not in self.errata:",
                                "if False:"),),
    "floor_div 9": (Mutant.edit("operands swapped", "the node divides r by l", D.floor_div_node,
                                "Op.FLOOR_DIV, (lhs, rhs)", "Op.FLOOR_DIV, (rhs, lhs)"),),
    "clean_div 1": (Mutant.edit("operands swapped", "clean_div divides r by l", D.clean_div,
                                "self.floor_div(lhs, rhs)", "self.floor_div(rhs, lhs)"),),
    "ceil_div 1": (Mutant.edit("no ceiling step", "the fold is the truncating quotient",
                               ceil_div_fold, "q + 1, q)", "q, q)"),),
    "ceil_div 2": (Mutant.edit("off by one", "the dividend is moved up by r, not r - 1",
                               D.ceil_div, "self.add(rhs, self.integer(-1))", "rhs"),),
    "ceil_div 2 (r < 0)": (Mutant.edit("positive form for every divisor", "the seed's "
                                       "ceil_div: l + (r - 1) whatever r's sign", D.ceil_div,
                                       "if rhs.flags & ExprFlags.IS_POSITIVE or E14_551",
                                       "if True or E14_551"),),
    "mod 0": (Mutant.edit("zero divisor folds to 0", "rule 0 answers a remainder by zero "
                          "with 0", D.mod, "return self.intern_node(Op.MOD, (lhs, rhs), "
                          "ExprFlags.IS_INTEGER)", "return self.integer(0)"),),
    "mod 1": (Mutant.edit("C remainder", "the spec's mod folds with C's `%`", D.mod,
                          "fold = c_rem if E14_503 in self.errata else python_mod_fold",
                          "fold = c_rem"),),
    "mod 2-4": (Mutant.edit("odd % 2 = 0", "an odd operand's parity answers 0",
                            D.mod_identities, "return self.integer(1)",
                            "return self.integer(0)"),),
    "python_mod 0": (Mutant.edit("zero divisor folds to 0", "rule 0 answers a remainder by "
                                 "zero with 0", D.python_mod, "return self.intern_node("
                                 "Op.PYTHON_MOD, (lhs, rhs), ExprFlags.IS_INTEGER)",
                                 "return self.integer(0)"),),
    "python_mod 1": (Mutant.edit("wrong correction", "the fold moves a remainder by -r",
                                 python_mod_fold, "rem + b, rem)", "rem - b, rem)"),),
    "python_mod 2-4": (Mutant.edit("l % 2 = 0", "a divisor of 2 answers 0 like 1",
                                   D.mod_identities, "or rhs.is_int(1):",
                                   "or rhs.is_int(2):"),),
    "floor_div 2, 5 (r may be 0)": (Mutant.edit("l // l = 1 for any l", "the seed's rule 5: "
                                                "a divisor that may be zero divides itself",
                                                D.floor_div, "if lhs is rhs and "
                                                "self.nonzero(rhs):", "if lhs is rhs:"),),
    "mod 2-3 (r may be 0)": (Mutant.edit("every divisor non-zero", "the seed's identities: "
                                         "no divisor may be zero", D.nonzero,
                                         "or E14_505 in self.errata", "or True"),),
    "python_mod 2-3 (r may be 0)": (Mutant.edit("identities unguarded", "0 % r and l % l "
                                                "fold for any divisor", D.mod_identities,
                                                " and self.nonzero(rhs)) or", ") or"),),
    "modular_indexing 1 (d or m may be 0)": (Mutant.edit(
        "trivial cases unguarded", "the seed's rule 1: b = 0 and m = 1 give 0 whatever d and m",
        D.modular_indexing, "(b.is_int(0) or m.is_int(1)) and self.nonzero(d) and "
        "self.nonzero(m)", "b.is_int(0) or m.is_int(1)"),),
    "modular_indexing 1": (Mutant.edit("m = 1 gives 1", "the trivial cases answer 1",
                                       D.modular_indexing, "return self.integer(0)",
                                       "return self.integer(1)"),),
    "modular_indexing 2": (Mutant.edit("negative moved down", "a negative remainder is moved "
                                       "by -|m|", modular_indexing_fold,
                                       "v + select(m < 0, -m, m), v)",
                                       "v - select(m < 0, -m, m), v)"),),
    "modular_indexing 2 (m < 0)": (Mutant.edit("moved up by m", "the seed's fold: a "
                                               "negative remainder is moved by m, not |m|",
                                               modular_indexing_fold,
                                               "v + select(m < 0, -m, m), v)", "v + m, v)"),),
    "modular_indexing 3": (Mutant.edit("zero divisor simplified", "the spec's pool skips its "
                                       "rule 0", D.modular_indexing,
                                       "if d.is_int(0) and E14_502 not in self.errata",
                                       "if False"),),
    "modular_indexing 4": (Mutant.edit("m alone divides", "terms are dropped when m divides "
                                       "their coefficient", D.modular_indexing,
                                       "c_rem(integer_coefficient(t), md) != 0",
                                       "c_rem(integer_coefficient(t), m.payload) != 0"),),
    "modular_indexing 5": (Mutant.edit("inner divisor squared", "rule 5 multiplies the inner "
                                       "divisor by itself", D.modular_indexing,
                                       "self.mul(b.args[1], d), m)",
                                       "self.mul(b.args[1], b.args[1]), m)"),),
    "modular_indexing 5 (d < 0)": (Mutant.edit("any divisor merges", "the seed's rule 5: a "
                                               "negative d merges too", D.modular_indexing,
                                               "if b.op in _DIVS and self.merges_divisors(d):",
                                               "if b.op in _DIVS:"),),
    "min_expr 1-3": (Mutant.edit("min picks the larger", "two INTEGERs fold to the larger",
                                 C.min_expr, "lhs.payload <= rhs.payload",
                                 "lhs.payload >= rhs.payload"),),
    "max_expr 1-3": (Mutant.edit("max picks the smaller", "two INTEGERs fold to the smaller",
                                 C.max_expr, "lhs.payload >= rhs.payload",
                                 "lhs.payload <= rhs.payload"),),
    "where 1-4": (Mutant.edit("false picks t", "a false condition answers t", L.where,
                              "return f\n    if t is f:", "return t\n    if t is f:"),),
    "eq 1-3": (Mutant.edit("l == l false", "a node compared with itself answers the negation",
                           L.compare, "return self.boolean(same)",
                           "return self.boolean(not same)"),),
    "lt 1-3": (Mutant.edit("< as >", "two INTEGERs compare with >", L.lt, "operator.lt",
                           "operator.gt"),),
    "le 1-3": (Mutant.edit("<= as >=", "two INTEGERs compare with >=", L.le, "operator.le",
                           "operator.ge"),),
}


def rule_queries(rule: Rule) -> list[Query]:
    """z3's question on `rule` under the spec's profile and the seed's, each expecting the
    row's stated verdict (unsat: sound; sat: a witness)."""
    out = []
    for profile, errata in (("spec", NO_ERRATA), ("crucible@8d2680a2", seed_errata())):
        pool, syms = pool_with_symbols(errata)
        cases = [(args, apply(pool, rule.constructor, args))
                 for args in rule.instances(pool, syms)]
        expected = rule.expected(errata)
        out.append(Query(f"{rule.name} under {profile}: {expected}",
                         differs_formula(rule.constructor, cases),
                         expect="unsat" if expected == "proved" else "sat", rlimit=RLIMIT,
                         logic=LOGIC))
    return out


def _statement(rule: Rule) -> str:
    verdict = ("sound under both profiles" if rule.expected(seed_errata()) == "proved" else
               f"sound under the spec's profile; Crucible's breaks it ({rule.seed})")
    return (f"ExprPool's {rule.constructor} rule {rule.rule} ({rule.statement}) keeps the "
            f"meaning of its left-hand side over the mathematical integers on its family: "
            f"{verdict}.")


def _register(index: int, rule: Rule) -> None:
    z3_obligation(f"PO14.{FIRST_ID + index}", _statement(rule), covers=("expr.canon",),
                  subject=rule, mutants=MUTANTS[rule.name], timeout_s=120.0)(rule_queries)


for _i, _rule in enumerate(RULES):
    _register(_i, _rule)


def flag_queries(_subject) -> list[Query]:
    """Per profile: no node any rule's instances make carries a flag its meaning breaks. Under
    Crucible's, the rows of a divisor that may be zero are asked apart, for the witnesses of
    E14.504 and E14.505 (MOD(x, 0), MOD(y, x) and MODULAR_INDEXING(7, 4, x) flagged
    non-negative)."""
    out = []
    for profile, errata in (("spec", NO_ERRATA), ("crucible@8d2680a2", seed_errata())):
        pool, syms = pool_with_symbols(errata)
        broken = [r for r in RULES if r.seed in (E14_504, E14_505) and r.seed in errata]
        for rules, label, expect in (([r for r in RULES if r not in broken], "", "unsat"),
                                     (broken, " over a divisor that may be zero (E14.504, "
                                              "E14.505)", "sat")):
            cases = [(args, apply(pool, rule.constructor, args))
                     for rule in rules for args in rule.instances(pool, syms)]
            if cases:
                out.append(Query(f"flags under {profile}{label}", flags_formula(cases),
                                 expect=expect, rlimit=RLIMIT))
    return out


@z3_obligation(
    "PO14.597",
    "Every node ExprPool's rules make on their families (results and their children, under "
    "both profiles) carries only sign, zero and parity flags that hold of its meaning, its "
    "symbols within their declared ranges: FLOOR_DIV is non-negative only over a non-negative "
    "dividend and a positive divisor, MOD and MODULAR_INDEXING are never negative; MOD by "
    "a divisor that may be zero and MODULAR_INDEXING by a modulus that may be zero are not "
    "flagged non-negative (Crucible's are: E14.504, E14.505).",
    covers=("expr.canon",),
    subject=DivideMixin.floor_div_node,
    mutants=(
        Mutant.edit("non-negative over a zero divisor", "FLOOR_DIV is flagged non-negative "
                    "over a non-negative divisor", D.floor_div_node,
                    "rhs.flags & ExprFlags.IS_POSITIVE", "rhs.flags & ExprFlags.IS_NONNEGATIVE"),
        Mutant.edit("MOD positive", "a MOD node is flagged positive", D.mod, "0x0021", "0x0029"),
        Mutant.edit("MOD by zero non-negative", "the spec flags MOD(l, 0) non-negative as the "
                    "seed does", D.mod, "(lhs, rhs), ExprFlags.IS_INTEGER)", "(lhs, rhs), 0x0021)"),
        Mutant.edit("MOD by a maybe-zero divisor non-negative", "a MOD node is flagged "
                    "non-negative whatever its divisor's sign flags", D.mod,
                    "0x0021 if self.nonzero(rhs) else ExprFlags.IS_INTEGER", "0x0021"),
        Mutant.edit("MODULAR_INDEXING by a maybe-zero modulus non-negative", "a "
                    "MODULAR_INDEXING node is flagged non-negative whatever its modulus's sign "
                    "flags", D.index_flags, "0x0021 if self.nonzero(m) else ExprFlags.IS_INTEGER",
                    "0x0021"),
    ),
    timeout_s=240.0,
)
def flags_hold(subject):
    return flag_queries(subject)
