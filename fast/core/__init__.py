"""Fast paths shared by both backends: shared by every system."""
