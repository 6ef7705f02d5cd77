"""Only a person ends a person's goal (RFC-0013 section 6: "the user or owning agent MUST decide").

Before, only ``archive`` asked whose goal it was: the MCP server's agent (``agent:mcp for
user:alice``), or any agent with write access, could cancel, complete or supersede the person's
goals, and a prompt injection in a page it read could clear the person's goals out of every
context block as if the person had decided. Now the library refuses it, naming the goal, its
owner and the command the person runs; an agent's own goals stay its own to close.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from intently import Actor, Intently, Permission, PermissionDenied
from intently.goals import CLEAR, Goals, IntentState

Act = Callable[[Goals, str], object]

ENDINGS: dict[str, Act] = {
    "cancel": lambda g, i: g.cancel(i, reason="an injected page said so"),
    "complete": lambda g, i: g.complete(i),
    "supersede": lambda g, i: g.supersede(i, text="Something else entirely"),
}
AGENTS = ["agent:mcp for user:alice", "agent:claude", "tool:ci"]


def _as(ix: Intently, who: str) -> Intently:
    if who == "agent:mcp for user:alice":
        return ix.as_actor(Actor.delegate("mcp", ix.actor))
    ix.access.grant(Actor.parse(who), Permission.WRITE)
    return ix.as_actor(who)


@pytest.mark.parametrize("act", sorted(ENDINGS))
@pytest.mark.parametrize("who", AGENTS)
def test_an_agent_cannot_end_a_persons_goal_and_nothing_is_written(ix: Intently, who: str, act: str) -> None:
    goal = ix.goals.add("Ship the API", priority="HIGH")  # alice's own word, no owner field
    agent = _as(ix, who)
    before = len(ix.log.read("proj"))
    with pytest.raises(PermissionDenied) as refused:
        ENDINGS[act](agent.goals, goal.id)
    message = str(refused.value)
    assert f"{who} cannot {act} intent {goal.id} (owner: none): it is user:alice's goal" in message
    command = {"cancel": "cancel", "complete": "done", "supersede": "supersede"}[act]  # the CLI's names
    assert f"user:alice runs `intently goal {command} {goal.id}" in message
    kept = ix.goals.get(goal.id)
    if act == "complete":  # kept as a completion claim (test_completion_claims), the goal unended
        assert message.startswith("claimed, awaits user:alice: ")
        assert (kept.state, kept.version) == (IntentState.ACTIVE, 2) and kept.completion_claim is not None
        assert [op.op for op in ix.log.read("proj")[before:]] == ["COMPLETION_CLAIMED"]
    else:
        assert (kept.state, kept.version) == (IntentState.ACTIVE, 1)
        assert len(ix.log.read("proj")) == before  # refused before anything was appended
    # the person still decides, as before
    assert ENDINGS[act](ix.goals, goal.id) is not None
    assert ix.goals.get(goal.id).state is not IntentState.ACTIVE


def test_whose_goal_it_is_survives_rewriting_the_owner(ix: Intently) -> None:
    """A person's goal stays theirs whatever the owner field says, and the agent cannot rewrite
    it: setting the owner of alice's goal to itself, or clearing bob's from a goal it stated for
    him, is refused (then it could end them). One owned by a person is theirs even when an agent
    stated it, and one an agent stated that a person endorsed is theirs."""
    agent = _as(ix, "agent:claude")
    mine = ix.goals.add("Ship the API")
    with pytest.raises(PermissionDenied, match=r"cannot change the owner of intent .* \(owner: none\) to agent:claude"):
        agent.goals.edit(mine.id, owner="agent:claude")
    for_bob = agent.goals.add("Review the release notes", owner="bob")
    with pytest.raises(PermissionDenied, match=r"user:bob runs `intently goal edit .* --owner NAME`"):
        agent.goals.edit(for_bob.id, owner=CLEAR)
    with pytest.raises(PermissionDenied, match=r"\(owner: user:bob\): it is user:bob's goal.*user:bob runs"):
        agent.goals.complete(for_bob.id)
    endorsed = agent.goals.add("Rename the billing module")
    ix.goals.endorse(endorsed.id)
    with pytest.raises(PermissionDenied, match="it is user:alice's goal"):
        agent.goals.cancel(endorsed.id)
    for goal_id in (mine.id, for_bob.id, endorsed.id):
        kept = ix.goals.get(goal_id)
        assert kept.state is IntentState.ACTIVE and kept.owner in (None, "user:bob")
    # other edits of a person's goal by an agent with write access are as before
    assert agent.goals.edit(mine.id, context_note="blocked on review").context_note == "blocked on review"


def test_the_owning_agent_ends_the_goal_a_person_gave_it(ix: Intently) -> None:
    """RFC-0013 section 6's "owning agent": alice gives a goal to agent:ci (owner agent:ci);
    agent:ci, acting as itself, completes it. Another agent, even alice's own through MCP, may not."""
    ci = _as(ix, "agent:ci")
    given = ix.goals.add("Warm the build cache", owner="agent:ci")
    with pytest.raises(PermissionDenied, match=r"\(owner: agent:ci\): it is user:alice's goal"):
        _as(ix, "agent:mcp for user:alice").goals.cancel(given.id)
    assert ci.goals.complete(given.id, reason="cache warm").state is IntentState.COMPLETED
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=given.id)
    assert op.actor == "agent:ci"


