"""A transient rich progress bar for emulator runs longer than a second (the CLI's, and opt-in
from Python with `progress=True`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich loads when a bar is shown (start-up of the commands: docs/performance.md)
    from rich.console import Console

PROGRESS_DELAY = 1.0  # seconds a run lasts before its progress bar appears


class RunProgress:
    """A transient progress bar on stderr for a run that lasts longer than PROGRESS_DELAY seconds.

    A timer shows the bar, so it appears even while the first batch of workgroups runs;
    `callback` is emulate's progress= (done, total after each batch), None when not enabled."""

    def __init__(self, total: int, console: Console, enabled: bool = True):
        self.console = console
        self.total, self.done = total, 0
        self.lock = threading.Lock()
        self.bar: Any = None
        self.task: Any = None
        self.closed = False
        self.timer: threading.Timer | None = None
        if enabled:
            self.timer = threading.Timer(PROGRESS_DELAY, self._show)
            self.timer.daemon = True
            self.timer.start()

    @property
    def callback(self) -> Callable[[int, int], None] | None:
        return self.update if self.timer is not None else None

    def _show(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with self.lock:
            if self.closed:
                return
            self.bar = Progress(
                TextColumn("workgroups"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self.task = self.bar.add_task("run", total=self.total, completed=self.done)
            self.bar.start()

    def update(self, done: int, total: int) -> None:
        with self.lock:
            self.done, self.total = done, total
            if self.bar is not None:
                self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            self.closed = True
            if self.bar is not None:
                self.bar.stop()
                self.bar = None

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
