"""Fast paths shared by both backends: PyC."""
