"""Ed25519 signing keys for log checkpoints.

The private key stays in the home's ignored ``keys/private/`` (one per machine: every
clone that joins a project makes its own); the public keyring ``keys/public.json`` is
tracked and lists every machine's keys, and each entry records when the key signed its first and
last checkpoint, so a rotated key keeps its old checkpoints verifiable by anyone.
Unlike a shared HMAC secret, verifying needs no secret at all.

The keyring is one JSON object with one line per key (``"key:<id>": {...},``) closed by a
fixed ``"format"`` line, like the witness file. Two clones that join at the same time both add
a line at the same place; the home's ``.gitattributes`` marks the file ``merge=union``, so git
keeps both lines and the result is still valid JSON. Format 1 (``{"keys": [...]}``) is read too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..core.errors import BadSignature, InvalidInput, UnknownKey
from ..core.files import atomic_write

__all__ = ["OPERATION_SIGNATURE_PREFIX", "PUBLIC_RING_FORMAT", "KeyRing", "PublicKeyEntry", "key_id_of"]

PUBLIC_RING_FORMAT = 2

#: Prefix of what an operation's own signature covers (its 32-byte leaf hash follows), so a
#: signature over an operation can never be taken for a checkpoint's, nor the other way round.
OPERATION_SIGNATURE_PREFIX = b"intently operation v1\n"


def _merge_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """One key's line changed on two branches and kept twice by a union merge: one entry
    whose signed range covers both (earliest first checkpoint, latest last one, retired if
    either side retired it)."""
    out: dict[str, object] = {}
    for name, value in pairs:
        held = out.get(name)
        if name.startswith("key:") and isinstance(held, dict) and isinstance(value, dict):
            merged = dict(held)
            for field_name, pick in (("first_signed", min), ("last_signed", max), ("retired", min)):
                both = [v for v in (held.get(field_name), value.get(field_name)) if v is not None]
                merged[field_name] = pick(both) if both else None
            sizes = [v for v in (held.get("signed_sizes"), value.get("signed_sizes")) if isinstance(v, dict)]
            if sizes:  # the larger bound of each stream: both sides are the one machine's signing
                merged["signed_sizes"] = {s: max(d.get(s, 0) for d in sizes) for d in sizes for s in d}
            roots: list[tuple[dict[str, Any], dict[str, Any]]] = [
                (sz, rt)
                for sz, rt in ((side.get("signed_sizes"), side.get("signed_roots")) for side in (held, value))
                if isinstance(sz, dict) and isinstance(rt, dict)
            ]
            if roots:  # each stream's root from the side that recorded the larger bound (its size's root)
                merged["signed_roots"] = {
                    s: max((sz.get(s, 0), rt[s]) for sz, rt in roots if s in rt)[1] for _, rt in roots for s in rt
                }
            out[name] = merged
        else:
            out[name] = value
    return out


#: The DER of an Ed25519 private key in PKCS #8 (RFC 8410, section 7) before its 32 raw bytes:
#: what :meth:`KeyRing.save` writes, and ``openssl genpkey -algorithm ed25519`` too.
_PKCS8_ED25519_PREFIX = bytes.fromhex("302e020100300506032b657004220420")


def load_private_pem(data: bytes) -> object:
    """The private key in a PEM file, as ``serialization.load_pem_private_key`` (no password)
    reads it. Every command that appends to the log reads the signing key, the Claude Code
    hook on each tool call too, and importing ``serialization`` (SSH, PKCS #12 and cipher
    modules with it) cost that process more than the key's use. So the one form intently
    writes, an unencrypted PKCS #8 Ed25519 key, is read here from its fixed RFC 8410 layout,
    and anything else (another algorithm, an encrypted or damaged file) goes to ``serialization``
    as before, with its errors."""
    lines = data.strip().splitlines()
    if len(lines) >= 3 and lines[0] == b"-----BEGIN PRIVATE KEY-----" and lines[-1] == b"-----END PRIVATE KEY-----":
        try:
            der = base64.b64decode(b"".join(lines[1:-1]), validate=True)
        except ValueError:
            der = b""
        if len(der) == len(_PKCS8_ED25519_PREFIX) + 32 and der.startswith(_PKCS8_ED25519_PREFIX):
            return Ed25519PrivateKey.from_private_bytes(der[len(_PKCS8_ED25519_PREFIX) :])
    from cryptography.hazmat.primitives import serialization

    return serialization.load_pem_private_key(data, password=None)


def key_id_of(public: Ed25519PublicKey) -> str:
    """First 16 hex digits of SHA-256 over the raw 32-byte public key."""
    raw = public.public_bytes_raw()
    return hashlib.sha256(raw).hexdigest()[:16]


@dataclass
class PublicKeyEntry:
    key_id: str
    public_key: Ed25519PublicKey
    created: str
    first_signed: str | None = None
    last_signed: str | None = None
    retired: str | None = None
    #: Per stream, the largest tree size this key had signed when it was retired (recorded by
    #: rotation). A key is rotated because it may have leaked, and a leaked key can sign any
    #: date it likes: a checkpoint's own date cannot show it was made after the retirement,
    #: but a tree larger than the key ever signed can. ``None``: not retired, or retired
    #: before this was recorded (then only the date is checked).
    signed_sizes: dict[str, int] | None = None
    #: Per stream, the hex root of the tree this key last signed (at ``signed_sizes``), recorded
    #: by rotation. The size alone left a leaked key free to sign a *different* tree of a size it
    #: had signed: the root pins what it signed. ``None``: retired before roots were recorded
    #: (then only the date and the size are checked).
    signed_roots: dict[str, str] | None = None

    def to_json(self) -> dict[str, object]:
        raw = self.public_key.public_bytes_raw()
        out: dict[str, object] = {
            "key_id": self.key_id,
            "algorithm": "ed25519",
            "public_key": base64.b64encode(raw).decode(),
            "created": self.created,
            "first_signed": self.first_signed,
            "last_signed": self.last_signed,
            "retired": self.retired,
        }
        if self.signed_sizes is not None:  # only retired keys: other keys' lines stay as they were
            out["signed_sizes"] = dict(sorted(self.signed_sizes.items()))
        if self.signed_roots is not None:
            out["signed_roots"] = dict(sorted(self.signed_roots.items()))
        return out

    def last_signed_head(self, stream: str) -> tuple[int, bytes] | None:
        """The tree head (size, root) this retired key last signed in ``stream``, when its
        rotation recorded one: everything it may vouch for in that stream is this tree or a
        prefix of it."""
        if self.retired is None or self.signed_sizes is None or self.signed_roots is None:
            return None
        root = self.signed_roots.get(stream)
        if root is None:
            return None
        return self.signed_sizes.get(stream, 0), bytes.fromhex(root)

    def head_problem(self, stream: str, size: int, root: bytes, *, proven: bool) -> str | None:
        """Why this retired key's checkpoint of ``stream`` at (``size``, ``root``) is not one it
        signed before its retirement, judged by its recorded last head, or ``None``.

        At the head's size the root must be the recorded one. Below it the checkpoint must be a
        prefix of the head, which only a consistency proof or the log's own leaves can show:
        ``proven`` says the caller has shown it (or checks it against the log); otherwise the
        checkpoint is refused, naming what would bind it."""
        head = self.last_signed_head(stream)
        if head is None or size > head[0]:
            return None  # no root recorded, or ``signed_beyond`` refuses it
        if size == head[0]:
            if root == head[1]:
                return None
            return (
                f"key {self.key_id} was retired having signed stream {stream!r} at size {size} with root "
                f"{head[1].hex()} (keys/public.json), not this tree (a retired key may have leaked)"
            )
        if proven:
            return None
        return (
            f"key {self.key_id} is retired: offline, keys/public.json binds only the last tree it signed of "
            f"stream {stream!r} (size {head[0]}), and nothing shows this tree of size {size} is a prefix of it "
            f"(a retired key may have leaked); check it against the log (`intently log verify`) or with a "
            f"consistency proof to size {head[0]} (`intently log consistency {size} {head[0]}`, then "
            "`intently log verify-proof`)"
        )

    def signed_beyond(self, stream: str, size: int) -> str | None:
        """Why a signature of this key over ``stream`` at ``size`` cannot be its own from
        before its retirement, or ``None`` when the recorded bound allows it."""
        if self.retired is None or self.signed_sizes is None:
            return None
        bound = self.signed_sizes.get(stream, 0)
        if size <= bound:
            return None
        return (
            f"key {self.key_id} was retired at {self.retired} having signed stream {stream!r} up to size {bound}, "
            f"so it cannot have signed size {size} (a retired key may have leaked: its date is not evidence)"
        )


class KeyRing:
    """Public keys by id, plus (where this home holds it) the current private key."""

    def __init__(self, entries: list[PublicKeyEntry], private: Ed25519PrivateKey | None = None) -> None:
        self.entries = {e.key_id: e for e in entries}
        self._private = private
        #: (the private key, its id): the id is asked at every append, and derived once per key.
        self._key_id_cache: tuple[Ed25519PrivateKey, str] | None = None
        # Why a private key on disk was not loaded (damaged, wrong type), for the unsigned warning.
        self.private_problem: str | None = None

    # -- loading --------------------------------------------------------------

    @classmethod
    def load_public(cls, path: Path) -> KeyRing:
        """The tracked keyring alone: enough to verify, not to sign."""
        if not path.exists():
            return cls([])
        try:
            data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_merge_duplicate_keys)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"not JSON: {exc}", where=str(path)) from exc
        if not isinstance(data, dict):
            raise InvalidInput("not a JSON object", where=str(path))
        items = [(f"keys[{i}]", item) for i, item in enumerate(data.get("keys", []))]  # format 1
        items += [(key, item) for key, item in data.items() if key.startswith("key:")]
        entries = []
        for where, item in items:
            if not isinstance(item, dict):
                raise InvalidInput("a key entry must be an object", where=f"{path}: {where}")
            if item.get("algorithm") != "ed25519":
                raise InvalidInput(f"unsupported algorithm {item.get('algorithm')!r}", where=f"{path}: {where}")
            try:
                public = Ed25519PublicKey.from_public_bytes(base64.b64decode(item["public_key"]))
            except (ValueError, KeyError) as exc:
                raise InvalidInput(f"bad public key: {exc}", where=f"{path}: {where}") from exc
            if key_id_of(public) != item.get("key_id") or (
                where.startswith("key:") and where != f"key:{item['key_id']}"
            ):
                raise InvalidInput("key_id does not match the public key", where=f"{path}: {where}")
            entries.append(
                PublicKeyEntry(
                    item["key_id"],
                    public,
                    item.get("created", ""),
                    item.get("first_signed"),
                    item.get("last_signed"),
                    item.get("retired"),
                    _signed_sizes(item.get("signed_sizes"), f"{path}: {where}"),
                    _signed_roots(item.get("signed_roots"), f"{path}: {where}"),
                )
            )
        return cls(entries)

    @classmethod
    def load(cls, keys_dir: Path) -> KeyRing:
        ring = cls.load_public(keys_dir / "public.json")
        private_path = keys_dir / "private" / "log-ed25519.pem"
        if private_path.exists():
            # A damaged key must not lock the home: reading and verifying need only public keys.
            # Writes go on unsigned, with this problem named on every command that appends.
            try:
                loaded = load_private_pem(private_path.read_bytes())
            except (OSError, ValueError, TypeError, UnsupportedAlgorithm) as exc:
                ring.private_problem = f"the signing key {private_path} cannot be read ({_first_line(exc)})"
                return ring
            if not isinstance(loaded, Ed25519PrivateKey):
                ring.private_problem = f"the signing key {private_path} is not an Ed25519 key"
                return ring
            ring._private = loaded
        return ring

    def save(self, keys_dir: Path) -> None:
        keys_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(keys_dir / "public.json", self.render_public())
        if self._private is not None:
            private_dir = keys_dir / "private"
            private_dir.mkdir(parents=True, exist_ok=True)
            os.chmod(private_dir, 0o700)
            from cryptography.hazmat.primitives import serialization

            pem = self._private.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            path = private_dir / "log-ed25519.pem"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(pem)

    def render_public(self) -> str:
        """The tracked keyring: one line per key, oldest first, then the closing format line."""
        lines = ["{"]
        for entry in sorted(self.entries.values(), key=lambda e: (e.created, e.key_id)):
            lines.append(f"{json.dumps('key:' + entry.key_id)}: {json.dumps(entry.to_json(), sort_keys=True)},")
        lines.append(f'"format": {PUBLIC_RING_FORMAT}')
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- keys -----------------------------------------------------------------

    def generate(self, now: str) -> str:
        """Make this machine's new signing key; returns its id.

        Retires only the key this machine held (rotation). Every clone of a project signs
        its own database with its own key, all listed in the one tracked keyring, so the
        other machines' keys stay valid: on a clone that holds no private key yet this
        simply adds one (joining)."""
        if self._private is not None:
            kid = self.current_key_id
            held = self.entries.get(kid)
            if held is None:  # its public key went missing from the tracked ring (a bad merge):
                held = PublicKeyEntry(kid, self._private.public_key(), now)  # restore it, so its
                self.entries[kid] = held  # checkpoints stay verifiable
            if held.retired is None:
                held.retired = now
        self._private = Ed25519PrivateKey.generate()
        public = self._private.public_key()
        kid = key_id_of(public)
        self.entries[kid] = PublicKeyEntry(kid, public, now)
        return kid

    @property
    def can_sign(self) -> bool:
        """True when this machine holds a private key whose public key is in the keyring."""
        return self._private is not None and self.current_key_id in self.entries

    @property
    def current_key_id(self) -> str:
        if self._private is None:
            raise UnknownKey("this home holds no private signing key")
        cached = self._key_id_cache
        if cached is None or cached[0] is not self._private:
            cached = self._key_id_cache = (self._private, key_id_of(self._private.public_key()))
        return cached[1]

    def sign(self, message: bytes, now: str) -> tuple[str, bytes]:
        if self._private is None:
            raise UnknownKey("this home holds no private signing key")
        kid = self.current_key_id
        entry = self.entries[kid]
        entry.first_signed = entry.first_signed or now
        entry.last_signed = now
        return kid, self._private.sign(message)

    def sign_operation(self, leaf: bytes) -> tuple[str, bytes]:
        """Sign one operation's leaf hash as it is appended.

        A checkpoint signs the stream's tree; this signature says a holder of the key appended
        the operation itself, so a checkpoint signs only operations some key vouched for and
        rows added by someone holding only the database are never signed into history. It
        leaves the key's first/last signed dates alone: those bound its checkpoints."""
        if self._private is None:
            raise UnknownKey("this home holds no private signing key")
        return self.current_key_id, self._private.sign(OPERATION_SIGNATURE_PREFIX + leaf)

    def operation_problem(
        self, key_id: str, leaf: bytes, signature: bytes, stream: str, seq: int, time: str
    ) -> str | None:
        """Why an operation's signature does not vouch for it, or ``None`` when it does: the
        key is in the keyring, the signature verifies, and a retired key signed no operation
        past what it had signed at its retirement nor dated after it."""
        entry = self.entries.get(key_id)
        if entry is None:
            return f"signed by unknown key {key_id} (not in keys/public.json)"
        try:
            entry.public_key.verify(signature, OPERATION_SIGNATURE_PREFIX + leaf)
        except InvalidSignature:
            return f"its signature does not verify under key {key_id}"
        beyond = entry.signed_beyond(stream, seq)
        if beyond is not None:
            return beyond.replace("signed size", "signed operation")
        head = entry.last_signed_head(stream)
        if head is not None:
            # Operations are asked about only past the stream's last checkpoint, and a rotation
            # first signs with the old key every operation it vouched for, up to the recorded head:
            # one still uncovered was not signed before the retirement (a leaked key's).
            return (
                f"signed by key {key_id}, retired having signed stream {stream!r} up to size {head[0]}, "
                "whose checkpoints cover every operation it signed; this one is under none"
            )
        if entry.retired is not None and time > entry.retired:
            return f"signed by key {key_id}, which was retired at {entry.retired}, with a later date"
        return None

    def verify(
        self, key_id: str, message: bytes, signature: bytes, *, stream: str | None = None, seq: int | None = None
    ) -> None:
        """Raise :class:`UnknownKey` or :class:`BadSignature` unless ``signature`` is ``key_id``'s
        over ``message``. ``stream`` and ``seq`` (a checkpoint's size) name the place in errors."""
        entry = self.entries.get(key_id)
        if entry is None:
            raise UnknownKey(
                f"checkpoint signed by unknown key {key_id}: not in keys/public.json (a teammate's new key "
                "reaches this copy with `git pull`; a key nobody added is a forgery)",
                stream=stream,
                seq=seq,
            )
        try:
            entry.public_key.verify(signature, message)
        except InvalidSignature as exc:
            raise BadSignature(
                f"checkpoint signature does not verify under key {key_id}", stream=stream, seq=seq
            ) from exc

    def check_retirement(
        self, key_id: str, stream: str, size: int, time: str, root: bytes, *, proven: bool = False
    ) -> None:
        """Raise :class:`BadSignature` when ``key_id`` (whose signature checked) cannot have made a
        checkpoint of ``stream`` at ``size`` dated ``time`` before its retirement: dated after it,
        of a tree larger than it had signed (its date then is no evidence: it may have leaked),
        or, where its rotation recorded the root it last signed, of a tree that is not that one
        nor shown to be a prefix of it (``proven``: the caller showed that, see
        :meth:`PublicKeyEntry.head_problem`)."""
        entry = self.entries[key_id]
        beyond = entry.signed_beyond(stream, size)
        if beyond is not None:
            raise BadSignature(f"checkpoint at size {size}: {beyond}", stream=stream, seq=size)
        problem = entry.head_problem(stream, size, root, proven=proven)
        if problem is not None:
            raise BadSignature(f"checkpoint at size {size}: {problem}", stream=stream, seq=size)
        if entry.retired is not None and time > entry.retired:
            raise BadSignature(
                f"checkpoint at size {size} signed by key {key_id} after it was retired at {entry.retired}",
                stream=stream,
                seq=size,
            )


def _signed_sizes(value: object, where: str) -> dict[str, int] | None:
    """A retired key's per-stream signed sizes. Anything but an object of non-negative
    integers is refused, naming the entry: a bound that does not read must not be skipped."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value.values()
    ):
        raise InvalidInput("signed_sizes must map each stream to a tree size", where=where)
    return {str(k): int(n) for k, n in value.items()}


def _signed_roots(value: object, where: str) -> dict[str, str] | None:
    """A retired key's per-stream last signed roots: an object of 32-byte hex hashes, or refused
    naming the entry (a root that does not read must not turn the check off)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(_is_hash(r) for r in value.values()):
        raise InvalidInput("signed_roots must map each stream to a 32-byte hex root", where=where)
    return {str(k): str(r).lower() for k, r in value.items()}


def _is_hash(value: object) -> bool:
    if not isinstance(value, str) or len(value) != 64:
        return False
    try:
        bytes.fromhex(value)
    except ValueError:
        return False
    return True


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
