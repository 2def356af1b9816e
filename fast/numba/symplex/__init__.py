"""Fast paths shared by both backends: SympleX."""
