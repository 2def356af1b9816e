"""Reference implementation: SympleX's e-graph."""
