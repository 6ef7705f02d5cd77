"""A snapshot of the matching index on disk, so a new process loads it instead of rebuilding.

Building the index means reading every live row and normalising every trigger: about a
minute at a million intents. A snapshot is the built index written to the home's ignored
``index/`` folder, one file per (database, namespace), and stamped with what it reflects:
the format, a fingerprint of the normaliser (its source code and every synonyms file), the
database, the namespace, the store's change sequence and a sample of rows at that
sequence. A process loads it only when all of these agree, then applies just the rows
changed since (:meth:`~intently.triggers._live.LiveIndex.sync`). Anything else (another
database at the same sequence, a newer normaliser, a truncated or edited file) is ignored
and the index is rebuilt from the store. The snapshot is a cache: the fire path still
rechecks the authoritative rows in its write transaction.

The body is :mod:`marshal` data (plain values only: loading it runs no code) behind a
BLAKE2b digest; the file is written to a temporary name and renamed into place, so a
reader sees the old snapshot or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import math
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.files import atomic_write
from ._index import MatchIndex

__all__ = ["FORMAT", "SnapshotKey", "load_snapshot", "normaliser_fingerprint", "save_snapshot", "snapshot_path"]

FORMAT = 3
_MAGIC = b"intently-trigger-index\n"
_LEN = struct.Struct(">I")
_DIGEST = 32
_RAW_FIELDS = 11  # fields of an intent row (see MatchIndex.raw_slots)
# Source files whose code decides what an index holds; any change to them invalidates snapshots.
_NORMALISER_FILES = ("_normalise.py", "_negation.py", "_terms.py", "_synonyms.py", "_index.py", "_matcher.py")

log = logging.getLogger(__name__)

Sample = list[tuple[str, int]]


@dataclass(frozen=True)
class SnapshotKey:
    """What a snapshot must agree with to be used (besides its sample of rows)."""

    fingerprint: str
    store: str
    namespace: str

    def header(self, seq: int, sample: Sample, digest: bytes) -> bytes:
        return marshal.dumps((FORMAT, self.fingerprint, self.store, self.namespace, seq, sample, digest))


@cache
def _code_digest() -> bytes:
    h = hashlib.blake2b(digest_size=_DIGEST)
    here = Path(__file__).parent
    for name in _NORMALISER_FILES:
        h.update(name.encode())
        h.update((here / name).read_bytes())
    return h.digest()


def normaliser_fingerprint(synonym_sources: Sequence[str]) -> str:
    """The normaliser's code and the bytes of every synonyms file it read, hashed."""
    h = hashlib.blake2b(_code_digest(), digest_size=_DIGEST)
    h.update(str(FORMAT).encode())
    for source in synonym_sources:
        h.update(source.encode())
        try:
            h.update(Path(source).read_bytes())
        except OSError:
            h.update(b"\0unreadable")
    return h.hexdigest()


def snapshot_path(index_dir: Path, store: str, namespace: str) -> Path:
    """One file per database and namespace; the name is a hash, so any namespace is safe."""
    name = hashlib.sha256(f"{store}\0{namespace}".encode()).hexdigest()[:24]
    return index_dir / f"triggers-{name}.snapshot"


# -- writing --------------------------------------------------------------------------------


def _dump_index(index: MatchIndex) -> bytes:
    terms, slots = index.raw_slots()
    return marshal.dumps(
        (terms, slots, index._free, index._anchors, index._single, index._pairs, index._lengths, index._df)
    )


def save_snapshot(path: Path, key: SnapshotKey, index: MatchIndex, sample: Sample) -> bool:
    """Write ``index`` (at ``index.seq``) atomically; False (and a warning) when it cannot."""
    try:
        body = _dump_index(index)
        digest = hashlib.blake2b(body, digest_size=_DIGEST).digest()
        header = key.header(index.seq, sample, digest)
        atomic_write(path, (_MAGIC + _LEN.pack(len(header)) + header, body))
    except (OSError, ValueError) as exc:
        log.warning("cannot write the trigger index snapshot %s: %s", path, exc)
        return False
    _remove_abandoned(path)
    return True


def _remove_abandoned(path: Path, older_than: float = 3600.0) -> None:
    """Temporary files a killed writer left behind (a live writer's file is recent)."""
    cutoff = time.time() - older_than
    for tmp in path.parent.glob(path.name + ".*.tmp"):
        try:
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink()
        except OSError:
            continue


# -- reading --------------------------------------------------------------------------------


def _load_index(body: bytes, seq: int) -> MatchIndex:
    """The index as written; intents stay raw rows until a turn reaches them, so loading
    costs about one :func:`marshal.loads` of the file, not one object per intent and term."""
    terms, slots, free, anchors, single, pairs, lengths, df = marshal.loads(body)
    index = MatchIndex()
    slot_of: dict[str, int] = {}
    for number, row in enumerate(slots):
        if row is None:
            continue
        if not isinstance(row, tuple) or len(row) != _RAW_FIELDS or not isinstance(row[0], str):
            raise ValueError(f"slot {number} is not an intent row")
        slot_of[row[0]] = number
    if set(free) != {i for i, s in enumerate(slots) if s is None} or set(anchors) != set(slot_of.values()):
        raise ValueError("slots and anchors disagree")
    if not all(isinstance(t, tuple) and len(t) == 3 and t[1] for t in terms):
        raise ValueError("a term row is malformed")
    index._raw_terms, index._terms = terms, [None] * len(terms)
    index._slots, index._slot_of, index._free = slots, slot_of, free
    index._anchors, index._single, index._pairs, index._lengths, index._df = anchors, single, pairs, lengths, df
    index._log_df = {k: math.log(v + 1) for k, v in df.items()}
    index.seq = seq
    return index


def load_snapshot(
    path: Path, key: SnapshotKey, current_seq: int, rows_agree: Callable[[int, Sample], bool]
) -> MatchIndex | None:
    """The snapshot's index when it matches ``key`` and the store, else None (never raises).

    ``rows_agree(seq, sample)`` asks the store whether its rows are consistent with the
    sample taken when the snapshot was written; a snapshot from after ``current_seq``
    (a database restored to an older state) is not used.
    """
    try:
        with path.open("rb") as fh:
            if fh.read(len(_MAGIC)) != _MAGIC:
                return _ignored(path, "not a snapshot")
            (size,) = _LEN.unpack(fh.read(_LEN.size))
            fmt, fingerprint, store, namespace, seq, sample, digest = marshal.loads(fh.read(size))
            if (fmt, fingerprint, store, namespace) != (FORMAT, key.fingerprint, key.store, key.namespace):
                return _ignored(path, "written for another normaliser, database or namespace")
            if not isinstance(seq, int) or seq > current_seq or not rows_agree(seq, list(sample)):
                return _ignored(path, "the store is not in the state it was taken from")
            body = fh.read()
        if hashlib.blake2b(body, digest_size=_DIGEST).digest() != digest:
            return _ignored(path, "corrupt (digest mismatch)")
        return _load_index(body, seq)
    except FileNotFoundError:
        return None
    except (OSError, EOFError, ValueError, TypeError, IndexError, KeyError, struct.error) as exc:
        return _ignored(path, f"unreadable: {exc}")


def _ignored(path: Path, why: str) -> MatchIndex | None:
    log.info("trigger index snapshot %s ignored: %s; rebuilding", path, why)
    return None
