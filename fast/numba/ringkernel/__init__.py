"""Fast paths shared by both backends: RingKernel."""
