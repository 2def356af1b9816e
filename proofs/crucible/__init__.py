"""Proof obligations: Crucible."""
