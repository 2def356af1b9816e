"""Tests: Crucible's ExprPool (symbolic expressions)."""
