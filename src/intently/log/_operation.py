"""One operation of the log and its canonical bytes (RFC 8785 JSON)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import rfc8785

__all__ = ["Operation", "canonical_json", "policy_version"]


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) canonical JSON bytes."""
    return rfc8785.dumps(value)


def _jstr(text: str) -> str:
    # For strings, JCS serialisation equals json.dumps with ensure_ascii=False: only '"', '\\'
    # and control characters are escaped, with lower-case hex (checked in tests/log).
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Operation:
    """A state change as the log records it. ``stream`` is the namespace it belongs to."""

    stream: str
    seq: int
    id: str
    time: str
    actor: str
    op: str
    target: str
    payload_json: str
    policy_version: str
    payload: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def canonical(self) -> bytes:
        """The leaf data: the operation as RFC 8785 canonical JSON.

        Built by string assembly over the already-canonical payload text, because verifying
        a million operations must not re-canonicalise each payload; tests check it equals
        ``canonical_json(self.to_json())`` byte for byte.
        """
        return (
            f'{{"actor":{_jstr(self.actor)},"id":{_jstr(self.id)},"namespace":{_jstr(self.stream)},'
            f'"op":{_jstr(self.op)},"payload":{self.payload_json},"policy_version":{_jstr(self.policy_version)},'
            f'"seq":{int(self.seq)},"target":{_jstr(self.target)},"time":{_jstr(self.time)}}}'
        ).encode()

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.stream,
            "seq": self.seq,
            "id": self.id,
            "time": self.time,
            "actor": self.actor,
            "op": self.op,
            "target": self.target,
            "payload": json.loads(self.payload_json),
            "policy_version": self.policy_version,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Operation:
        return cls(
            stream=str(row["stream"]),
            seq=int(row["seq"]),
            id=str(row["id"]),
            time=str(row["time"]),
            actor=str(row["actor"]),
            op=str(row["op"]),
            target=str(row["target"]),
            payload_json=str(row["payload"]),
            policy_version=str(row["policy_version"]),
            payload=json.loads(str(row["payload"])),
        )


def policy_version(component: str, version: str, config: Mapping[str, Any] | None = None) -> str:
    """``component@version#hash`` where hash covers the configuration that shaped the decision."""
    digest = hashlib.sha256(canonical_json(dict(config or {}))).hexdigest()[:16]
    return f"{component}@{version}#{digest}"
