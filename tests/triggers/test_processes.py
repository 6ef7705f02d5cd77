"""Real processes: the same turn matched by two processes fires once; changes propagate."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from intently import Intently
from intently.triggers import IntentState

from .conftest import ops

_MATCHER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from intently import Intently
    home, go, ready, text = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    with Intently.open(home, actor="user:alice") as ix:
        ix.triggers.test("warm up the index")
        ready.touch()
        while not go.exists():
            time.sleep(0.005)
        result = ix.triggers.match(text)
        print(json.dumps([h.id for h in result.hits if h.fired]))
    """
)

_ADDER = textwrap.dedent(
    """
    import sys
    from intently import Intently
    with Intently.open(sys.argv[1], actor="user:alice") as ix:
        print(ix.triggers.add("from another process", when=["canary deploy"]).id)
    """
)


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_matching_the_same_turn_fire_once(ix: Intently, tmp_path: Path) -> None:
    ids = [ix.triggers.add(f"r{i}", when=["launch checklist"], expires="2099-01-01").id for i in range(2)]
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(2)]
    procs = [_spawn(_MATCHER, str(ix.home.path), str(go), str(r), "the launch checklist is ready") for r in ready]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # both processes are loaded and waiting: they match at the same moment
    fired: list[str] = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        fired.extend(json.loads(stdout))
    assert sorted(fired) == sorted(ids)  # each intent fired exactly once, by one of the two
    assert ops(ix).count("TRIGGER_FIRE") == 2
    for intent_id in ids:
        intent = ix.triggers.show(intent_id)
        assert intent.fire_count == 1 and intent.state is IntentState.FIRED and len(intent.fires) == 1


def test_a_change_in_another_process_is_visible_within_a_second(ix: Intently) -> None:
    assert ix.triggers.test("canary deploy today").hits == ()  # the index is loaded and warm
    proc = _spawn(_ADDER, str(ix.home.path))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    new_id = stdout.strip()
    start = time.monotonic()
    seen: list[str] = []
    while time.monotonic() - start < 5 and not seen:
        seen = [h.id for h in ix.triggers.test("canary deploy today").hits]
        time.sleep(0.02)
    assert seen == [new_id]
    assert time.monotonic() - start < 1.0
