"""Rebuilding state from the log.

Each engine registers, for every op type it appends, an *applier* that redoes the state
change from the operation alone (or ``None`` for an op that records and changes nothing).
``replay`` copies a verified log into a fresh store and applies every operation, so the
log is proven to carry enough to rebuild state: an op type without an applier fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.errors import InvalidInput, LogIntegrityError
from ..store import Transaction
from ._operation import Operation

if TYPE_CHECKING:  # registering an applier must not load the log itself (signing keys, cryptography)
    from ._oplog import OperationLog

__all__ = ["Applier", "register_applier", "registered_appliers", "replay"]

Applier = Callable[[Transaction, Operation], None]

_APPLIERS: dict[str, Applier | None] = {}


def register_applier(op: str, applier: Applier | None) -> None:
    """Declare how to rebuild the state change of ``op``; ``None`` marks a record-only op."""
    _APPLIERS[op] = applier


def registered_appliers() -> dict[str, Applier | None]:
    return dict(_APPLIERS)


def replay(
    source: OperationLog,
    target: OperationLog,
    *,
    streams: list[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Verify ``source``, then copy and apply each of its operations into ``target``'s store.

    Returns the number of operations replayed. The target must be empty for those streams.
    ``progress(n)`` is called as the work advances: once per block of operations verified,
    then once per batch applied, so a caller can show a bar over twice the log's size
    (a replay of a million operations takes minutes and would otherwise look hung).
    """
    report = source.verify(streams, progress=progress)
    if not report.ok:
        bad = next(s for s in report.streams if not s.ok)
        raise LogIntegrityError(f"source log does not verify: {bad.error}", stream=bad.stream, seq=bad.bad_seq)
    count = 0
    for stream in streams or source.streams():
        if target.size(stream):
            raise InvalidInput(f"target already holds stream {stream!r}; replay into a fresh store", where=stream)
        batch: list[Operation] = []
        for operation, _leaf in source.iter_stream(stream):
            if operation.op not in _APPLIERS:
                raise LogIntegrityError(
                    f"no applier registered for op {operation.op!r}; cannot rebuild its state",
                    stream=stream,
                    seq=operation.seq,
                )
            batch.append(operation)
            if len(batch) >= 1000:
                count += _applied(_apply_batch(target, batch), progress)
                batch = []
        count += _applied(_apply_batch(target, batch), progress)
    target.checkpoint()
    return count


def _applied(n: int, progress: Callable[[int], None] | None) -> int:
    if progress is not None and n:
        progress(n)
    return n


def _apply_batch(target: OperationLog, batch: list[Operation]) -> int:
    if not batch:
        return 0
    with target.store.transaction(write=True) as tx:
        for operation in batch:
            target.copy_operation(tx, operation)
            applier = _APPLIERS[operation.op]
            if applier is not None:
                applier(tx, operation)
    return len(batch)


# Rotating the signing key changes no table; the keyring itself is tracked beside the log.
register_applier("KEY_ROTATED", None)
# Adopting unsigned operations into a checkpoint records who vouched for them; no table changes.
register_applier("LOG_ADOPTED", None)
# A repair sets operations aside and records it; the state tables are left as they were
# (docs/log.md says why), so replaying the record changes nothing either.
register_applier("LOG_QUARANTINED", None)
register_applier("LOG_REPAIRED", None)
