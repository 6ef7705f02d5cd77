"""The signed bundle: verified at load; a tampered, extra-signed or unsigned bundle refuses to load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from intently.core.errors import PolicyError
from intently.gate import Bundle, Gate, default_bundle, sign_bundle


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dest = tmp_path / "bundle"
    shutil.copytree(default_bundle().folder, dest)
    return dest


def test_the_shipped_bundle_verifies() -> None:
    b = Bundle.load()
    assert b.version.startswith("gate-bundle@")
    ids = [r.id for r in b.policies.rules]
    assert "read-only" in ids and ids[-1] == "requested-action"


def test_a_tampered_policy_file_refuses_to_load(copy: Path) -> None:
    policies = copy / "policies.yaml"
    policies.write_text(policies.read_text().replace("decision: block", "decision: allow", 1))
    with pytest.raises(PolicyError, match=r"changed since signing: policies\.yaml"):
        Bundle.load(copy)


def test_resigning_with_another_key_is_not_enough(copy: Path) -> None:
    (copy / "vocabulary.yaml").write_text((copy / "vocabulary.yaml").read_text() + "\n# edited\n")
    mallory = Ed25519PrivateKey.generate()
    sign_bundle(copy, mallory)
    with pytest.raises(PolicyError, match="signature does not verify"):
        Bundle.load(copy)  # the shipped public key does not know mallory
    own = Bundle.load(copy, public_key=mallory.public_key())  # an operator who trusts that key
    assert own.digest != default_bundle().digest
    assert Gate.from_tools([], bundle=own).bundle is own


def test_a_missing_signature_refuses_to_load(copy: Path) -> None:
    (copy / "bundle.sig.json").unlink()
    with pytest.raises(PolicyError, match="missing or malformed bundle signature"):
        Bundle.load(copy)


def test_a_signed_but_broken_rule_names_its_place(copy: Path) -> None:
    policies = copy / "policies.yaml"
    policies.write_text(policies.read_text().replace("when: content_secret", "when: content_secret ==== 1", 1))
    key = Ed25519PrivateKey.generate()
    sign_bundle(copy, key)
    with pytest.raises(PolicyError, match=r"policies\.yaml: rules\[1\] \(secret-exposure\): cannot parse"):
        Bundle.load(copy, public_key=key.public_key())


def test_a_signed_rule_that_says_two_things_is_refused_naming_its_line(copy: Path) -> None:
    """libyaml keeps the last of two values for one key: a signed rule saying ``decision: block``
    and then ``decision: allow`` loaded as an allow. A key given twice is refused (fail closed)."""
    policies = copy / "policies.yaml"
    text = policies.read_text()
    policies.write_text(text.replace("    decision: block\n", "    decision: block\n    decision: allow\n", 1))
    line = text.splitlines().index("    decision: block") + 2  # the second one, 1-based
    key = Ed25519PrivateKey.generate()
    sign_bundle(copy, key)
    with pytest.raises(PolicyError, match=rf"policies\.yaml:{line}: not valid YAML \(found a duplicate key\)"):
        Bundle.load(copy, public_key=key.public_key())
