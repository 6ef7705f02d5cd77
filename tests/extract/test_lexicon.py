"""The lexicons are reviewed data: the packaged file loads, and a bad file fails naming the key."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import pytest

from intently import InvalidInput
from intently.extract import Lexicon, RuleExtractor, load_lexicon


def _packaged() -> dict[str, object]:
    return tomllib.loads(resources.files("intently.extract").joinpath("lexicon.toml").read_text("utf-8"))


def test_packaged_lexicon_loads_and_matches_phrases() -> None:
    lex = load_lexicon()
    assert lex.idioms.search("well, i'll drink to that!") is not None
    assert lex.idioms.search("i will drink to that") is not None  # full form of a contracted idiom
    assert lex.risk_nouns.search("that sounds risky") is not None  # "risk*" wildcard
    assert lex.risk_nouns.search("the brisket") is None  # words, not substrings


def test_unknown_key_is_an_error_naming_it(tmp_path: Path) -> None:
    raw = _packaged()
    raw["risk"]["nouns_typo"] = ["x"]  # type: ignore[index]
    path = tmp_path / "lexicon.toml"
    import json

    path.write_text(
        "\n".join(
            f"[{section}]\n" + "\n".join(f"{key} = {json.dumps(value)}" for key, value in table.items())  # type: ignore[attr-defined]
            for section, table in raw.items()
        ),
        encoding="utf-8",
    )
    with pytest.raises(InvalidInput, match=r"risk\.nouns_typo"):
        Lexicon.from_path(path)


def test_a_reviewer_can_extend_a_list_without_code(tmp_path: Path) -> None:
    raw = _packaged()
    raw["speech_acts"]["idioms"].append("i'll eat my hat")  # type: ignore[index]
    lex = Lexicon.from_dict(raw)
    from datetime import UTC, datetime

    from intently.extract import Turn

    turn = Turn(speaker="s", text="If that ships on time I'll eat my hat.", time=datetime(2026, 3, 4, tzinfo=UTC))
    plain = Turn(speaker="s", text="I'll eat my hat.", time=datetime(2026, 3, 4, tzinfo=UTC))
    assert RuleExtractor(load_lexicon()).extract(plain) != []
    assert RuleExtractor(lex).extract(plain) == []
    assert RuleExtractor(lex).extract(turn) == []
