"""Reference for fx.may_create: the three context structs of Effects.h written out as their
member lists; a token may be made where a context has a member of its type."""

from __future__ import annotations

from ...spec.core.registry import reference

CONTEXT_MEMBERS = [[], ["alloc", "io"], ["alloc", "io", "block"], ["alloc", "io", "block"]]
"""No context, Init, Bg, Test (the wire's ordinals)."""
TOKENS = ["alloc", "io", "block"]


@reference("fx.may_create")
def may_create(context: int, token: int) -> dict:
    held = TOKENS[token] in CONTEXT_MEMBERS[context]
    pure = not CONTEXT_MEMBERS[context]
    return {"allowed": held, "held": held, "pure": pure,
            "why": 0 if held else 1 if pure else 2}
