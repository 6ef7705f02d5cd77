"""Signed checkpoints (tree heads), in the spirit of C2SP tlog-checkpoint, and the tracked
witness file that holds the latest one per database and stream.

The signed body is plain text, one item a line, so a person can read what was signed:
origin, stream, tree size, base64 root hash, time.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import InvalidInput

__all__ = ["LEGACY_DATABASE", "Checkpoint", "Witness"]


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    stream: str
    size: int
    root: bytes
    time: str
    key_id: str
    signature: bytes

    @staticmethod
    def body(origin: str, stream: str, size: int, root: bytes, time: str) -> bytes:
        return f"{origin}\n{stream}\n{size}\n{base64.b64encode(root).decode()}\n{time}\n".encode()

    def signed_body(self) -> bytes:
        return self.body(self.origin, self.stream, self.size, self.root, self.time)

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "stream": self.stream,
            "size": self.size,
            "root": self.root.hex(),
            "time": self.time,
            "key_id": self.key_id,
            "signature": base64.b64encode(self.signature).decode(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoint:
        return cls(
            origin=str(data["origin"]),
            stream=str(data["stream"]),
            size=int(data["size"]),
            root=bytes.fromhex(str(data["root"])),
            time=str(data["time"]),
            key_id=str(data["key_id"]),
            signature=_signature_bytes(data["signature"]),
        )


def _signature_bytes(text: object) -> bytes:
    """Strict base64. Text that does not decode becomes an empty signature, which can never
    verify: the checkpoint then fails as a :class:`BadSignature` where it is checked, instead
    of the whole file failing to load."""
    try:
        return base64.b64decode(str(text), validate=True)
    except (binascii.Error, ValueError):
        return b""


WITNESS_FORMAT = 2
LEGACY_DATABASE = "legacy"


@dataclass
class Witness:
    """The tracked witness file: the latest checkpoint per database and stream.

    Every clone of a project has its own database (``state/`` is ignored by git) but shares
    this one file, so entries are keyed by the database's id: a clone updates only its own
    entry and keeps everyone else's verbatim. On disk each database is three lines that name
    it (key, checkpoints, closing line), every entry ends with a comma and a fixed
    ``"format"`` key closes the object, so two clones committing the file at the same time
    merge cleanly line by line in git. The whole file is still plain JSON.

    Format 1 (``{"streams": {...}}``, before databases had ids) is read as the entries of an
    unnamed database, :data:`LEGACY_DATABASE`.
    """

    databases: dict[str, dict[str, Checkpoint]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, where: str) -> Witness:
        """Parse the file's text; errors name the file and the entry."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            merged = cls._parse_union(text, where)
            if merged is None:
                raise InvalidInput(f"witness file unreadable: {exc}", where=where) from exc
            return merged
        try:
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            out = cls()
            if "streams" in data:  # format 1
                out.databases[LEGACY_DATABASE] = _streams(data["streams"], where)
            for key, entry in data.items():
                if not key.startswith("db:"):
                    continue
                db = key[3:]
                if not db or entry.get("database") != db:
                    raise ValueError(f"entry {key!r} names database {entry.get('database')!r}")
                out.databases[db] = _streams(entry["streams"], f"{where}: {key}")
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"witness file unreadable: {exc}", where=where) from exc
        return out

    @classmethod
    def _parse_union(cls, text: str, where: str) -> Witness | None:
        """Read what a union merge makes of one database's entry changed on two branches.

        The same machine checkpointing on two branches changes the same streams line both
        ways; ``merge=union`` keeps both lines, one after the other, which is no longer JSON.
        Both are checkpoints of the one database, so the larger is the later and is kept; the
        next checkpoint writes the file clean again. Any other damage returns ``None``.
        """
        out = cls()
        current: str | None = None
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if line in ("{", "}", "") or line.startswith('"format"'):
                continue
            try:
                if line.startswith('"db:') and line.endswith('{"streams":'):
                    current = json.loads(line[: line.index('": {"streams":') + 1])[3:]
                    out.databases.setdefault(str(current), {})
                elif line.startswith('"database":') and current is not None:
                    if json.loads(line[len('"database":') : -2]) != current:
                        return None
                    current = None
                elif current is not None and line.endswith(","):
                    for stream, cp in _streams(json.loads(line[:-1]), f"{where}:{number}").items():
                        held = out.databases[current].get(stream)
                        if held is None or cp.size > held.size:
                            out.databases[current][stream] = cp
                else:
                    return None
            except (json.JSONDecodeError, KeyError, ValueError, TypeError, AttributeError, InvalidInput):
                return None
        return out if current is None and out.databases else None

    def render(self) -> str:
        lines = ["{"]
        for db in sorted(self.databases):
            streams = {s: cp.to_json() for s, cp in sorted(self.databases[db].items())}
            if not streams:
                continue
            lines.append(f'{json.dumps("db:" + db)}: {{"streams":')
            lines.append(json.dumps(streams, sort_keys=True) + ",")
            lines.append(f'"database": {json.dumps(db)}}},')
        lines.append(f'"format": {WITNESS_FORMAT}')
        lines.append("}")
        return "\n".join(lines) + "\n"


def _streams(data: object, where: str) -> dict[str, Checkpoint]:
    if not isinstance(data, dict):
        raise TypeError(f"{where}: streams is not an object")
    out = {str(s): Checkpoint.from_json(cp) for s, cp in data.items()}
    for stream, cp in out.items():
        if cp.stream != stream:
            raise InvalidInput(f"entry names stream {cp.stream!r}", where=f"{where}: {stream}")
    return out
