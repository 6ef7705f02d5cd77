"""The derived vector index: keyed by content hash and model id, self-healing, atomic."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from intently.embed import HashingEmbedder, VectorIndex, VectorIndexWarning, _index, content_hash, cosine, dot_scores


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


def test_the_index_file_is_private_to_its_user(tmp_path: Path) -> None:
    """The index is a per-user cache of vectors of the project's texts: 0o600 when written, and
    again after each rewrite, whatever mode it was given meanwhile."""
    index = VectorIndex(tmp_path, HashingEmbedder())
    index.vectors(["alpha rule"])
    assert index.path is not None and stat.S_IMODE(index.path.stat().st_mode) == 0o600
    index.path.chmod(0o644)
    index.vectors(["alpha rule", "beta rule"])
    assert stat.S_IMODE(index.path.stat().st_mode) == 0o600
    # no temporary file left behind: only the index and its writers' (empty) lock file
    lock = index.path.with_suffix(".lock")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".gitignore", index.path.name, lock.name])
    assert lock.stat().st_size == 0


def test_corrupt_or_foreign_model_files_are_rebuilt(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = VectorIndex(tmp_path, emb)
    index.vectors(["alpha rule"])
    assert index.path is not None
    index.path.write_text("{not json")
    with pytest.warns(VectorIndexWarning, match="no magic line"):
        healed = VectorIndex(tmp_path, emb)
    assert healed.vectors(["alpha rule"]) == emb.embed(["alpha rule"])
    assert healed.embedded == 1
    assert _header(index.path)["model_id"] == emb.model_id
    other = VectorIndex(tmp_path, HashingEmbedder(dim=64))
    other.vectors(["alpha rule"])
    assert other.embedded == 1  # another model never reuses these vectors


def _header(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    magic = raw.index(b"\n") + 1
    size = int.from_bytes(raw[magic : magic + 8], "little")
    header: dict[str, Any] = json.loads(raw[magic + 8 : magic + 8 + size])
    return header


def _damaged(path: Path, how: str) -> None:
    raw = path.read_bytes()
    if how == "truncated":
        path.write_bytes(raw[: len(raw) - 100])
    elif how == "flipped":
        path.write_bytes(raw[:-10] + bytes([raw[-10] ^ 0x40]) + raw[-9:])
    elif how == "cut in header":
        path.write_bytes(raw[:40])
    else:
        raise AssertionError(how)


@pytest.mark.parametrize(
    ("how", "why"),
    [("truncated", "truncated"), ("flipped", "checksum"), ("cut in header", "truncated in its header")],
)
def test_a_damaged_binary_index_is_rebuilt_with_a_note_never_used(tmp_path: Path, how: str, why: str) -> None:
    """A file cut short (a full disk, a copy interrupted) or changed in place must never give
    a selection wrong vectors, nor crash it: it is named in a warning and rebuilt."""
    emb = HashingEmbedder()
    texts = [f"rule {n}: check input {n}" for n in range(20)]
    VectorIndex(tmp_path, emb).vectors(texts)
    path = VectorIndex(tmp_path, emb).path
    assert path is not None
    _damaged(path, how)
    with pytest.warns(VectorIndexWarning, match=why) as caught:
        healed = VectorIndex(tmp_path, emb)
    assert str(path) in str(caught[0].message) and "rebuilt" in str(caught[0].message)
    assert healed.vectors(texts) == emb.embed(texts)
    assert healed.embedded == len(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt file is sound: no note any more
        again = VectorIndex(tmp_path, emb)
        assert again.vectors(texts) == emb.embed(texts) and again.embedded == 0


def test_another_models_file_under_this_name_is_rebuilt(tmp_path: Path) -> None:
    """The header names the model: a file of another model's vectors (copied, or a model id
    whose file name collides) is never read as this model's."""
    small, other = HashingEmbedder(dim=64), HashingEmbedder(dim=32)
    first = VectorIndex(tmp_path, small)
    first.vectors(["alpha rule"])
    second = VectorIndex(tmp_path, other)
    assert first.path is not None and second.path is not None
    second.path.write_bytes(first.path.read_bytes())
    with pytest.warns(VectorIndexWarning, match="built by model 'hashing:v1:64'"):
        healed = VectorIndex(tmp_path, other)
    assert healed.vectors(["alpha rule"]) == other.embed(["alpha rule"]) and healed.embedded == 1


def test_the_json_index_of_earlier_versions_is_migrated_without_embedding_again(tmp_path: Path) -> None:
    """An upgrade must not re-embed every rule (minutes with MiniLM at 2,000 rules): the old
    JSON index is read once, written as the binary file, and removed."""
    emb = HashingEmbedder()
    texts = ["alpha rule", "beta rule"]
    vecs = emb.embed(texts)
    index = VectorIndex(tmp_path, emb)
    assert index.legacy_path is not None and index.path is not None
    legacy = {
        "version": 1,
        "model_id": emb.model_id,
        "entries": {content_hash(t): v for t, v in zip(texts, vecs, strict=True)},
    }
    index.legacy_path.write_text(json.dumps(legacy))
    migrated = VectorIndex(tmp_path, emb)
    assert migrated.vectors(texts) == vecs
    assert migrated.embedded == 0
    assert not index.legacy_path.exists() and index.path.is_file()
    assert _header(index.path)["dtype"] == "f8"  # the hashing embedder's floats are not float32
    reread = VectorIndex(tmp_path, emb)
    assert reread.vectors(texts) == vecs and reread.embedded == 0


def test_dot_scores_are_bit_for_bit_the_python_cosine() -> None:
    """Selection results must not move when the similarity is vectorised: every score is the
    exact float the pure-Python dot product gave, so no floor or tie decides differently."""
    emb = HashingEmbedder(dim=384)
    rows = emb.embed([f"rule {n}: never {n % 7} retry the {n % 13} handler" for n in range(500)])
    query = emb.embed_one("retry the handler 3 times")
    got = dot_scores(np.asarray(rows), query)
    assert got == [cosine(query, r) for r in rows]
    f32 = np.asarray(rows, dtype=np.float32).astype(np.float64)  # MiniLM-like float32 values
    assert dot_scores(f32, query) == [cosine(query, list(r)) for r in f32.tolist()]


def test_concurrent_writers_never_leave_a_file_a_reader_rejects(tmp_path: Path) -> None:
    """Two processes saving the index at once (two hooks): each write is a whole file put in
    place by a rename, so every read sees one writer's complete file, never a mix."""
    script = (
        "import sys; from pathlib import Path; from intently.embed import HashingEmbedder, VectorIndex\n"
        "for n in range(40):\n"
        "    VectorIndex(Path(sys.argv[1]), HashingEmbedder()).vectors([f'{sys.argv[2]} {n} {k}' for k in range(50)])\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), who], env={**os.environ}) for who in "ab"]
    emb = HashingEmbedder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a torn file would be a VectorIndexWarning
        while any(p.poll() is None for p in procs):
            VectorIndex(tmp_path, emb)
    assert [p.wait() for p in procs] == [0, 0]
    assert not list(tmp_path.glob(".*.tmp"))  # no temp file left behind


def test_vanished_texts_are_pruned(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path, HashingEmbedder())
    index.vectors(["one", "two", "three"])
    index.vectors(["one"])
    assert index.path is not None
    assert _header(index.path)["ids"] == [content_hash("one")]


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
    reads: list[bytes] = []
    real = _index._decode

    def counted(raw: bytes, model_id: str, dim: int) -> Any:
        reads.append(raw)
        return real(raw, model_id, dim)

    monkeypatch.setattr(_index, "_decode", counted)
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
