"""Terminal output shared by the subcommands, through rich: tables, and progress that is a bar
on a terminal and one line per finished item in a log (so a CI log shows where a long run is).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

QUIET = False
"""Set by `--quiet`: no progress, neither bars nor per-item lines."""


def _console(stderr: bool = False) -> Console:
    """A console on the current sys.stdout (or stderr): colours and bars on a terminal only; a
    log gets plain text of unlimited width, so no row is wrapped or cut."""
    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    return Console(file=stream, force_terminal=tty, no_color=not tty, highlight=False,
                   soft_wrap=not tty, width=None if tty else 10_000)


def table(columns: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None,
          right: Sequence[str] = ()) -> Table:
    """A table of `rows` under `columns`; the columns named in `right` are right-aligned."""
    t = Table(*[], title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False,
              show_edge=False)
    for name in columns:
        t.add_column(name, justify="right" if name in right else "left", overflow="fold")
    for row in rows:
        t.add_row(*(str(cell) for cell in row))
    return t


def render(renderable) -> str:
    """The text of a table (or any rich renderable) as it prints to a log: no colour, no wrap,
    trailing spaces stripped."""
    c = Console(width=10_000, no_color=True, force_terminal=False, highlight=False)
    with c.capture() as captured:
        c.print(renderable)
    return "\n".join(line.rstrip() for line in captured.get().splitlines())


def print_table(columns: Sequence[str], rows: Sequence[Sequence[object]],
                title: str | None = None, right: Sequence[str] = ()) -> None:
    """Print a table on stdout: boxed with colour on a terminal, plain and unwrapped in a log."""
    if sys.stdout.isatty():
        _console().print(table(columns, rows, title, right))
    else:
        print(render(table(columns, rows, title, right)))


class Steps:
    """Progress through `total` items: `step(text)` after each one finishes."""

    def __init__(self, bar: Progress | None, task: int | None, label: str, total: int) -> None:
        self.bar, self.task, self.label, self.total, self.done = bar, task, label, total, 0

    def step(self, text: str = "") -> None:
        """One more item finished; `text` names it (and its outcome)."""
        self.done += 1
        if QUIET:
            return
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=f"{self.label} {text}"[:60])
        else:
            print(f"[{self.done}/{self.total}] {text}", file=sys.stderr, flush=True)

    def reach(self, done: float, text: str = "") -> None:
        """`done` of the items are finished: a bar moves to it (a log is not told)."""
        self.done = done
        if self.bar is not None and not QUIET:
            self.bar.update(self.task, completed=done, description=f"{self.label} {text}"[:60])

    def note(self, text: str) -> None:
        """A message about the run that is not one finished item (shown unless quiet)."""
        if QUIET:
            return
        if self.bar is not None:
            self.bar.console.print(text, markup=False)
        else:
            print(text, file=sys.stderr, flush=True)


@contextmanager
def steps(label: str, total: int) -> Iterator[Steps]:
    """Progress on stderr for `total` items: a transient bar on a terminal, else one line per
    finished item; nothing with --quiet."""
    if QUIET or not sys.stderr.isatty():
        yield Steps(None, None, label, total)
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=_console(stderr=True), transient=True) as bar:
        yield Steps(bar, bar.add_task(label, total=total), label, total)


@contextmanager
def messages(label: str) -> Iterator[Callable[[str], None]]:
    """Progress told as messages ("[3/40] PO8.2 proved"): a transient line that changes on a
    terminal, else each message on a line of its own on stderr; nothing with --quiet."""
    if QUIET:
        yield lambda text: None
        return
    if not sys.stderr.isatty():
        yield lambda text: print(text, file=sys.stderr, flush=True) if text else None
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=_console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda text: bar.update(task, description=f"{label} {text}"[:100])
