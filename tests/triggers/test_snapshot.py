"""Cold start: a new process loads the index snapshot instead of rebuilding, and never
trusts one taken from another state of the store (or a damaged file)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from intently import Intently
from intently.triggers._live import forget

_PROBE = textwrap.dedent(
    """
    import json, sys
    from intently import Intently
    with Intently.open(sys.argv[1], actor="user:alice") as ix:
        hits = [h.id for h in ix.triggers.test(sys.argv[2]).hits]
        print(json.dumps({"hits": sorted(hits), **ix.triggers.index_status()}))
    """
)
_TURN = "launch checklist, rollback plan and the canary deploy"


def _probe(home: Path, text: str = _TURN) -> dict[str, Any]:
    """What a brand-new process sees: its index's origin and the intents the turn matches."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(home), text], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _add(ix: Intently, reminder: str, when: str) -> str:
    return ix.triggers.add(reminder, when=[when], expires="2099-01-01").id


def test_a_new_process_loads_the_snapshot_and_applies_later_changes(ix: Intently) -> None:
    launch = _add(ix, "check the launch list", "launch checklist")
    rollback = _add(ix, "review the rollback", "rollback plan")
    status = ix.triggers.index_status()  # the first load rebuilds from the rows and writes a snapshot
    assert status["origin"] == "store" and status["intents"] == 2
    assert Path(status["snapshot"]).is_file()
    assert Path(status["snapshot"]).parent == ix.home.path / "index"

    ix.triggers.cancel(rollback)  # changes after the snapshot: the new process must see them
    canary = _add(ix, "watch the canary", "canary deploy")

    seen = _probe(ix.home.path)
    assert seen["origin"] == "snapshot"
    assert seen["hits"] == sorted([launch, canary])
    assert seen["intents"] == 2


def _home_with(root: Path, reminder: str, when: str) -> tuple[str, Path]:
    with Intently.init(root, actor="user:alice", name="proj") as ix:
        intent_id = _add(ix, reminder, when)
        snapshot = Path(ix.triggers.index_status()["snapshot"])
        forget(ix.store)  # this test process reuses the path for another database
    assert snapshot.is_file()
    return intent_id, snapshot


def test_a_snapshot_from_another_state_of_the_store_is_not_used(tmp_path: Path) -> None:
    # Two homes at the same path, database file and namespace, both at change sequence 1,
    # holding different intents: only the sample of rows tells the states apart.
    root = tmp_path / "proj"
    root.mkdir()
    _old_id, old_snapshot = _home_with(root, "old reminder", "launch checklist")
    kept = tmp_path / "old.snapshot"
    shutil.copy(old_snapshot, kept)
    shutil.rmtree(root)
    root.mkdir()
    new_id, new_snapshot = _home_with(root, "new reminder", "rollback plan")
    assert new_snapshot == old_snapshot  # same key on disk: the name alone cannot protect
    shutil.copy(kept, new_snapshot)

    seen = _probe(root)
    assert seen["origin"] == "store"
    assert seen["hits"] == [new_id]  # not the old home's "launch checklist" intent
    assert _probe(root)["origin"] == "snapshot"  # the rebuild wrote a snapshot of this state


def test_a_damaged_snapshot_is_ignored_and_replaced(ix: Intently) -> None:
    launch = _add(ix, "check the launch list", "launch checklist")
    snapshot = Path(ix.triggers.index_status()["snapshot"])
    data = bytearray(snapshot.read_bytes())
    data[-20:] = bytes(b ^ 0xFF for b in data[-20:])  # flip the tail of the body
    snapshot.write_bytes(bytes(data))

    seen = _probe(ix.home.path)
    assert seen["origin"] == "store" and seen["hits"] == [launch]
    snapshot.write_bytes(b"intently-trigger-index\n\x00\x00")  # truncated header
    seen = _probe(ix.home.path)
    assert seen["origin"] == "store" and seen["hits"] == [launch]
    assert _probe(ix.home.path)["origin"] == "snapshot"


def test_changed_synonyms_make_the_snapshot_stale(ix: Intently) -> None:
    hotfix = _add(ix, "tell release management", "hotfix")
    assert ix.triggers.index_status()["origin"] == "store"
    assert _probe(ix.home.path, "we need an emergency patch")["hits"] == []
    (ix.home.path / "synonyms.yaml").write_text("equivalents:\n  - [hotfix, emergency patch]\n", encoding="utf-8")

    seen = _probe(ix.home.path, "we need an emergency patch")
    assert seen["origin"] == "store"  # the normaliser's fingerprint changed: rebuilt
    assert seen["hits"] == [hotfix]
