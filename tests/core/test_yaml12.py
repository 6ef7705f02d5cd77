"""The fast loader keeps YAML 1.2 meanings, and reads the shipped data as ruamel.yaml does."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from intently.core import yaml12

_SRC = Path(__file__).parents[2] / "src" / "intently"
SHIPPED = [*sorted((_SRC / "gate" / "data").glob("*.yaml")), _SRC / "hooks" / "claude_tools.yaml"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: no", {"a": "no"}),  # a YAML 1.1 boolean, a string in 1.2
        ("a: on", {"a": "on"}),
        ("a: Yes", {"a": "Yes"}),
        ("a: true", {"a": True}),
        ("a: FALSE", {"a": False}),
        ("a: 1:30", {"a": "1:30"}),  # sexagesimal in 1.1
        ("a: 010", {"a": 10}),  # octal in 1.1
        ("a: 0o10", {"a": 8}),
        ("a: 0x1f", {"a": 31}),
        ("a: 1_000", {"a": 1000}),
        ("a: 1.5e3", {"a": 1500.0}),
        ("a: -7", {"a": -7}),
        ("a: ~", {"a": None}),
        ("a: [x, 'no', 2]", {"a": ["x", "no", 2]}),
    ],
)
def test_scalars_resolve_as_yaml_1_2(text: str, value: object) -> None:
    assert yaml12.load(text) == value
    assert YAML(typ="safe").load(text) == value  # the same meaning as the round-trip loader's


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_data_reads_the_same_as_with_ruamel(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yaml12.load(text) == YAML(typ="safe").load(text)


def test_errors_carry_the_line() -> None:
    with pytest.raises(yaml12.YamlError) as info:
        yaml12.load("a: 1\nb: [unclosed\nc: 2\n")
    mark = getattr(info.value, "problem_mark", None)
    assert mark is not None and mark.line >= 1
