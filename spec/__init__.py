"""Normative definitions: layouts, enums, constants, hash functions, protocol machines,
invariants, op declarations, profiles and errata. Imports nothing else of this project."""
