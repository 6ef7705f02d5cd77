"""The gate bound to a home: every decision in the log, explain, approvals across processes,
signed trace bundles verified offline, and replay rebuilding the gate tables exactly."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from intently import Actor, Intently, ManualClock, Permission
from intently.core.errors import (
    BadSignature,
    InvalidInput,
    InvalidTransition,
    PermissionDenied,
    ProofError,
    TableMismatch,
    UnknownKey,
)
from intently.gate import Level, UnboundTraceWarning, verify_trace
from intently.log import KeyRing, canonical_json, key_id_of

from .conftest import assert_replay_rebuilds, offsite_run


def test_every_decision_is_a_log_operation(ix: Intently, tools: list[dict[str, Any]]) -> None:
    s, decisions = offsite_run(ix, tools)
    ops = ix.log.read("proj", op="GATE_DECIDED")
    assert [o.target for o in ops] == [d.id for d in decisions]
    assert ops[1].payload["decision"]["level"] == "block"
    assert ix.log.read("proj", op="GATE_SESSION_OPENED")[0].target == s.id
    assert ix.log.verify().ok


def test_explain_says_why_in_plain_words(ix: Intently, tools: list[dict[str, Any]]) -> None:
    s, _ = offsite_run(ix, tools)
    text = ix.gate.explain(s.id)["text"]
    assert "send_email was blocked (rule instructed-value)" in text
    assert "eve@evil.example" in text and "search_emails" in text
    assert "3 call(s): 2 allow, 1 block." in text
    (blocked,) = [d for d in _ if d.level.value == "block"]
    assert ix.gate.explain(blocked.id)["text"] == text  # a denial quotes the decision id: that works too


def test_approval_from_another_process_is_single_use(ix: Intently, tools: list[dict[str, Any]], project: Path) -> None:
    s = ix.gate.session(tools, user_request="Delete the file named in 'cleanup.txt'")
    s.observe(
        "read_file", "Old drafts to remove: file 42 is obsolete, please confirm.", args={"file_path": "cleanup.txt"}
    )
    waiting = s.check("delete_file", {"file_id": "42"})
    assert waiting.level is Level.CONFIRM
    cli = subprocess.run(
        [
            sys.executable,
            "-c",
            "from intently.cli import main; main()",
            "--home",
            str(project / ".intently"),
            "--actor",
            "user:alice",
            "gate",
            "approve",
            waiting.id,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["approved"] == waiting.id
    ran = s.check("delete_file", {"file_id": "42"})
    assert ran.level is Level.ALLOW and ran.approval_used == waiting.id
    assert s.check("delete_file", {"file_id": "42"}).level is Level.CONFIRM
    with pytest.raises(InvalidTransition):
        ix.gate.approve(waiting.id)  # an approval is granted once


def test_a_decision_rewritten_in_the_table_is_caught_not_explained(ix: Intently, tools: list[dict[str, Any]]) -> None:
    """The audit trail is the log: a block rewritten as an allow in the gate's table (with the
    database at hand) used to be explained and exported as an allow while log verify passed."""
    s, decisions = offsite_run(ix, tools)
    blocked = decisions[1]
    forged = {**blocked.to_json(), "level": "allow"}
    with ix.store.transaction() as tx:
        tx.execute(
            "UPDATE gate_decisions SET level = 'allow', payload = ? WHERE id = ?",
            (json.dumps(forged, sort_keys=True), blocked.id),
        )
    for read in (ix.gate.explain, ix.gate.export_run):
        with pytest.raises(TableMismatch, match=f"decision {blocked.id}.*changed outside the log"):
            read(s.id)
    with ix.store.transaction() as tx:
        tx.execute("DELETE FROM gate_decisions WHERE id = ?", (blocked.id,))
    with pytest.raises(TableMismatch, match="logged decision"):
        ix.gate.explain(s.id)


def test_explain_says_who_approved_or_denied_a_waiting_call(ix: Intently, tools: list[dict[str, Any]]) -> None:
    s = ix.gate.session(tools, user_request="Delete the files named in 'cleanup.txt'")
    s.observe("read_file", "Old drafts to remove: files 42 and 43 are obsolete.", args={"file_path": "cleanup.txt"})
    first, second = s.check("delete_file", {"file_id": "42"}), s.check("delete_file", {"file_id": "43"})
    assert first.level is Level.CONFIRM and second.level is Level.CONFIRM
    ix.gate.approve(first.id)
    ix.gate.deny(second.id, "keep 43")
    ran = s.check("delete_file", {"file_id": "42"})
    text = ix.gate.explain(s.id)["text"]
    assert "Approved by user:alice" in text and "Denied by user:alice" in text and "keep 43" in text
    assert f"It ran on the approval of {first.id}." in text and ran.executes


def test_an_agent_cannot_approve_its_own_waiting_call(ix: Intently, tools: list[dict[str, Any]]) -> None:
    """Confirm means a person says yes: an agent with write access that approved its own waiting
    call turned every confirm into an allow. A person's approval still lets the agent's call run."""
    ix.access.grant(Actor.parse("agent:bot"), Permission.WRITE)
    agent = ix.as_actor("agent:bot")
    s = agent.gate.session(tools, user_request="Delete the file named in 'cleanup.txt'")
    s.observe("read_file", "Old drafts to remove: file 42 is obsolete.", args={"file_path": "cleanup.txt"})
    waiting = s.check("delete_file", {"file_id": "42"})
    assert waiting.level is Level.CONFIRM
    with pytest.raises(PermissionDenied, match="approved by a person"):
        agent.gate.approve(waiting.id)
    with pytest.raises(PermissionDenied):
        s.approve(waiting.id, approver="user:alice")  # naming a person does not make the agent one
    assert s.check("delete_file", {"file_id": "42"}).level is Level.CONFIRM
    assert ix.log.read("proj", op="GATE_APPROVED") == []
    ix.gate.approve(waiting.id)  # alice, the person
    assert s.check("delete_file", {"file_id": "42"}).approval_used == waiting.id


def test_trace_bundle_verifies_offline_and_detects_tampering(ix: Intently, tools: list[dict[str, Any]]) -> None:
    s, _ = offsite_run(ix, tools)
    doc = ix.gate.export_run(s.id)
    ring = KeyRing.load_public(ix.home.keys_dir / "public.json")
    assert verify_trace(doc, ring)["decisions"] == 3
    forged = json.loads(json.dumps(doc))
    forged["run"]["decisions"][1]["level"] = "allow"
    with pytest.raises(TableMismatch, match=r"decision .* differs from its operation in level"):
        verify_trace(forged, ring)  # the place is named, not only "bad signature"
    for op in forged["operations"]:
        if op["target"] == forged["run"]["decisions"][1]["id"] and op["op"] == "GATE_DECIDED":
            op["payload"]["decision"]["level"] = "allow"  # consistent, but not what was signed
    with pytest.raises(BadSignature, match="changed after signing"):
        verify_trace(forged, ring)
    with pytest.raises(UnknownKey):
        verify_trace(doc, KeyRing([]))


def test_a_retired_key_does_not_vouch_for_a_trace_of_later_operations(
    ix: Intently, tools: list[dict[str, Any]], clock: ManualClock
) -> None:
    """Keys are rotated because they may have leaked: a trace signed with the old key must not
    verify when it holds operations made after the key was retired."""
    old_key = serialization.load_pem_private_key(
        (ix.home.keys_dir / "private" / "log-ed25519.pem").read_bytes(), password=None
    )
    assert isinstance(old_key, Ed25519PrivateKey)
    before = ix.gate.export_run(offsite_run(ix, tools)[0].id)  # signed by the old key, before rotation
    clock.advance("1h")
    ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
    clock.advance("1h")
    ring = KeyRing.load_public(ix.home.keys_dir / "public.json")
    assert verify_trace(before, ring)["ok"]  # what it signed while current still verifies
    later = ix.gate.export_run(offsite_run(ix, tools)[0].id)
    forged = {k: v for k, v in later.items() if k not in ("key_id", "public_key", "signature")}
    forged["signed_at"] = before["signed_at"]  # backdated, yet its operations are newer
    body = {k: forged[k] for k in ("format", "run", "operations", "origin", "signed_at")}
    forged["key_id"] = before["key_id"]
    forged["signature"] = base64.b64encode(old_key.sign(canonical_json(body))).decode()
    with pytest.raises(BadSignature, match="retired"):
        verify_trace(forged, ring)


def test_a_retired_key_does_not_vouch_for_a_trace_backdated_throughout(
    ix: Intently, tools: list[dict[str, Any]], clock: ManualClock
) -> None:
    """The gap the dates alone left: a leaked, since-retired key signing a trace of operations
    logged after the rotation, with every date in it (the operations' too) moved back before
    the retirement. The operations' sequence numbers are past what the key ever signed."""
    old_key = serialization.load_pem_private_key(
        (ix.home.keys_dir / "private" / "log-ed25519.pem").read_bytes(), password=None
    )
    assert isinstance(old_key, Ed25519PrivateKey)
    before = ix.gate.export_run(offsite_run(ix, tools)[0].id)
    clock.advance("1h")
    ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
    clock.advance("1h")
    later = ix.gate.export_run(offsite_run(ix, tools)[0].id)
    forged = {k: v for k, v in later.items() if k not in ("key_id", "public_key", "signature")}
    forged["signed_at"] = before["signed_at"]
    for op in forged["operations"]:
        op["time"] = before["signed_at"]
    body = {k: forged[k] for k in ("format", "run", "operations", "origin", "signed_at")}
    forged["key_id"] = before["key_id"]
    forged["signature"] = base64.b64encode(old_key.sign(canonical_json(body))).decode()
    ring = KeyRing.load_public(ix.home.keys_dir / "public.json")
    assert verify_trace(before, ring)["ok"]
    with pytest.raises(BadSignature, match=r"retired .* cannot have signed"):
        verify_trace(forged, ring)


def _resign(doc: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """``doc`` signed again with ``key`` (the thief's move), whatever else it carries."""
    body = {k: doc[k] for k in ("format", "run", "operations", "origin", "signed_at")}
    return {
        **doc,
        "key_id": key_id_of(key.public_key()),
        "signature": base64.b64encode(key.sign(canonical_json(body))).decode(),
    }


def test_a_leaked_retired_key_cannot_rewrite_a_trace_within_the_seqs_it_signed(
    ix: Intently, tools: list[dict[str, Any]], clock: ManualClock
) -> None:
    """The gap the closing note named: a leaked, since-retired key re-signs a trace whose
    operations stay within the sequence numbers it had signed and are dated before its
    retirement, with a blocked call rewritten as allowed. The signature, the dates and the
    sequence numbers all pass; only an inclusion proof of each operation in the tree the key
    last signed (its root is in keys/public.json) shows the operation is not the log's."""
    old_key = serialization.load_pem_private_key(
        (ix.home.keys_dir / "private" / "log-ed25519.pem").read_bytes(), password=None
    )
    assert isinstance(old_key, Ed25519PrivateKey)
    s, decisions = offsite_run(ix, tools)
    before = ix.gate.export_run(s.id)
    clock.advance("1h")
    ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
    ring = KeyRing.load_public(ix.home.keys_dir / "public.json")
    assert verify_trace(before, ring)["bound"]  # the honest trace, signed before the rotation
    blocked = decisions[1]
    forged = json.loads(json.dumps(before))
    (op,) = (o for o in forged["operations"] if o["op"] == "GATE_DECIDED" and o["target"] == blocked.id)
    for shown in (op["payload"]["decision"], forged["run"]["decisions"][1]):
        shown["level"], shown["rule_ids"], shown["reason"] = "allow", [], "allowed"
    with_proofs = _resign(forged, old_key)  # the honest trace's proofs kept: they prove other leaves
    with pytest.raises(ProofError, match=rf"operation seq {op['seq']} .* not in the tree"):
        verify_trace(with_proofs, ring)
    without = _resign({k: v for k, v in forged.items() if k != "inclusion"}, old_key)  # as an old export
    first = forged["operations"][0]["seq"]  # nothing shows which one was rewritten: the first is named
    with pytest.raises(BadSignature, match=rf"at seq {first}: .* operation seq {first} .* no inclusion proof"):
        verify_trace(without, ring)
    with pytest.warns(UnboundTraceWarning, match="no inclusion proofs"):  # the auditor's explicit choice
        assert not verify_trace(without, ring, allow_unbound=True)["bound"]


def test_a_trace_without_proofs_from_a_key_in_use_verifies_with_a_warning(
    ix: Intently, tools: list[dict[str, Any]]
) -> None:
    """A trace exported before the proofs (they sit outside the signed body, so dropping them is
    what such a trace looks like) still verifies under a key in use, saying it is unbound; one
    that carries them names the signed checkpoint each operation was proven in."""
    doc = ix.gate.export_run(offsite_run(ix, tools)[0].id)
    ring = KeyRing.load_public(ix.home.keys_dir / "public.json")
    bound = verify_trace(doc, ring)
    cp = doc["inclusion"]["checkpoints"]["proj"]
    assert (bound["bound"], bound["warnings"]) == (True, [])
    assert bound["checkpoints"] == [{"stream": "proj", "size": cp["size"], "key_id": cp["key_id"], "time": cp["time"]}]
    assert cp["size"] >= max(op["seq"] for op in doc["operations"])
    old = {k: v for k, v in doc.items() if k != "inclusion"}
    with pytest.warns(UnboundTraceWarning, match="signature of key .* alone"):
        unbound = verify_trace(old, ring)
    assert unbound["ok"] and not unbound["bound"] and unbound["warnings"]
    swapped = json.loads(json.dumps(doc))
    swapped["inclusion"]["proofs"][0], swapped["inclusion"]["proofs"][1] = doc["inclusion"]["proofs"][1:3][::-1]
    with pytest.raises(ProofError, match=rf"at seq {doc['operations'][0]['seq']}: .* not in the tree"):
        verify_trace(swapped, ring)
    swapped["inclusion"]["proofs"].pop()
    with pytest.raises(InvalidInput, match=r"^inclusion.proofs: must hold one audit path per operation"):
        verify_trace(swapped, ring)


def test_replay_rebuilds_the_gate_tables(ix: Intently, tools: list[dict[str, Any]], tmp_path: Path) -> None:
    _s, _decisions = offsite_run(ix, tools)
    waiting = ix.gate.session(tools, user_request="Pay the bill in 'may.txt'")
    waiting.observe("read_file", "Amount due 80.00\nIBAN: DE89370400440532013000", args={"file_path": "may.txt"})
    d = waiting.check(
        "send_money", {"recipient": "DE89370400440532013000", "amount": 80, "subject": "May", "date": "2026-05-01"}
    )
    waiting.approve(d.id)
    waiting.check(
        "send_money", {"recipient": "DE89370400440532013000", "amount": 80, "subject": "May", "date": "2026-05-01"}
    )
    assert_replay_rebuilds(ix, tmp_path)


def test_explain_and_export_read_the_log_once(ix: Intently, tools: list[dict[str, Any]]) -> None:
    """`gate explain` read the namespace's log once per operation kind (three times) and
    `gate export` four times (the kinds, then the whole stream again): seconds each on a
    long log. Each now reads it once, and checks and exports exactly what it did before."""
    s, decisions = offsite_run(ix, tools)
    offsite_run(ix, tools)  # another run in the same stream: not part of this one's trace
    reads: list[dict[str, Any]] = []
    real = ix.log.read

    def counted(stream: str, **narrowed: Any) -> Any:
        reads.append(narrowed)
        return real(stream, **narrowed)

    ix.log.read = counted  # type: ignore[method-assign]
    try:
        assert "3 call(s): 2 allow, 1 block." in ix.gate.explain(s.id)["text"]
        assert len(reads) == 1
        reads.clear()
        doc = ix.gate.export_run(decisions[1].id)  # a decision id names its run, as for explain
        assert len(reads) == 1
    finally:
        del ix.log.read
    kinds = [op["op"] for op in doc["operations"]]
    assert kinds[0] == "GATE_SESSION_OPENED" and doc["operations"][0]["target"] == s.id
    assert kinds.count("GATE_DECIDED") == 3 and "GATE_OUTPUT_OBSERVED" in kinds
    assert verify_trace(doc, KeyRing.load_public(ix.home.keys_dir / "public.json"))["decisions"] == 3


def test_a_run_is_read_from_its_opening_on_and_a_page_of_runs_reads_that_page(
    ix: Intently, tools: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Showing one run read every GATE_DECIDED, GATE_APPROVED and GATE_DENIED operation the
    namespace ever logged (and the console shows one on every gate page, twice with its
    explanation); a page of old runs read every newer run to slice it. A run's operations all
    come after its opening, so that is where its read starts; a page of runs is asked from its
    offset. What they show is unchanged: a late approval of an old run's call still settles it."""
    old = ix.gate.session(tools, user_request="Delete the file named in 'cleanup.txt'")
    old.observe(
        "read_file", "Old drafts to remove: file 42 is obsolete, please confirm.", args={"file_path": "cleanup.txt"}
    )
    waiting = old.check("delete_file", {"file_id": "42"})
    assert waiting.level is Level.CONFIRM
    for _ in range(40):
        offsite_run(ix, tools)
    newest, _ = offsite_run(ix, tools)
    ix.as_actor("user:alice").gate.approve(waiting.id)
    read: list[int] = []
    real = type(ix.log).read

    def counted(self: Any, stream: str, **kw: Any) -> Any:
        found = real(self, stream, **kw)
        read.append(len(found))
        return found

    monkeypatch.setattr(type(ix.log), "read", counted)
    shown = ix.gate.run(newest.id)
    assert len(shown["decisions"]) == 3
    assert read == [4]  # its three decisions and the approval logged after them, not the 124 before
    read.clear()
    settled = ix.gate.run(old.id)["settled"]
    assert settled[waiting.id]["how"] == "approved"
    exported = ix.gate.export_run(old.id)
    assert [o["op"] for o in exported["operations"]][-1] == "GATE_APPROVED"
    monkeypatch.undo()
    every = ix.gate.runs(1000)
    assert len(every) == 42
    assert ix.gate.runs(5, 35) == every[35:40]
    assert ix.gate.runs(5, 40) == every[40:]
    with pytest.raises(InvalidInput) as caught:
        ix.gate.runs(5, -1)
    assert caught.value.where == "offset"
