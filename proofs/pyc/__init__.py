"""Proof obligations: PyC."""
