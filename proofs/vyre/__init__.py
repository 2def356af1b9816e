"""Proof obligations: vyre."""