@pytest.mark.parametrize("who", AGENTS)
def test_an_agents_own_goals_stay_under_its_control(ix: Intently, who: str) -> None:
    agent = _as(ix, who)
    done = agent.goals.add("Rename the module")
    dropped = agent.goals.add("Try the other parser", owner=None if who.startswith("agent:mcp") else who)
    replaced = agent.goals.add("Tidy the changelog")
    assert agent.goals.complete(done.id).state is IntentState.COMPLETED
    assert agent.goals.cancel(dropped.id, reason="the first one works").state is IntentState.CANCELLED
    assert agent.goals.supersede(replaced.id, text="Tidy the changelog and the README").state is IntentState.ACTIVE
    assert ix.goals.get(replaced.id).state is IntentState.SUPERSEDED
    # holding (reversible) a person's goal is unchanged: it is not ending it
    mine = ix.goals.add("Ship the API")
    assert agent.goals.hold(mine.id).state is IntentState.ON_HOLD


def test_another_person_with_write_access_is_unchanged(ix: Intently) -> None:
    ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)
    mine = ix.goals.add("Ship the API")
    assert ix.as_actor("user:bob").goals.cancel(mine.id).state is IntentState.CANCELLED


WORDS: dict[str, tuple[dict[str, object], str, str]] = {
    # field given to edit -> (the edit, what the refusal calls it, the flag the person runs)
    "completion_criteria": ({"completion_criteria": "a draft exists"}, "completion criteria", "--criteria TEXT"),
    "cleared criteria": ({"completion_criteria": CLEAR}, "completion criteria", "--criteria TEXT"),
    "type": ({"type": "RISK"}, "type", "--type TYPE"),
    "structured_value": ({"structured_value": {"endpoints": 1}}, "structured value", "structured_value=..."),
}


@pytest.mark.parametrize("field", sorted(WORDS))
@pytest.mark.parametrize("who", AGENTS)
def test_an_agent_cannot_change_the_persons_words_beyond_the_text(ix: Intently, who: str, field: str) -> None:
    """Only the text was guarded: an agent could lower alice's completion criteria ("all
    endpoints have tests" to "a draft exists") and then claim the goal done against its own
    bar, retype her goal as a risk, or rewrite its structured form. Each is refused, naming the
    goal, the field, its owner and the command alice runs, and nothing is written; alice
    changes them herself, an agent still changes its own goal's, and re-sending the value a
    field already has changes nothing and is no rewording."""
    goal = ix.goals.add(
        "Ship the API", completion_criteria="all endpoints have tests", structured_value={"endpoints": 12}
    )
    agent = _as(ix, who)
    edit, name, flag = WORDS[field]
    before = len(ix.log.read("proj"))
    with pytest.raises(PermissionDenied) as refused:
        agent.goals.edit(goal.id, **edit)  # type: ignore[arg-type]
    message = str(refused.value)
    assert f"{who} cannot change the {name} of intent {goal.id} (owner: none): it is user:alice's goal" in message
    assert "user:alice, who runs `" in message and flag in message and goal.id in message
    assert len(ix.log.read("proj")) == before
    kept = ix.goals.get(goal.id)
    assert (kept.version, kept.completion_criteria, kept.intent_type.value, kept.structured_value) == (
        1,
        "all endpoints have tests",
        "GOAL",
        {"endpoints": 12},
    )
    # unchanged words are no rewording; priority stays open to the agent, as before
    same = agent.goals.edit(goal.id, completion_criteria="all endpoints have tests", type="GOAL", priority="HIGH")
    assert same.priority.value == "HIGH"
    assert ix.goals.edit(goal.id, **edit).version == 3  # type: ignore[arg-type]  # alice's to change
    own = agent.goals.add("Refactor billing", completion_criteria="tests pass")
    assert agent.goals.edit(own.id, **edit).version == 2  # type: ignore[arg-type]


def test_a_refusal_of_several_of_the_persons_words_names_each(ix: Intently) -> None:
    goal = ix.goals.add("Ship the API", completion_criteria="all endpoints have tests")
    with pytest.raises(PermissionDenied) as refused:
        _as(ix, "agent:claude").goals.edit(goal.id, text="Draft an API plan", completion_criteria="a draft exists")
    message = str(refused.value)
    assert f"cannot change the text and completion criteria of intent {goal.id}" in message
    assert f"`intently goal edit {goal.id} --text TEXT --criteria TEXT`" in message
