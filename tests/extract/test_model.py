"""The rules' statistical recall layer: shipped, reproducible, additive, and bound by the hard cases."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from intently import Intently
from intently.core.errors import InvalidInput
from intently.extract import EVAL_TYPES, RFC4_TYPES, CandidateType, RuleExtractor, Turn, load_labelled, score
from intently.extract._model import SentenceModel, load_model, sentence_features
from intently.extract._text import normalize, sentences
from intently.extract._train import TrainSettings, train, train_files

from .conftest import WEDNESDAY, model_rating_all

DATA = Path(__file__).parent / "data"


def _training_files(shared_dir: Path) -> list[Path]:
    """Where each file named in the shipped model lives: the shared dev file or the repo's blind sets."""
    files = []
    for name in load_model().trained_on["files"]:
        path = shared_dir / "datasets" / name if name == "extraction-dev.jsonl" else DATA / name
        files.append(path)
    return files


def test_shipped_model_was_trained_on_the_files_as_they_are(shared_dir: Path) -> None:
    """Changing or adding a labelled file without retraining fails here (see docs/extraction.md)."""
    recorded = load_model().trained_on["files"]
    for path in _training_files(shared_dir):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == recorded[path.name], f"retrain: {path} changed"
    # Agreement studies relabel turns already in; agent sessions are read without the layer.
    labelled = {p.name for p in DATA.glob("*.jsonl") if not p.name.startswith(("agreement-", "agent-"))}
    assert labelled <= set(recorded), f"retrain: not in the model: {sorted(labelled - set(recorded))}"


def test_retraining_reproduces_the_shipped_model(shared_dir: Path) -> None:
    shipped = load_model()
    again = train_files(_training_files(shared_dir), TrainSettings(**_settings(shipped)))
    assert again.threshold == shipped.threshold and again.types == shipped.types
    assert again.thresholds == shipped.thresholds
    dev = load_labelled(shared_dir / "datasets" / "extraction-dev.jsonl")
    for row in dev[:60]:
        for sent in sentences(normalize(row.text)):
            features = sentence_features(sent.text, sent.is_question)
            for kind in shipped.types:
                assert abs(again.probability(kind, features) - shipped.probability(kind, features)) < 1e-3


def _settings(model: SentenceModel) -> dict[str, object]:
    raw = dict(model.settings)
    raw["types"] = tuple(raw["types"])
    raw["thresholds"] = tuple((name, bar) for name, bar in raw.get("thresholds", ()))
    return raw


def test_training_is_deterministic() -> None:
    rows = load_labelled(DATA / "holdout-mixed.jsonl")
    first = train(rows, TrainSettings(steps=50), trained_on={})
    second = train(rows, TrainSettings(steps=50), trained_on={})
    assert first.to_json() == second.to_json()
    assert first.trained_on == {"sentences": first.trained_on["sentences"], "turns": len(rows)}


def test_the_layer_only_adds_to_what_the_rules_find(shared_dir: Path) -> None:
    alone, layered = RuleExtractor(model=False), RuleExtractor()
    added = 0
    for row in load_labelled(shared_dir / "datasets" / "extraction-dev.jsonl") + load_labelled(
        DATA / "holdout-twelfth.jsonl"
    ):
        turn = row.turn()
        base = alone.extract(turn)
        more = layered.extract(turn)
        assert all(c in more for c in base)
        extra = [c for c in more if c not in base]
        assert all(c.rule == "model" and c.confidence == 0.5 for c in extra)
        assert all(turn.text[c.start : c.end] == c.span for c in extra)
        added += len(extra)
    assert added > 0  # the layer is live: it adds candidates on these files


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I sent the report yesterday.", "COMMITMENT"),
        ("I'm hoping to get back to it soon.", "COMMITMENT"),
        ("If people want, I will write an RFC.", "COMMITMENT"),
        ("I'll drink to that!", "COMMITMENT"),
        ("Let me check the logs.", "COMMITMENT"),
        ("He said I will regret it.", "COMMITMENT"),
        ("I'll read it out for everyone.", "COMMITMENT"),
        ("Thanks, I'll be right back.", "COMMITMENT"),
        ("He will be late, and the build will be slow.", "COMMITMENT"),
        ("Should we ship it in v22? Yes, the release team already agreed.", "OPEN_QUESTION"),
        ("What is the current status of the loader?", "OPEN_QUESTION"),
        ("Can you send me the link to the doc?", "OPEN_QUESTION"),
        ("I'm not concerned about the memory use.", "RISK"),
        ("There is no risk of data loss with this change.", "RISK"),
        ("There is no consensus on the name yet.", "DECISION"),
    ],
)
def test_the_hard_cases_bind_the_layer_too(text: str, kind: str) -> None:
    found = RuleExtractor(model=model_rating_all(10.0)).extract(Turn(speaker="bob", text=text, time=WEDNESDAY))
    assert kind not in {c.type.value for c in found}


