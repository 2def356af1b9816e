"""Spec: RingKernel."""
