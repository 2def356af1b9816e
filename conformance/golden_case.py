"""One golden case: a request and the answer the real code gives, shared by the golden
modules of each chapter."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One request and the answer the real code gives (wire JSON)."""

    op: str
    args: dict
    result: dict
    note: str = ""
