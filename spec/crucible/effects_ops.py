"""Chapter 15: `fx.may_create`, the effect system's friend table on the wire.

1. The context and the token are named (`pure`, `init`, `bg`, `test`; `alloc`, `io`,
   `block`).
2. The answer is whether the context may create the token, whether it holds the token as a
   member (CanAlloc / CanIO / CanBlock), whether it is Pure, and why (`friend`; a Pure
   context can create nothing; otherwise the token does not name it a friend).
"""

from __future__ import annotations

from ..core.errata import SEEDS, erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, Field, record
from ..core.strategies import st
from ..pyc.wire import Named
from .effects import (
    CONTEXT_NAMES,
    TOKEN_NAMES,
    WHY,
    Context,
    Token,
    holds,
    is_pure,
    may_create,
    why,
)

EFFECTS = "pure"
CONTEXT = Named(CONTEXT_NAMES, "fx context")
TOKEN = Named(TOKEN_NAMES, "fx token")


def may_create_op(context: int, token: int) -> dict:
    """Steps 1-2."""
    c, t = Context(context), Token(token)
    return {"allowed": may_create(c, t), "held": t in holds(c), "pure": is_pure(c),
            "why": WHY.index(why(c, t))}


def fx_edges() -> list[dict]:
    """Every context against every token, as wire names."""
    return [{"context": c, "token": t} for c in CONTEXT_NAMES for t in TOKEN_NAMES]


declare(
    "fx.may_create", chapter=15,
    summary="Whether an fx context may create a capability token (its friend list), holds it, "
            "and is Pure.",
    args=record(context=Field(CONTEXT, "where the code runs; pure: no context"),
                token=Field(TOKEN, "the capability token")),
    result=record(allowed=Field(BOOL, "the token names the context a friend"),
                  held=Field(BOOL, "the context holds a member of the token's type"),
                  pure=Field(BOOL, "the context satisfies fx::Pure"),
                  why=Field(Named(WHY, "reason"), "why it is allowed or not")),
    spec=(may_create, holds, is_pure, why, may_create_op),
    domain=lambda: st.fixed_dictionaries({"context": CONTEXT.strategy(),
                                          "token": TOKEN.strategy()}),
    edges=fx_edges,
    invalid=(InvalidCase("an unknown context", lambda: st.just(
                 {"context": "fg", "token": "alloc"}), code="bad_request"),
             InvalidCase("an unknown token", lambda: st.just(
                 {"context": "bg", "token": "gpu"}), code="bad_request")),
    not_applicable={"numba": "a table of twelve entries: nothing to compute per item",
                    "cupy": "a table of twelve entries: nothing to spread over a device"},
)

erratum(
    "E15.1", "Effects.h says tokens are taken by const reference; every API takes them by value",
    seed=SEEDS["crucible"], location="include/crucible/Effects.h, the header comment",
    ops=("fx.may_create",),
    witness={"code": "void* Arena::alloc(fx::Alloc, size_t) and every allocating API take the "
                     "token by value (an empty type, elided when inlined)",
             "documents": "functions that perform side effects take the relevant token by "
                          "const reference"},
    flag="doc",
    detail="The same header, a few lines later, explains that the tokens are passed by value "
           "so the compiler can elide them. The spec follows the code: holding a token is "
           "the permission, however it is passed.",
)
