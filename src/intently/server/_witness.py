"""When a running server brings the tracked witness file up to its checkpoints.

Every write request is signed into the database's checkpoints before it answers, as every
CLI command's is. The witness file (``.intently/checkpoints.json``, tracked in git) used to
be rewritten with it, at every request: a second write transaction and a read, merge and
rewrite of the file per request, every worker taking turns on it, and the project's git
tree shown modified all the time a console was open. Its use is to be committed, so that
git history holds the checkpoints; a request-by-request copy adds nothing to that.

So the server leaves the file alone at each request, as the MCP server and the Claude Code
hooks do, and catches it up itself: every ``interval`` seconds when a checkpoint was
signed since the last catch-up, and once more at shutdown. ``interval=0`` keeps the file
written at every request. What guards against a rolled-back database is unchanged: the
first append of a process to a stream still checks the witnessed checkpoint under the write
lock, and a catch-up that finds the database disagreeing with the file keeps the file's
entry as evidence and says so on stderr (``intently log verify`` names it), as a request
that found it would have failed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from starlette.concurrency import run_in_threadpool

from .._intently import Intently
from ..core.errors import IntentlyError

__all__ = ["DEFAULT_WITNESS_INTERVAL", "WitnessKeeper"]

#: Seconds between catch-ups: the file lags the database by at most this much while serving.
DEFAULT_WITNESS_INTERVAL = 60.0


class WitnessKeeper:
    """Catches the witness file up with the checkpoints of the home ``ix`` opened."""

    def __init__(self, ix: Intently, interval: float) -> None:
        if interval < 0:
            raise ValueError("the witness interval is a number of seconds, 0 or more")
        self.ix = ix
        self.interval = interval
        # The latest checkpoint of each stream the file was last brought up to ({} at start,
        # so the first catch-up also writes what others left behind, as a CLI command would).
        self._written: dict[str, tuple[int, str]] = {}
        if interval > 0:
            ix.log.witness_on_checkpoint = False

    def catch_up(self) -> bool:
        """Write the witness when a checkpoint was signed since the last time; whether it tried.

        A database the file disowns (rolled back, rewritten) is reported, never hidden: the
        file keeps its entry and the reason goes to stderr at every catch-up until mended.
        """
        if self.ix.log.witness_path is None:
            return False
        latest = {s: (cp.size, cp.root.hex()) for s, cp in self.ix.log.latest_checkpoints().items()}
        if not latest or latest == self._written:
            return False
        try:
            self.ix.log.write_witness()
        except IntentlyError as exc:
            sys.stderr.write(f"intently serve: the witness file was not updated: {exc}\n")
            return True
        self._written = latest
        return True

    @asynccontextmanager
    async def running(self, app: Any) -> AsyncIterator[None]:
        """The app's lifespan: catch up every ``interval`` seconds, and at shutdown."""
        if self.interval <= 0:
            yield
            return
        task = asyncio.create_task(self._every_interval())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            await run_in_threadpool(self._last)

    async def _every_interval(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await run_in_threadpool(self.catch_up)
            except Exception as exc:  # a store gone away: say so, try again at the next tick
                sys.stderr.write(f"intently serve: the witness file was not updated: {exc}\n")

    def _last(self) -> None:
        """At shutdown: sign what is still unsigned, then bring the file up to it."""
        try:
            self.ix.checkpoint()
            self.catch_up()
        except IntentlyError as exc:
            sys.stderr.write(f"intently serve: the witness file was not updated at shutdown: {exc}\n")
