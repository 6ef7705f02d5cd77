"""What selection keeps between processes (vectors, BM25 words, line token counts) never
changes what it selects: a selection from fresh caches, from caches read back from disk, and
from no caches at all are the same, and a damaged cache file is rebuilt, never trusted."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from intently.core.tokens import WordCounter, default_counter
from intently.embed import MiniLMEmbedder, VectorIndex, VectorIndexWarning
from intently.embed import _index as vector_index
from intently.requirements._bm25 import tokenize
from intently.requirements._select import requirement_text
from intently.requirements._select import select as run_select
from intently.requirements._tokencache import TOKENS_FILE, TokenCache

_TASKS = [
    ("Fix the retry timeout in the api client", ["src/api/client.py"]),
    ("Never log secrets when a request fails", ["src/log/errors.go"]),
    ("Add a database migration for users", []),
]


def add_varied_rules(ix: Intently, count: int) -> None:
    """``count`` rules, scoped or not, ``Never`` beside ``Always`` on the same words, so
    selection, ranking and the contradiction check all have work (also used by the context tests)."""
    for n in range(count):
        paths = [f"src/{('api', 'log', 'db')[n % 3]}/**"] if n % 2 else []
        verb = "Never" if n % 4 == 0 else "Always"
        ix.requirements.add(
            f"{verb} retry request {n % 5} with a timeout; check the errors of handler {n}.",
            paths=paths,
            rationale=f"It broke in release {n}.",
        )


def _rules(ix: Intently) -> None:
    """Rules of every scope kind, some contradicting each other, so every stage has work."""
    add_varied_rules(ix, 24)
    ix.requirements.add("Always log secrets of a failed request for debugging.")
    ix.requirements.add("Never log secrets of a failed request.")


def _selections(ix: Intently) -> list[dict[str, Any]]:
    return [
        ix.requirements.select(task, paths=paths, explain=True, record=False, budget=400).to_json()
        for task, paths in _TASKS
    ]


@pytest.mark.parametrize("embedder", ["hashing", "minilm"])
def test_selection_is_the_same_from_fresh_reloaded_and_no_caches(
    ix: Intently, embedder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The binary index keeps MiniLM's float32 vectors as float32 and the hashing embedder's
    float64 ones as float64: a reload must give bit-for-bit the vectors embedded, or a score
    moves and a floor or tie decides differently in the next process than in this one."""
    monkeypatch.setenv("INTENTLY_EMBEDDER", embedder)
    _rules(ix)
    emb = ix.requirements.embedder
    assert emb is not None
    folder = ix.home.index_dir
    fresh = _selections(ix)  # embeds, tokenises and counts everything, then saves
    assert VectorIndex(folder, emb, name="requirements").path.is_file()  # type: ignore[union-attr]
    assert (folder / TOKENS_FILE).is_file()
    vector_index._PARSED.clear()  # as a new process: the files are read back from disk
    with warnings.catch_warnings():
        warnings.simplefilter("error", VectorIndexWarning)
        reloaded = _selections(ix)
    assert reloaded == fresh
    # And no cache at all: every text embedded and tokenised anew.
    reqs = ix.requirements.list()
    loaded = ix.requirements.load()
    for (task, paths), want in zip(_TASKS, fresh, strict=True):
        plain = run_select(
            loaded.requirements, task, paths=paths, embedder=emb, explain=True, budget=400, domain_map=loaded.domains
        )
        assert plain.to_json() == want
    assert len(reqs) == 26
    if isinstance(emb, MiniLMEmbedder):
        index = VectorIndex(folder, emb, name="requirements")
        assert index.path is not None
        assert index.path.stat().st_size < 26 * emb.dim * 4 + 8192  # float32 rows, a small header


def test_a_damaged_index_in_a_home_is_rebuilt_and_selects_the_same(
    ix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTENTLY_EMBEDDER", "hashing")
    _rules(ix)
    before = _selections(ix)
    emb = ix.requirements.embedder
    assert emb is not None
    path = VectorIndex(ix.home.index_dir, emb, name="requirements").path
    assert path is not None
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])  # cut short, as by a full disk
    (ix.home.index_dir / TOKENS_FILE).write_text("{not json")
    vector_index._PARSED.clear()
    with pytest.warns(VectorIndexWarning, match="truncated"):
        after = _selections(ix)
    assert after == before
    assert path.read_bytes() == raw  # rebuilt to the same file
    assert json.loads((ix.home.index_dir / TOKENS_FILE).read_text())["words"]


def test_token_cache_gives_what_tokenize_gives_and_ignores_foreign_files(tmp_path: Path) -> None:
    texts = ["Don't call refresh_helper.go from the UI thread", "Use camelCase names", "Don't call x"]
    first = TokenCache(tmp_path)
    assert first.tokens(texts) == [tokenize(t) for t in texts]
    again = TokenCache(tmp_path)
    assert again.tokens(texts) == [tokenize(t) for t in texts]
    data = json.loads((tmp_path / TOKENS_FILE).read_text())
    assert len(data["words"]) == 3
    # Another version's file (its tokeniser may differ) is never read.
    data["intently"] = "0.0.0-other"
    data["words"] = {k: "wrong words" for k in data["words"]}
    (tmp_path / TOKENS_FILE).write_text(json.dumps(data))
    assert TokenCache(tmp_path).tokens(texts) == [tokenize(t) for t in texts]
    # Words of texts no longer asked for are dropped.
    TokenCache(tmp_path).tokens(texts[:1])
    assert len(json.loads((tmp_path / TOKENS_FILE).read_text())["words"]) == 1


def test_token_counts_are_the_counters_own_and_kept_across_tasks(tmp_path: Path) -> None:
    counter = default_counter()
    lines = ["- [req-000000000001] Never retry a POST.", "- [req-000000000002] Always check errors \u202e here"]
    assert TokenCache(tmp_path).counts(lines, counter) == [counter.count(x) for x in lines]
    TokenCache(tmp_path).counts(["- [req-000000000003] another task's line"], counter)
    kept = json.loads((tmp_path / TOKENS_FILE).read_text())["counts"]
    assert len(kept) == 3  # the first task's lines are still there for its next block
    assert TokenCache(tmp_path).counts(lines, counter) == [counter.count(x) for x in lines]
    words = WordCounter()  # not the default counter: counted every time, never kept
    assert TokenCache(tmp_path).counts(lines, words) == [words.count(x) for x in lines]


def test_texts_are_tokenised_once_across_processes(ix: Intently, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokenising every rule text in every process was 0.3 s of each block at 2,000 rules."""
    monkeypatch.setenv("INTENTLY_EMBEDDER", "none")
    _rules(ix)
    ix.requirements.select("Fix the retry timeout", record=False)
    texts = [requirement_text(r) for r in ix.requirements.list()]
    seen: list[str] = []
    real = tokenize

    def counted(text: str) -> list[str]:
        seen.append(text)
        return real(text)

    from intently.requirements import _tokencache

    monkeypatch.setattr(_tokencache, "tokenize", counted)
    ix.requirements.select("Fix the retry timeout", record=False)
    assert not set(seen) & set(texts)
