"""Reference implementation: SympleX."""
