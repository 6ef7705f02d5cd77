"""A plain string where a list is expected is one item, never its letters; values of the wrong
type are refused naming the parameter."""

from __future__ import annotations

import pytest

from intently import Intently, InvalidInput

from .conftest import ops


def test_a_string_as_when_is_one_entry_not_its_letters(ix: Intently) -> None:
    """``when="deploy"`` was stored as entries d, e, p, l, o, y: it never fired on "deploy"
    and fired on "d e p l o y" (and ``mypy --strict`` accepts it, ``str`` being a
    ``Sequence[str]``). One string is one entry."""
    intent = ix.triggers.add("Check the rollback plan", when="deploy")
    assert intent.entries == (("deploy",),)
    assert [h.id for h in ix.triggers.test("we deploy today").shown] == [intent.id]
    assert ix.triggers.test("d e p l o y").hits == ()


def test_a_string_entry_inside_the_list_and_update_read_the_same_way(ix: Intently) -> None:
    intent = ix.triggers.add("Check the rollback plan", when=["launch checklist"])
    updated = ix.triggers.update(intent.id, when="release train")
    assert updated.entries == (("release train",),)


def test_a_string_as_exclude_or_scope_is_one_item(ix: Intently) -> None:
    """``exclude="staging"`` vetoed on every letter; ``scope="sender:user:bob"`` was refused as
    the item 's'. Both are one item now."""
    intent = ix.triggers.add("Check the rollback plan", when=["deploy"], exclude="staging", scope="sender:user:bob")
    assert intent.exclusions == ("staging",)
    assert intent.scope.sender == "user:bob" and intent.scope.channel is None
    assert ix.triggers.test("we deploy today", sender="user:bob").shown
    assert not ix.triggers.test("we deploy to staging", sender="user:bob").shown
    assert not ix.triggers.test("we deploy today", sender="user:eve").shown


@pytest.mark.parametrize("text", [None, 5, b"deploy"])
def test_match_needs_the_turn_as_a_string(ix: Intently, text: object) -> None:
    with pytest.raises(InvalidInput) as info:
        ix.triggers.match(text)  # type: ignore[arg-type]
    assert info.value.where == "text"


@pytest.mark.parametrize("budget", ["10", -1, True, 2.5])
def test_match_refuses_a_budget_that_is_not_a_whole_number(ix: Intently, budget: object) -> None:
    ix.triggers.add("Check the rollback plan", when=["deploy"])
    before = ops(ix)
    with pytest.raises(InvalidInput) as info:
        ix.triggers.match("we deploy today", budget=budget)  # type: ignore[arg-type]
    assert info.value.where == "budget"
    assert ops(ix) == before  # nothing fired


def test_a_reminder_that_is_not_a_string_is_refused(ix: Intently) -> None:
    with pytest.raises(InvalidInput) as info:
        ix.triggers.add(None, when=["deploy"])  # type: ignore[arg-type]
    assert info.value.where == "reminder"
    assert ops(ix) == []


def test_update_refuses_a_max_fires_that_is_not_a_number(ix: Intently) -> None:
    intent = ix.triggers.add("Check the rollback plan", when=["deploy"])
    with pytest.raises(InvalidInput) as info:
        ix.triggers.update(intent.id, max_fires="5")  # type: ignore[arg-type]
    assert info.value.where == "max_fires"
