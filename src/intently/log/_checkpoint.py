"""Signed checkpoints (tree heads), in the spirit of C2SP tlog-checkpoint.

The signed body is plain text, one item a line, so a person can read what was signed:
origin, stream, tree size, base64 root hash, time.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

__all__ = ["Checkpoint"]


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
