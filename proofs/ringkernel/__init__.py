"""Proof obligations: RingKernel."""
