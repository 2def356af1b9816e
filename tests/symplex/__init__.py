"""Tests: SympleX."""
