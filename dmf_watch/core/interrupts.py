"""A run that is told to stop (SIGTERM from `timeout`, systemd or an operator; SIGINT; its own
deadline) stops like a failed run, not like a killed one.

The signal becomes an exception in the main thread, so every `finally` on the way out runs: the
warehouse lock is released, the failure alert is sent, the line is printed and logged. Why an
exception and not an exit: a process that dies holding the lock, or leaves a child holding it, is
what blocked the next morning. dbt treats a KeyboardInterrupt as "cancel the running statements
and stop", so RunInterrupted is one. A deadline uses the same path through SIGALRM.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

# What the user reads of each stage when a run stops in it: what became of the day.
AFTERMATH = {
    "upgrade": "the marts of an earlier release were being rebuilt for this one and nothing was loaded; the next "
    "run rebuilds them again first",
    "load": "the load was not finished and nothing of it is used; the next run completes or discards what it "
    "stored and fetches again",
    "build": "the build was not finished; the marts stay as the last complete build left them and the next run "
    "builds again",
    "enrich": "the day was built and its verdict stands; `dmf report --as-of D` renders its report",
    "report": "the day was built and its verdict stands; `dmf report --as-of D` renders its report",
    "notify": "the day was built and reported; `dmf notify --as-of D` sends what was not sent",
    "backup": "the day was built, reported and sent; its backup was not finished and the next accepted run takes one",
}


class RunInterrupted(KeyboardInterrupt):
    """The run was told to stop; `cause` says by what, `stage` where it was."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause
        self.stage: str | None = None
        self.day: str | None = None
        # What the run had been waiting for when it stopped, when that was long enough to matter
        # ("PostgreSQL db1:5432/dmf, which had not answered for 40 s (...)"): the server to check.
        self.waiting_for: str | None = None

    def sentence(self, day: str | None = None) -> str:
        day = self.day or day
        where = f" during the {self.stage}" + (f" of {day}" if day else "") if self.stage else ""
        waiting = f" while waiting for {self.waiting_for}" if self.waiting_for else ""
        after = AFTERMATH.get(self.stage or "", "nothing was left half-done")
        return (
            f"stopped by {self.cause}{where}{waiting}; "
            f"{after.replace('--as-of D', f'--as-of {day}' if day else '--as-of D')}."
        )


_state = threading.local()


def _raise(cause: str) -> None:
    if getattr(_state, "deferring", False):
        _state.deferred = cause
        return
    raise RunInterrupted(cause)


@contextmanager
def interruptible(deadline_s: float) -> Iterator[None]:
    """SIGTERM, SIGINT and (when `deadline_s` > 0) the run's deadline raise RunInterrupted in
    this block; the previous handlers come back after it. Main thread only (signals are)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(number: int, frame: FrameType | None) -> None:
        _raise(signal.Signals(number).name)

    def on_deadline(number: int, frame: FrameType | None) -> None:
        _raise(f"its deadline (DMF_RUN_DEADLINE_S = {deadline_s:g} s)")

    previous = {number: signal.signal(number, on_signal) for number in (signal.SIGTERM, signal.SIGINT)}
    previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, on_deadline)
    if deadline_s > 0:
        signal.setitimer(signal.ITIMER_REAL, deadline_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def deferred_interruptions() -> Iterator[None]:
    """A signal that arrives in this block waits until it ends (the failure alert of a stopped
    run must get out whole); one that waited is raised then."""
    outer = getattr(_state, "deferring", False)
    _state.deferring = True
    try:
        yield
    finally:
        _state.deferring = outer
        cause = getattr(_state, "deferred", None)
        if not outer and cause is not None:
            _state.deferred = None
            raise RunInterrupted(cause)


def hold(stopped: RunInterrupted) -> None:
    """Keep an interruption caught where stopping at once would lose the attempt (the fetch
    records itself as failed first); `raise_held` raises it once that is written."""
    _state.held = stopped


def raise_held() -> None:
    stopped = getattr(_state, "held", None)
    if stopped is not None:
        _state.held = None
        raise stopped
