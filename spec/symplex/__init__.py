"""Spec: SympleX."""
