"""Time-ordered identifiers (UUIDv7, RFC 9562).

Time order keeps B-tree inserts local and lets ids sort like the log; the random tail keeps
them unguessable. The stdlib gains ``uuid7`` only in 3.14, hence this small implementation.
"""

from __future__ import annotations

import os
import threading
import uuid
from datetime import datetime

__all__ = ["new_id", "uuid7"]

_lock = threading.Lock()
_last_ms = 0
_last_seq = 0


def uuid7(now: datetime | None = None) -> uuid.UUID:
    """A UUIDv7 for ``now`` (or the wall clock), monotonic within this process."""
    global _last_ms, _last_seq
    ms = _wall_ms() if now is None else int(now.timestamp() * 1000)
    with _lock:
        if ms <= _last_ms:
            ms = _last_ms
            _last_seq += 1
            if _last_seq > 0xFFF:
                ms += 1
                _last_seq = 0
        else:
            _last_seq = int.from_bytes(os.urandom(2), "big") & 0x3FF
        _last_ms = ms
        seq = _last_seq
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= seq << 64
    value |= 0b10 << 62
    value |= rand_b
    return uuid.UUID(int=value)


def _wall_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def new_id(prefix: str = "", now: datetime | None = None) -> str:
    """A UUIDv7 string, optionally prefixed (``"run-" + uuid``)."""
    return f"{prefix}{uuid7(now)}"
