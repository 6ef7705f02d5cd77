"""The derived vector index: keyed by content hash and model id, self-healing, atomic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from intently.embed import HashingEmbedder, VectorIndex


def test_only_new_or_changed_texts_are_embedded(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = VectorIndex(tmp_path, emb)
    first = index.vectors(["alpha rule", "beta rule"])
    assert index.embedded == 2
    reopened = VectorIndex(tmp_path, emb)
    assert reopened.vectors(["alpha rule", "beta rule"]) == first
    assert reopened.embedded == 0
    reopened.vectors(["alpha rule", "beta rule, reworded"])
    assert reopened.embedded == 1
    assert (tmp_path / ".gitignore").read_text() == "*\n"


def test_corrupt_or_foreign_model_files_are_rebuilt(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = VectorIndex(tmp_path, emb)
    index.vectors(["alpha rule"])
    assert index.path is not None
    index.path.write_text("{not json")
    healed = VectorIndex(tmp_path, emb)
    assert healed.vectors(["alpha rule"]) == emb.embed(["alpha rule"])
    assert healed.embedded == 1
    assert json.loads(index.path.read_text())["model_id"] == emb.model_id
    other = VectorIndex(tmp_path, HashingEmbedder(dim=64))
    other.vectors(["alpha rule"])
    assert other.embedded == 1  # another model never reuses these vectors


def test_vanished_texts_are_pruned(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path, HashingEmbedder())
    index.vectors(["one", "two", "three"])
    index.vectors(["one"])
    assert index.path is not None
    assert len(json.loads(index.path.read_text())["entries"]) == 1


def test_an_unchanged_file_is_parsed_once_per_process_and_a_rewrite_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each selection opened the index again and parsed its whole file: with 1,000 rules a
    few MB of JSON, parsed twice per context block, longer than the selection itself. An
    unchanged file is now parsed once per process; one another process rewrote is read anew."""
    emb = HashingEmbedder()
    texts = [f"rule {n}: validate field {n} before use" for n in range(300)]
    VectorIndex(tmp_path, emb).vectors(texts)
    path = VectorIndex(tmp_path, emb).path
    assert path is not None
    reads: list[Path] = []
    real = Path.read_text

    def counted(self: Path, *args: Any, **kwargs: Any) -> str:
        if self == path:
            reads.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    for _ in range(3):
        again = VectorIndex(tmp_path, emb)
        assert again.vectors(texts) == emb.embed(texts)
        assert again.embedded == 0
    assert reads == []  # what this process wrote is what it reads: no parse at all
    # Another process replaces the file (a rule was reworded there): this one sees it.
    script = (
        "import sys; from pathlib import Path; from intently.embed import HashingEmbedder, VectorIndex; "
        "VectorIndex(Path(sys.argv[1]), HashingEmbedder()).vectors(['a rule reworded elsewhere'])"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, env={**os.environ})
    seen = VectorIndex(tmp_path, emb)
    assert len(reads) == 1
    assert seen.vectors(["a rule reworded elsewhere"], keep_only=False) == emb.embed(["a rule reworded elsewhere"])
    assert seen.embedded == 0  # its vector came from the other process's file
    VectorIndex(tmp_path, emb)
    assert len(reads) == 1
