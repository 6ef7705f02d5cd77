"""The signed policy bundle: contracts, vocabulary and policies, verified before use.

A bundle is a folder of YAML files plus ``bundle.sig.json``: the SHA-256 of every file and an
Ed25519 signature over that manifest. Loading recomputes the hashes and checks the signature
with the public key the caller trusts (by default the one shipped with intently); a changed or
missing file, or a bad signature, refuses to load (:class:`PolicyError`). Only the signed files
are ever read, so another file in the folder (an editor's backup, notes) has no effect.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..core import yaml12
from ..core.errors import PolicyError
from ..log import canonical_json, key_id_of
from ._contracts import ContractSet
from ._policy import PolicySet
from ._vocabulary import Vocabulary

__all__ = ["BUNDLE_FILES", "Bundle", "default_public_key", "load_private_key", "load_public_key", "sign_bundle"]

BUNDLE_FILES = ("contracts.yaml", "policies.yaml", "sandbox.yaml", "vocabulary.yaml")
SIGNATURE_FILE = "bundle.sig.json"


def _data_dir() -> Path:
    return Path(str(resources.files("intently.gate") / "data"))


def default_public_key() -> Ed25519PublicKey:
    raw = (_data_dir() / "bundle-public-key.txt").read_text(encoding="utf-8").strip()
    return Ed25519PublicKey.from_public_bytes(base64.b64decode(raw))


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A public key file: PEM, or the base64 of the 32 raw bytes."""
    from cryptography.hazmat.primitives import serialization  # here: the hook's path never reads a key file

    data = path.read_bytes()
    try:
        if data.lstrip().startswith(b"-----"):
            key = serialization.load_pem_public_key(data)
        else:
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(data.strip()))
    except ValueError as exc:
        raise PolicyError(f"{path}: not an Ed25519 public key ({exc})") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise PolicyError(f"{path}: bundle keys must be Ed25519")
    return key


def load_private_key(path: Path) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization  # here: the hook's path never signs a bundle

    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except ValueError as exc:
        raise PolicyError(f"{path}: not a PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise PolicyError(f"{path}: bundle keys must be Ed25519")
    return key


def _manifest(folder: Path) -> dict[str, Any]:
    files = {}
    for name in BUNDLE_FILES:
        path = folder / name
        if not path.exists():
            raise PolicyError(f"{path}: bundle file missing")
        files[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {"format": "intently-gate-bundle/1", "files": files}


def sign_bundle(folder: Path, key: Ed25519PrivateKey) -> Path:
    """Write ``bundle.sig.json`` for the files in ``folder``."""
    manifest = _manifest(folder)
    signature = key.sign(canonical_json(manifest))
    doc = {**manifest, "key_id": key_id_of(key.public_key()), "signature": base64.b64encode(signature).decode()}
    out = folder / SIGNATURE_FILE
    out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out


def _yaml(path: Path) -> Mapping[str, Any]:
    try:
        # A key given twice is refused, not read as its last value: a policy that says two
        # things about one rule is not one a person signed knowingly (fail closed).
        data = yaml12.load(path.read_text(encoding="utf-8"), unique_keys=True)
    except yaml12.YamlError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise PolicyError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc
    if not isinstance(data, Mapping):
        raise PolicyError(f"{path}: must hold a mapping")
    return data


@dataclass(frozen=True)
class Bundle:
    """A verified bundle, parsed."""

    folder: Path
    digest: str
    key_id: str
    vocabulary: Vocabulary
    contracts: ContractSet
    policies: PolicySet
    sandbox: Mapping[str, Any]

    @property
    def version(self) -> str:
        return f"gate-bundle@{self.digest[:16]}"

    @classmethod
    def load(cls, folder: Path | None = None, *, public_key: Ed25519PublicKey | None = None) -> Bundle:
        """Verify, then parse. ``folder`` defaults to the bundle shipped with intently."""
        folder = Path(folder) if folder is not None else _data_dir()
        key = public_key or default_public_key()
        sig_path = folder / SIGNATURE_FILE
        try:
            doc = json.loads(sig_path.read_text(encoding="utf-8"))
            claimed = {"format": doc["format"], "files": doc["files"]}
            signature = base64.b64decode(doc["signature"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PolicyError(f"{sig_path}: missing or malformed bundle signature ({exc})") from exc
        actual = _manifest(folder)
        if claimed != actual:
            changed = sorted(n for n in BUNDLE_FILES if claimed["files"].get(n) != actual["files"][n])
            raise PolicyError(f"{folder}: bundle files changed since signing: {', '.join(changed) or 'manifest'}")
        try:
            key.verify(signature, canonical_json(actual))
        except InvalidSignature as exc:
            raise PolicyError(f"{sig_path}: bundle signature does not verify with key {key_id_of(key)}") from exc
        vocab = Vocabulary.from_data(_yaml(folder / "vocabulary.yaml"), where=str(folder / "vocabulary.yaml"))
        contracts = ContractSet(_yaml(folder / "contracts.yaml"), vocab, where=str(folder / "contracts.yaml"))
        policies = PolicySet(_yaml(folder / "policies.yaml"), where=str(folder / "policies.yaml"))
        sandbox = _yaml(folder / "sandbox.yaml")
        digest = hashlib.sha256(canonical_json(actual)).hexdigest()
        return cls(folder, digest, key_id_of(key), vocab, contracts, policies, sandbox)


_DEFAULT: Bundle | None = None
_DEFAULT_LOCK = threading.Lock()


def default_bundle() -> Bundle:
    """The shipped bundle, verified once per process (the server asks from several threads)."""
    global _DEFAULT
    if _DEFAULT is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = Bundle.load()
    return _DEFAULT
