"""Two writers of one vector index never cost the rows the other added: each save keeps what
another process saved since this one read the file (two hooks of two sessions, a ``req add``
beside a ``req preview``), under a lock so that the merge and the rename are one step."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from intently.embed import HashingEmbedder, Vector, VectorIndex, _index

_RULES = [f"rule {n}: check the retry timeout of handler {n}" for n in range(30)]


class _Counting(HashingEmbedder):
    """The hashing embedder, counting the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.texts.extend(texts)
        return super().embed(texts)


def _as_new_process() -> None:
    _index._PARSED.clear()  # nothing parsed earlier in memory


def test_a_save_keeps_the_rows_another_writer_added_since_the_read(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    VectorIndex(tmp_path, emb).vectors(_RULES)
    first, second = VectorIndex(tmp_path, emb), VectorIndex(tmp_path, emb)  # both read the same file
    first.vectors([*_RULES, "a rule added by req add"])
    second.vectors([*_RULES, "a rule another session's hook saw"])  # saved after, from its older read
    _as_new_process()
    counting = _Counting()
    reader = VectorIndex(tmp_path, counting)
    wanted = [*_RULES, "a rule added by req add", "a rule another session's hook saw"]
    assert reader.vectors(wanted) == emb.embed(wanted)
    assert counting.texts == []  # nothing embedded again (the first writer's row was lost before)


def test_a_row_this_writer_read_and_dropped_stays_dropped(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    VectorIndex(tmp_path, emb).vectors([*_RULES, "a rule since deleted"])
    first, second = VectorIndex(tmp_path, emb), VectorIndex(tmp_path, emb)
    first.vectors([*_RULES, "a rule since deleted", "a new rule"])
    second.vectors(_RULES)  # its rules no longer hold the deleted one
    _as_new_process()
    counting = _Counting()
    reader = VectorIndex(tmp_path, counting)
    reader.vectors(["a new rule", *_RULES], keep_only=False)
    assert counting.texts == []
    reader.vectors(["a rule since deleted"], keep_only=False)
    assert counting.texts == ["a rule since deleted"]  # pruned: not brought back by the merge


def test_two_processes_adding_at_once_lose_no_row(tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from intently.embed import HashingEmbedder, VectorIndex\n"
        "for n in range(25):\n"
        "    VectorIndex(Path(sys.argv[1]), HashingEmbedder()).vectors([f'{sys.argv[2]} {n}'], keep_only=False)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), who], env={**os.environ}) for who in "ab"]
    assert [p.wait(120) for p in procs] == [0, 0]
    _as_new_process()
    counting = _Counting()
    everything = [f"{who} {n}" for who in "ab" for n in range(25)]
    VectorIndex(tmp_path, counting).vectors(everything, keep_only=False)
    assert counting.texts == []
    assert not list(tmp_path.glob(".vectors-*"))  # no temp file left behind
