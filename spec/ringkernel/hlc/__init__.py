"""Spec: RingKernel's hybrid logical clock."""
