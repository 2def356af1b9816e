"""Spec: RingKernel's kernel-to-kernel (K2K) messaging."""
