"""Spec: Crucible's ExprPool (symbolic expressions)."""
