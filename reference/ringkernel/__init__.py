"""Reference implementation: RingKernel."""
