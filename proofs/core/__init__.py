"""Proof obligations: shared by every system."""
