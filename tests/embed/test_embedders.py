"""The shared embedders: real models, offline, deterministic, unit-length."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from intently import InvalidInput
from intently.core.errors import StoreError
from intently.core.extras import MissingExtra
from intently.embed import (
    MINILM_SHA256,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    SentenceTransformerEmbedder,
    WordLlamaEmbedder,
    cosine,
    default_embedder,
    get_embedder,
)

RULE = "Never bump the major version unless explicitly told to."
PARAPHRASE = "Do not increase the major version number without being asked."
UNRELATED = "The pasta needs ten minutes in salted boiling water."


@pytest.mark.parametrize("name", ["minilm", "wordllama"])
def test_real_models_are_deterministic_unit_vectors_that_rank_meaning(name: str) -> None:
    emb = get_embedder(name)
    assert isinstance(emb, Embedder)
    first = emb.embed([RULE, PARAPHRASE, UNRELATED])
    again = emb.embed([RULE, PARAPHRASE, UNRELATED])
    assert first == again
    for vec in first:
        assert len(vec) == emb.dim
        assert math.isclose(sum(x * x for x in vec), 1.0, rel_tol=1e-4)
    assert cosine(first[0], first[1]) > cosine(first[0], first[2]) + 0.2


def test_batching_does_not_change_vectors() -> None:
    emb = get_embedder("minilm")
    assert emb is not None
    texts = [f"rule number {i}: always run the linter" for i in range(40)]
    batched = emb.embed(texts)
    single = emb.embed([texts[35]])[0]
    assert max(abs(a - b) for a, b in zip(batched[35], single, strict=True)) < 1e-4


def test_default_is_minilm_with_a_stable_model_id() -> None:
    emb = default_embedder()
    assert emb is not None
    assert emb.model_id.startswith("onnx:all-MiniLM-L6-v2-int8:")
    assert MINILM_SHA256[:12] in emb.model_id
    assert WordLlamaEmbedder().model_id != emb.model_id


def test_minilm_refuses_weights_whose_sha256_differs(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the pinned model")
    with pytest.raises(StoreError, match="SHA-256"):
        MiniLMEmbedder(model_path=fake).embed(["x"])


def test_sentence_transformers_is_an_extra_that_never_downloads(tmp_path: Path) -> None:
    emb = SentenceTransformerEmbedder(tmp_path / "missing-model")
    with pytest.raises((StoreError, MissingExtra), match=r"intently\[st\]|no local sentence-transformers model"):
        emb.embed(["x"])


def test_hashing_embedder_keeps_negations() -> None:
    emb = HashingEmbedder()
    plain, negated = emb.embed(["use the system ruby", "never use the system ruby"])
    assert cosine(plain, negated) < 0.99


def test_none_means_no_embedder_and_unknown_names_are_errors() -> None:
    assert get_embedder("none") is None
    with pytest.raises(InvalidInput, match="unknown embedder"):
        get_embedder("gpt-embeddings")
