"""Proof obligations (z3, model checks, properties, contracts), their mutants and the runner."""
