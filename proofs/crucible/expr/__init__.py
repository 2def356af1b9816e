"""Proof obligations: Crucible's ExprPool (symbolic expressions)."""
