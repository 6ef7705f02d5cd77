"""The one exception tree of intently.

Every failure a caller can act on is an :class:`IntentlyError`, so a CLI, a hook or a
server denies or reports by catching one class. Backend errors (sqlite3, psycopg,
cel, ...) are translated at the boundary and chained with ``from``.

- IntentlyError
  - InvalidInput              bad input; names the place (file:line, field or id)
  - NotFound                  no such object, or one the caller may not see
  - PermissionDenied          the caller may see the object but not do this
  - InvalidTransition         a lifecycle move the state machine does not draw
  - ConflictError             a versioned write lost a race; retry with fresh state
  - PolicyError               a policy or bundle that cannot be loaded (fails closed)
  - StoreError                the database cannot be used as asked
    - SchemaTooNew            the database was written by a newer intently
  - LogIntegrityError         the operation log does not verify
    - LeafMismatch            a stored operation does not hash to its recorded leaf
    - SequenceGap             sequence numbers skip, repeat or run out of order
    - RootMismatch            a checkpoint's root is not the tree's root at that size
    - BadSignature            a checkpoint signature does not verify
    - UnknownKey              a checkpoint names a key the keyring does not hold
    - UnattributedOperation   an operation carries no valid signature of a signing key
    - RolledBack              the database holds fewer operations than a witnessed checkpoint
    - StaleCheckpoint         a checkpoint older than the witnessed one was put back
    - ProofError              an inclusion or consistency proof does not verify
    - TableMismatch           a table built from the log says something the log does not
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "BadSignature",
    "ConflictError",
    "IntentlyError",
    "InvalidInput",
    "InvalidTransition",
    "LeafMismatch",
    "LogIntegrityError",
    "NotFound",
    "PermissionDenied",
    "PolicyError",
    "ProofError",
    "RolledBack",
    "RootMismatch",
    "SchemaTooNew",
    "SequenceGap",
    "StaleCheckpoint",
    "StoreError",
    "TableMismatch",
    "UnattributedOperation",
    "UnknownKey",
    "first_problem",
]


def first_problem(exc: ValidationError) -> tuple[str, str]:
    """The dotted field path and the message of a pydantic error's first problem.

    Bad input reports one place at a time (``where``, then what is wrong there); every edge
    that validates with pydantic turns its error into that pair the same way.
    """
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]), first["msg"]


class IntentlyError(Exception):
    """Root of every error intently raises on purpose."""

    exit_code = 1


class InvalidInput(IntentlyError):
    """Input that does not validate. ``where`` names the place: ``file:line``, a field or an id."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class NotFound(IntentlyError):
    """No such object, or one the caller may not read (the two are indistinguishable on purpose)."""

    exit_code = 3


class PermissionDenied(IntentlyError):
    """The caller can see the object but lacks the permission for this action."""

    exit_code = 4


class InvalidTransition(IntentlyError):
    """A lifecycle move the state machine does not allow; names both states."""

    exit_code = 2

    def __init__(self, kind: str, current: str, requested: str, *, detail: str = "") -> None:
        self.current = current
        self.requested = requested
        msg = f"{kind} cannot move from {current} to {requested}"
        super().__init__(f"{msg}: {detail}" if detail else msg)


class ConflictError(IntentlyError):
    """A versioned write found a newer version than the one it was based on."""

    exit_code = 5


class PolicyError(IntentlyError):
    """A policy, contract or bundle that cannot be loaded or evaluated. Callers must deny."""

    exit_code = 6


class StoreError(IntentlyError):
    """The database cannot be opened, upgraded or written as asked."""

    exit_code = 7


class SchemaTooNew(StoreError):
    """The database was written by a newer intently; it is left untouched."""


class LogIntegrityError(IntentlyError):
    """The operation log fails verification. ``stream`` and ``seq`` name the first bad place."""

    exit_code = 8

    def __init__(self, message: str, *, stream: str | None = None, seq: int | None = None) -> None:
        self.stream = stream
        self.seq = seq
        where = ""
        if stream is not None:
            where = f"stream {stream!r}"
            if seq is not None:
                where += f" at seq {seq}"
            where += ": "
        super().__init__(where + message)


class LeafMismatch(LogIntegrityError):
    """A stored operation no longer hashes to its recorded leaf."""


class SequenceGap(LogIntegrityError):
    """Sequence numbers are missing, repeated or out of order."""


class RootMismatch(LogIntegrityError):
    """A checkpoint's root hash differs from the tree recomputed at its size."""


class BadSignature(LogIntegrityError):
    """A checkpoint signature does not verify under its key."""


class UnknownKey(LogIntegrityError):
    """A checkpoint names a key id that the public keyring does not hold."""


class UnattributedOperation(LogIntegrityError):
    """An operation no checkpoint covers carries no signature of a signing key: it was written
    behind the log's back (or by a process holding no key), so no checkpoint signs it unless
    someone adopts it on purpose (``intently log checkpoint --adopt``)."""


class RolledBack(LogIntegrityError):
    """The database holds fewer operations than a checkpoint witnessed outside it."""


class StaleCheckpoint(LogIntegrityError):
    """The newest checkpoint in the database is older than the witnessed one."""


class ProofError(LogIntegrityError):
    """An inclusion or consistency proof does not verify."""


class TableMismatch(LogIntegrityError):
    """A table derived from the log (say, the gate's decisions) differs from the operations it
    was built from: it was changed outside the log. ``intently log replay`` rebuilds it."""
