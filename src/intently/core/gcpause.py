"""Pausing Python's cyclic garbage collector around work that makes many objects and no cycles.

Building a context block at 2,000 rules allocates hundreds of thousands of containers: the
rules loaded from the parse cache (a model, its scope, lists and dicts each), their vectors,
BM25 tokens, scores and the decisions of every pack. They all live until the block is built
and none of them is cyclic garbage: reference counting frees them when the call returns. The
cyclic collector does not know that; every few hundred allocations it scans the young objects,
promotes them, and twice per block rescanned the whole grown heap. That was 0.22-0.29 s of
the 2.5-3.3 s of CPU an ``intently context`` process took (measured with ``gc.callbacks``),
0.06 s with the collector paused around the block. The standing-intent index build had the
same cost (about three times its own work) and pauses it the same way.

The collector is one switch for the whole process, and a server builds blocks on several
threads at once, so a pause is counted: the collector is off while any pause is open and is
turned back on when the last one closes (even when the work raised), and only if it was on
when the first one opened. A caller that turned it off itself keeps it off. Nothing is lost
by a pause: cyclic garbage made meanwhile is collected at the next collection after it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]

_lock = threading.Lock()
_open = 0  # pauses open now, over every thread
_restore = False  # whether the collector was on when the first of them opened


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off for the ``with`` block (or the decorated call); see the module."""
    global _open, _restore
    with _lock:
        if _open == 0:
            _restore = gc.isenabled()
            gc.disable()
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0 and _restore:
                gc.enable()