@pytest.mark.parametrize(
    "text",
    ["10.7 will be out today.", "The issue will be started next week.", "There will be a presentation on it."],
)
def test_a_future_someone_will_carry_out_is_not_a_state(text: str) -> None:
    """The state veto is narrow: a passive, "out" or an announced event is still something to do."""
    found = RuleExtractor(model=model_rating_all(10.0)).extract(Turn(speaker="bob", text=text, time=WEDNESDAY))
    assert "COMMITMENT" in {c.type.value for c in found}


def test_a_model_that_rates_nothing_adds_nothing() -> None:
    turn = Turn(speaker="bob", text="The weather was fine and we walked home.", time=WEDNESDAY)
    assert RuleExtractor(model=model_rating_all(-10.0)).extract(turn) == []
    assert {c.type.value for c in RuleExtractor(model=model_rating_all(10.0)).extract(turn)} == {
        "COMMITMENT",
        "OPEN_QUESTION",
        "RISK",
        "DECISION",
    }


def test_a_bad_model_file_names_the_field(tmp_path: Path) -> None:
    raw = load_model().to_json()
    raw["threshold"] = 2
    path = tmp_path / "model.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InvalidInput, match="threshold"):
        SentenceModel.from_path(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InvalidInput, match="cannot read"):
        SentenceModel.from_path(path)


def test_config_turns_the_layer_off(ix: Intently) -> None:
    assert isinstance(ix.extraction.extractor, RuleExtractor) and ix.extraction.extractor.model is not None
    path = ix.home.config_path
    path.write_text(path.read_text(encoding="utf-8").replace("model = true", "model = false"), encoding="utf-8")
    with Intently.open(ix.home.path, actor="user:alice") as again:
        extractor = again.extraction.extractor
        assert isinstance(extractor, RuleExtractor) and extractor.model is None


def _observe_types(ix: Intently, text: str) -> set[str]:
    turn = Turn(speaker="bob", text=text, time=WEDNESDAY, channel="chat")
    return {c.type.value for c in ix.extraction.extractor.extract(turn)}


def test_config_raises_one_types_bar(ix: Intently) -> None:
    """A reviewer who finds the layer's commitments noisy turns them off in ``intently.toml``;
    its other types and the rules' own commitments stay."""
    offer = "Happy to take the PR over."  # only the layer reads this as an undertaking
    assert _observe_types(ix, offer) == {"COMMITMENT"}
    path = ix.home.config_path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("model_thresholds = {}", "model_thresholds = { COMMITMENT = 1.0 }"), encoding="utf-8")
    with Intently.open(ix.home.path, actor="user:alice") as again:
        extractor = again.extraction.extractor
        assert isinstance(extractor, RuleExtractor) and extractor.model is not None
        assert extractor.model.threshold_for(CandidateType.COMMITMENT) == 1.0
        assert extractor.model.threshold_for(CandidateType.OPEN_QUESTION) == load_model().threshold_for(
            CandidateType.OPEN_QUESTION
        )
        assert _observe_types(again, offer) == set()
        assert _observe_types(again, "I'll send the report by Friday.") == {"COMMITMENT"}


@pytest.mark.parametrize(
    ("table", "named"),
    [("{ GOAL = 0.9 }", "model_thresholds.GOAL"), ("{ COMMITMENT = 1.5 }", "model_thresholds.COMMITMENT")],
)
def test_a_bad_bar_in_config_names_the_key(ix: Intently, table: str, named: str) -> None:
    path = ix.home.config_path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("model_thresholds = {}", f"model_thresholds = {table}"), encoding="utf-8")
    with Intently.open(ix.home.path, actor="user:alice") as again, pytest.raises(InvalidInput) as caught:
        _ = again.extraction.extractor
    assert "intently.toml" in str(caught.value) and named in str(caught.value)


def test_a_vetoed_sentence_gives_way_to_the_next_likeliest() -> None:
    turn = Turn(speaker="bob", text="Is the plan approved? The group was fine with it.", time=WEDNESDAY)
    decisions = [
        c for c in RuleExtractor(model=model_rating_all(10.0)).extract(turn) if c.type is CandidateType.DECISION
    ]
    assert [c.span for c in decisions] == ["The group was fine with it"]


