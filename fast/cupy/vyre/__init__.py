"""Fast paths shared by both backends: vyre."""
