"""Spec: SympleX's e-graph."""