def test_validate_trains_without_each_held_out_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from intently.extract.train import main

    out = tmp_path / "model.json"
    held = [DATA / "holdout-mixed.jsonl", DATA / "holdout-fresh.jsonl"]
    assert (
        main([str(DATA / "holdout-third.jsonl"), *map(str, held), "--out", str(out), "--validate", *map(str, held)])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["held_out"] == ["holdout-mixed.jsonl", "holdout-fresh.jsonl"]
    rows = [r for path in held for r in load_labelled(path)]
    expected = score(RuleExtractor(model=False), rows).micro(RFC4_TYPES)
    assert report["rules"]["rfc4"] == expected  # pooled over the held-out files as one
    assert set(report["types"]) == set(EVAL_TYPES) and set(report["types"]["GOAL"]) == {"rules", "rules+model"}
    assert set(SentenceModel.from_path(out).trained_on["files"]) == {"holdout-third.jsonl", *(p.name for p in held)}


def test_the_training_command_takes_the_layers_types_and_refuses_unknown_ones(shared_dir: Path, tmp_path: Path) -> None:
    """``--types`` is how the validation in docs/extraction.md sweeps GOAL and RISK in and out."""
    from intently.extract.train import main

    dev = shared_dir / "datasets" / "extraction-dev.jsonl"
    out = tmp_path / "model.json"
    assert main([str(dev), "--types", "GOAL,RISK", "--out", str(out)]) == 0
    assert [t.value for t in SentenceModel.from_path(out).types] == ["GOAL", "RISK"]
    with pytest.raises(SystemExit):
        main([str(dev), "--types", "GOAL,WISH", "--out", str(out)])


def test_a_types_own_threshold_gates_only_that_type() -> None:
    """Every sentence rated 0.75: under the default bar (0.8) nothing, but a type whose own bar is
    0.7 is proposed, and a type set higher than the default is held back."""
    import math

    turn = Turn(speaker="bob", text="The weather was fine and we walked home.", time=WEDNESDAY)
    rated = dataclasses.replace(model_rating_all(math.log(0.75 / 0.25)), threshold=0.8)
    assert RuleExtractor(model=rated).extract(turn) == []
    own = dataclasses.replace(rated, thresholds={CandidateType.COMMITMENT: 0.7, CandidateType.RISK: 0.7})
    assert {c.type.value for c in RuleExtractor(model=own).extract(turn)} == {"COMMITMENT", "RISK"}
    lower = dataclasses.replace(own, threshold=0.5, thresholds={CandidateType.DECISION: 0.9})
    assert {c.type.value for c in RuleExtractor(model=lower).extract(turn)} == {"COMMITMENT", "OPEN_QUESTION", "RISK"}


def test_per_type_thresholds_survive_the_model_file(tmp_path: Path) -> None:
    shipped = load_model()
    assert shipped.thresholds, "the shipped model sets its own bars for some types"
    path = tmp_path / "model.json"
    shipped.save(path)
    assert SentenceModel.from_path(path).thresholds == shipped.thresholds
    # A bar of 1.0 (the layer off for that type, as `[extract] model_thresholds` allows) reads back.
    off = dataclasses.replace(shipped, thresholds={**shipped.thresholds, CandidateType.COMMITMENT: 1.0})
    off.save(path)
    assert SentenceModel.from_path(path).threshold_for(CandidateType.COMMITMENT) == 1.0
    raw = shipped.to_json()
    raw["thresholds"] = {"COMMITMENT": 1.5}
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InvalidInput, match="thresholds"):
        SentenceModel.from_path(path)


def test_the_training_command_sets_bars_per_type(shared_dir: Path, tmp_path: Path) -> None:
    from intently.extract.train import main

    dev = shared_dir / "datasets" / "extraction-dev.jsonl"
    out = tmp_path / "model.json"
    assert main([str(dev), "--out", str(out)]) == 0
    assert SentenceModel.from_path(out).thresholds == {
        CandidateType(name): bar for name, bar in TrainSettings.thresholds
    }
    assert main([str(dev), "--threshold", "0.75", "--type-threshold", "DECISION=0.9", "--out", str(out)]) == 0
    model = SentenceModel.from_path(out)
    assert model.threshold == 0.75 and model.thresholds == {CandidateType.DECISION: 0.9}
    assert main([str(dev), "--type-threshold", "DECISION=1", "--out", str(out)]) == 0
    assert SentenceModel.from_path(out).threshold_for(CandidateType.DECISION) == 1.0
    for bad in ("WISH=0.5", "DECISION=1.5", "DECISION=0", "DECISION=high"):
        with pytest.raises(SystemExit):
            main([str(dev), "--type-threshold", bad, "--out", str(out)])
