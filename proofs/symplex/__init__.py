"""Proof obligations: SympleX."""
