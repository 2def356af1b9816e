"""`bench --tools`: the commands a user waits on, timed as a user runs them, against their goals.

1. Inputs: synthetic .crtrace files written once into a temporary folder: two mlp traces of
   `oracle_ops` ops, the second with one op's schema hash flipped three fifths of the way in
   (its region's hash and plan change), and one mlp trace of `analyze_ops` ops.
2. Each command runs as its own process (`python -m crucible_spec ...`: start-up and file
   loading included, its output discarded), `runs` times in turn, the commands interleaved so
   a burst of load on a shared machine falls on both; a row keeps every time and their median.
3. A command that exits other than as it should (oracle trace: 1, the traces differ;
   analyze: 0) is marked failed.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .commands.console import render as render_table
from .commands.console import table
from .spec.crucible.crtrace import HEADER_SIZE
from .synthetic_file import file_chunks

ORACLE_OPS, ORACLE_GOAL_S = 100_000, 3.0
ANALYZE_OPS, ANALYZE_GOAL_S = 1_000_000, 5.0
RECORD_BYTES = 80
"""A .crtrace op record's size; the schema hash is its first 8 bytes."""


@dataclass
class ToolRow:
    """One command: what it ran on, its goal, every run's seconds, and whether each exited as
    it should."""

    name: str
    ops: int
    goal_s: float
    expect: int
    argv: list[str]
    times: list[float] = field(default_factory=list)
    failed: bool = False

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def within_goal(self) -> bool:
        return not self.failed and self.median_s is not None and self.median_s < self.goal_s


def write_trace(path: Path, num_ops: int, flip_at: int | None = None) -> None:
    """Step 1: a synthetic mlp trace, with op flip_at's schema hash's low bit flipped."""
    with path.open("wb") as out:
        for chunk in file_chunks(num_ops):
            out.write(chunk)
    if flip_at is not None:
        with path.open("r+b") as out:
            out.seek(HEADER_SIZE + flip_at * RECORD_BYTES)
            low = out.read(1)[0]
            out.seek(-1, 1)
            out.write(bytes([low ^ 1]))


def tool_rows(folder: Path, oracle_ops: int = ORACLE_OPS,
              analyze_ops: int = ANALYZE_OPS) -> list[ToolRow]:
    """Step 1 into `folder`, and the rows to time."""
    a, b, big = folder / "a.crtrace", folder / "b.crtrace", folder / "big.crtrace"
    write_trace(a, oracle_ops)
    write_trace(b, oracle_ops, flip_at=oracle_ops * 3 // 5)
    write_trace(big, analyze_ops)
    return [ToolRow("oracle trace", oracle_ops, ORACLE_GOAL_S, 1,
                    ["oracle", "trace", str(a), str(b)]),
            ToolRow("analyze", analyze_ops, ANALYZE_GOAL_S, 0, ["analyze", str(big)])]


def time_command(argv: list[str]) -> tuple[float, int]:
    """Step 2: one run of `python -m crucible_spec ARGV`, output discarded: (seconds, exit)."""
    start = time.perf_counter()
    code = subprocess.run([sys.executable, "-m", "crucible_spec", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return time.perf_counter() - start, code


def time_tools(runs: int, progress: Callable[[str], None] | None = None,
               oracle_ops: int = ORACLE_OPS, analyze_ops: int = ANALYZE_OPS) -> list[ToolRow]:
    """Steps 1-3: every command `runs` times, interleaved."""
    with tempfile.TemporaryDirectory() as tmp:
        if progress:
            progress("tools: writing the synthetic traces")
        rows = tool_rows(Path(tmp), oracle_ops, analyze_ops)
        for k in range(runs):
            for r in rows:
                if progress:
                    progress(f"tools: {r.name} run {k + 1} of {runs}")
                seconds, code = time_command(r.argv)
                r.times.append(seconds)
                r.failed |= code != r.expect
    return rows


def render_tools(rows: list[ToolRow]) -> str:
    header = ["command", "ops", "goal", "median", "runs", "verdict"]
    body = [[r.name, str(r.ops), f"< {r.goal_s:.1f} s",
             "-" if r.median_s is None else f"{r.median_s:.2f} s",
             ", ".join(f"{t:.2f}" for t in r.times),
             "FAILED" if r.failed else "ok" if r.within_goal else "over goal"] for r in rows]
    return render_table(table(header, body, right=["ops", "median"]))


def tools_json(rows: list[ToolRow]) -> list[dict]:
    return [{"command": r.name, "ops": r.ops, "goal_s": r.goal_s, "times_s": r.times,
             "median_s": r.median_s, "failed": r.failed, "within_goal": r.within_goal}
            for r in rows]
