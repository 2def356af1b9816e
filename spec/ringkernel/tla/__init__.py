"""Spec: RingKernel's TLA+ models."""
