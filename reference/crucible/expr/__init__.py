"""Reference implementation: Crucible's ExprPool (symbolic expressions)."""
