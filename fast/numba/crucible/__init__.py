"""Fast paths shared by both backends: Crucible."""
