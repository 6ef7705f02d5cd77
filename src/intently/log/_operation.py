"""One operation of the log and its canonical bytes (RFC 8785 JSON)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _jstr
from typing import Any

import rfc8785

from ..core.errors import InvalidInput, LeafMismatch, SequenceGap

__all__ = ["Operation", "canonical_json", "canonical_operation", "parse_payload", "policy_version"]

# For strings, JCS serialisation equals the stdlib's ``encode_basestring`` (what json.dumps
# uses with ensure_ascii=False): only '"', '\\' and U+0000..U+001F are escaped, the five
# short forms where JSON has them and lower-case \u00xx otherwise. The C function is ~15x
# faster than json.dumps; tests/log property-tests the equality against rfc8785.


def canonical_json(value: Any, *, where: str = "payload") -> bytes:
    """RFC 8785 (JCS) canonical JSON bytes; values JCS cannot represent are :class:`InvalidInput`."""
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeError) as exc:
        raise InvalidInput(f"not representable as canonical JSON: {exc}", where=where) from exc


_SAFE_INT = 2**53 - 1


def _jcs_number(text: str) -> int | float:
    # JCS writes a double with an integral value as digits ("1e+21" aside), so 2.0**60 is
    # stored as "1152921504606846976". Outside the safe-integer range such digits can only
    # have come from a double, and reading them back as one keeps the round trip exact.
    value = int(text)
    return value if -_SAFE_INT <= value <= _SAFE_INT else float(text)


def parse_payload(text: str) -> Any:
    """Parse canonical payload text so that ``canonical_json(parse_payload(t)) == t``."""
    return json.loads(text, parse_int=_jcs_number)


def canonical_operation(
    stream: str,
    seq: int,
    id: str,
    time: str,
    actor: str,
    op: str,
    target: str,
    payload_json: str,
    policy_version: str,
) -> bytes:
    """The leaf data of an operation from its stored fields, without parsing the payload.

    Keys are in RFC 8785 order (UTF-16 code-unit order, all ASCII here). ``payload_json`` is
    embedded verbatim: it was canonicalised when appended, and any later change to it changes
    the leaf. Raises :class:`UnicodeEncodeError` for text that is not valid Unicode (a lone
    surrogate), which verification reports as a leaf mismatch.
    """
    return (
        f'{{"actor":{_jstr(actor)},"id":{_jstr(id)},"namespace":{_jstr(stream)},'
        f'"op":{_jstr(op)},"payload":{payload_json},"policy_version":{_jstr(policy_version)},'
        f'"seq":{int(seq)},"target":{_jstr(target)},"time":{_jstr(time)}}}'
    ).encode()


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
        return canonical_operation(
            self.stream,
            self.seq,
            self.id,
            self.time,
            self.actor,
            self.op,
            self.target,
            self.payload_json,
            self.policy_version,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.stream,
            "seq": self.seq,
            "id": self.id,
            "time": self.time,
            "actor": self.actor,
            "op": self.op,
            "target": self.target,
            "payload": parse_payload(self.payload_json),
            "policy_version": self.policy_version,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Operation:
        """An operation from its stored row. A payload that is no longer JSON can only come
        from tampering, and is reported as :class:`LeafMismatch` at its place; so is a sequence
        number that is not a whole number (SQLite keeps text or bytes there), as
        :class:`SequenceGap`: the row is at no place in the stream."""
        if not isinstance(row["seq"], int):
            raise SequenceGap(
                "a stored row's sequence number is not a whole number (written behind the log's back); "
                "`intently log verify` names it, `intently log repair` sets it aside",
                stream=str(row["stream"]),
            )
        try:
            payload = parse_payload(str(row["payload"]))
        except json.JSONDecodeError as exc:
            raise LeafMismatch(
                f"stored payload is not JSON: {exc}", stream=str(row["stream"]), seq=int(row["seq"])
            ) from exc
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
            payload=payload,
        )


def policy_version(component: str, version: str, config: Mapping[str, Any] | None = None) -> str:
    """``component@version#hash`` where hash covers the configuration that shaped the decision."""
    digest = hashlib.sha256(canonical_json(dict(config or {}))).hexdigest()[:16]
    return f"{component}@{version}#{digest}"
