"""``ix.extraction.observe``: the turn becomes evidence, candidates wait for review in goals."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from intently import Intently, InvalidInput, ManualClock
from intently.access import Permission
from intently.core.actors import Actor
from tests._config import set_config

TURN = {
    "speaker": "bob",
    "text": "Michael to close the issue by Friday. We agreed to ship v2. Should we drop Node 18?",
    "time": "2026-03-04T10:00:00Z",
    "channel": "minutes",
}


def test_observe_records_the_turn_and_proposes_inferred_intents(ix: Intently) -> None:
    result = ix.extraction.observe(TURN)
    (op,) = ix.log.read(ix.namespace, op="TURN_OBSERVED")
    assert result.evidence_id == op.id and op.payload["candidates"] == 3
    assert len(op.payload["sha256"]) == 64 and "text" not in op.payload  # a hash, not the words
    assert [(p.candidate.type.value, p.status) for p in result.proposals] == [
        ("COMMITMENT", "created"),
        ("DECISION", "recorded"),
        ("OPEN_QUESTION", "created"),
    ]
    queue = {i.value: i for i in ix.goals.review_queue()}
    commitment = queue["Michael to close the issue by Friday"]
    assert commitment.epistemic_type.value == "INFERRED" and commitment.confidence == pytest.approx(0.55)
    assert commitment.owner == "user:michael"
    assert commitment.target_completion == "2026-03-06T23:59:59.000000Z"
    assert commitment.evidence_ids == (result.evidence_id,)
    assert [d.text for d in ix.goals.decisions()] == ["We agreed to ship v2"]


@pytest.mark.parametrize(
    ("actor", "speaker", "trusted"),
    [
        ("agent:claude", "bob", True),  # an agent feeding turns through its own token
        ("user:alice", "agent:claude", True),  # a turn the agent said
        ("user:alice", "tool:web", True),
        ("user:alice", "bob", False),  # relayed: nobody vouches it was said as given
    ],
)
def test_a_decision_no_person_vouches_for_is_held_not_recorded(
    ix: Intently, actor: str, speaker: str, trusted: bool
) -> None:
    """A recorded decision skips review and becomes a proposed project rule at the next scan: only a
    person's turn makes one. The turn's other candidates wait in review whoever said them."""
    if actor != "user:alice":
        ix.access.grant(Actor.parse(actor), Permission.WRITE)
    with Intently.open(ix.home.path, actor=actor) as other:
        result = other.extraction.observe({**TURN, "speaker": speaker}, trusted=trusted)
    statuses = {p.candidate.type.value: p.status for p in result.proposals}
    assert statuses == {"COMMITMENT": "created", "DECISION": "held", "OPEN_QUESTION": "created"}
    held = next(p for p in result.proposals if p.status == "held")
    assert held.object_id is None and held.error is not None and "person" in held.error
    assert ix.goals.decisions() == [] and ix.log.read(ix.namespace, op="DECISION_RECORDED") == []


def test_message_id_is_the_evidence_id(ix: Intently) -> None:
    result = ix.extraction.observe({**TURN, "message_id": "slack:C1/1700000000.1"})
    assert result.evidence_id == "slack:C1/1700000000.1"
    (op,) = ix.log.read(ix.namespace, op="TURN_OBSERVED")
    assert op.target == "slack:C1/1700000000.1"


def test_dismissed_candidate_is_not_proposed_again_from_the_same_evidence(ix: Intently) -> None:
    turn = {**TURN, "text": "Should we drop Node 18?", "message_id": "m-7"}
    (first,) = ix.extraction.observe(turn).proposals
    assert first.object_id is not None
    ix.goals.dismiss(first.object_id)
    (again,) = ix.extraction.observe(turn).proposals
    assert again.status == "suppressed" and ix.goals.review_queue() == []


def test_restatement_of_an_active_intent_attaches_evidence(ix: Intently) -> None:
    first = ix.extraction.observe({**TURN, "text": "Michael to close the issue", "message_id": "m-1"})
    ix.goals.promote(first.proposals[0].object_id or "")
    second = ix.extraction.observe({**TURN, "text": "Michael to close the issue", "message_id": "m-2"})
    assert [p.status for p in second.proposals] == ["attached"]
    intent = ix.goals.get(first.proposals[0].object_id or "")
    assert set(intent.evidence_ids) == {"m-1", "m-2"}


def test_past_due_dates_are_kept_as_words_not_targets(ix: Intently, clock: ManualClock) -> None:
    """A turn from last month saying "by Friday" must not create an already-expired target."""
    clock.set(datetime(2026, 4, 1, tzinfo=UTC))
    result = ix.extraction.observe({**TURN, "text": "I'll send the report by Friday."})
    (proposal,) = result.proposals
    assert proposal.candidate.due_text == "by Friday"
    assert ix.goals.get(proposal.object_id or "").target_completion is None


def test_a_turn_with_nothing_in_it_is_still_evidence(ix: Intently) -> None:
    result = ix.extraction.observe({**TURN, "text": "Pots and pans are right over there."})
    assert result.proposals == []
    assert len(ix.log.read(ix.namespace, op="TURN_OBSERVED")) == 1


def test_bad_turn_names_the_field(ix: Intently) -> None:
    with pytest.raises(InvalidInput, match=r"turn\.time"):
        ix.extraction.observe({"speaker": "bob", "text": "hi", "time": "yesterday-ish"})


def test_unknown_extractor_setting_names_the_key(ix: Intently) -> None:
    set_config(ix.home.config_path, "extract", "extractor", '"magic"')
    with Intently.open(ix.home.path, actor="user:alice") as again, pytest.raises(InvalidInput, match="extract"):
        again.extraction.observe(TURN)


def test_reader_cannot_observe(ix: Intently) -> None:
    from intently import NotFound, PermissionDenied

    with pytest.raises((PermissionDenied, NotFound)):
        ix.as_actor("user:mallory").extraction.observe(TURN)
    assert ix.log.read(ix.namespace, op="TURN_OBSERVED") == []


@pytest.mark.parametrize("speaker", ["agent:ci", "user:root", "system:organiser"])
def test_a_speaker_given_as_an_actor_owns_what_they_undertake(ix: Intently, speaker: str) -> None:
    """A harness that names its speakers as actors finds the commitment under that actor, not
    under a user named after the whole string (``user:agent-ci``)."""
    result = ix.extraction.observe({**TURN, "speaker": speaker, "text": "I will update the runbook tomorrow."})
    (proposal,) = result.proposals
    intent = ix.goals.get(proposal.object_id or "")
    assert intent.owner == speaker
    assert [i.id for i in ix.goals.list_intents(state=None, owner=speaker)] == [intent.id]


@pytest.mark.parametrize("text", ["", "   \n"])
def test_a_turn_with_no_text_is_refused_and_nothing_is_logged(ix: Intently, text: str) -> None:
    with pytest.raises(InvalidInput, match="no text") as caught:
        ix.extraction.observe({**TURN, "text": text})
    assert caught.value.where == "turn.text"
    assert ix.log.read(ix.namespace, op="TURN_OBSERVED") == []


def test_the_same_words_from_another_owner_are_their_own_commitment(ix: Intently) -> None:
    carol = ix.extraction.observe({**TURN, "speaker": "carol", "text": "I'll send the invoice to Acme tomorrow."})
    dave = ix.extraction.observe({**TURN, "speaker": "dave", "text": "I'll send the invoice to Acme tomorrow."})
    assert [p.status for p in carol.proposals] == ["created"] and [p.status for p in dave.proposals] == ["created"]
    owners = sorted(str(i.owner) for i in ix.goals.review_queue())
    assert owners == ["user:carol", "user:dave"]
    again = ix.extraction.observe(
        {**TURN, "speaker": "dave", "text": "I'll send the invoice to Acme tomorrow.", "message_id": "m-9"}
    )
    assert [p.status for p in again.proposals] == ["attached"]  # Dave restating his own


def test_a_stated_due_date_that_already_passed_keeps_its_words(ix: Intently) -> None:
    result = ix.extraction.observe(
        {**TURN, "time": "2025-01-01T10:00:00Z", "text": "Next week I'll write the handbook."}
    )
    (proposal,) = result.proposals
    intent = ix.goals.get(proposal.object_id or "")
    assert intent.target_completion is None
    assert intent.context_note == "due stated as 'Next week' (already past when observed)"
    # a date that had passed when it was said is told apart: the speaker misspoke, or meant another year
    late = ix.extraction.observe({**TURN, "time": "2025-01-08T10:00:00Z", "text": "I'll file it by 2025-01-02."})
    assert ix.goals.get(late.proposals[0].object_id or "").context_note == (
        "due stated as 'by 2025-01-02' (already past when said)"
    )


def test_a_turn_without_a_time_was_said_now(ix: Intently, clock: ManualClock) -> None:
    result = ix.extraction.observe({"speaker": "bob", "text": "I'll send the deck tomorrow."})
    (op,) = ix.log.read(ix.namespace, op="TURN_OBSERVED")
    assert result.proposals and op.payload["time"].startswith(clock.now().strftime("%Y-%m-%d"))


def test_quoted_lines_and_code_are_not_the_speakers_words(ix: Intently) -> None:
    turn = {**TURN, "text": "> I'll draft the budget tomorrow\nSounds good!\n```\n# I'll refactor this later\n```"}
    assert ix.extraction.observe(turn).proposals == []


@pytest.mark.parametrize(("name", "actor"), [("José Núñez", "user:jose-nunez"), ("@Zoë", "user:zoe")])
def test_accented_owner_names_become_readable_actor_names(name: str, actor: str) -> None:
    from intently.extract import owner_actor

    assert owner_actor(name) == actor


@pytest.mark.parametrize(
    "text",
    [
        "Ich werde den Bericht bis Freitag schicken, wenn das Team zustimmt.",
        "Enviaré el informe el viernes si el equipo está de acuerdo con todo.",
        "Я отправлю отчёт в пятницу, если команда согласится.",
        "我周五之前会把报告发给你",
    ],
)
def test_a_turn_in_another_language_says_it_was_not_read(ix: Intently, text: str) -> None:
    """The rules read English only; an empty queue must not pass for "nothing was said"."""
    result = ix.extraction.observe({**TURN, "text": text})
    assert result.proposals == [] and result.unread is not None and "English" in result.unread
    assert result.to_json()["unread"] == result.unread
    (op,) = ix.log.read(ix.namespace, op="TURN_OBSERVED")
    assert op.payload["unread"] == result.unread


def test_an_english_turn_is_read(ix: Intently) -> None:
    result = ix.extraction.observe(TURN)
    assert result.unread is None and "unread" not in ix.log.read(ix.namespace, op="TURN_OBSERVED")[0].payload


def test_a_corrected_then_dismissed_candidate_stays_dismissed_for_its_message(ix: Intently) -> None:
    """The reviewer fixes the wording, then dismisses it anyway: observing the same message again
    (a re-sync, a replayed channel) must not bring the original wording back into the queue."""
    turn = {**TURN, "text": "There is a risk the upgrade could break the plugins.", "message_id": "m-11"}
    (first,) = ix.extraction.observe(turn).proposals
    ix.goals.edit(first.object_id or "", text="Upgrade may break plugins", awaiting_review=True)
    ix.goals.dismiss(first.object_id or "")
    (again,) = ix.extraction.observe(turn).proposals
    assert again.status == "suppressed" and ix.goals.review_queue() == []


@pytest.mark.parametrize("change", [{"type": "GOAL"}, {"owner": "rich"}, {"text": "Michael closes #12"}])
def test_an_edited_candidate_is_not_proposed_twice_from_its_message(ix: Intently, change: dict[str, str]) -> None:
    """Correcting a candidate's type, owner or text must not let the same message propose it again
    next to the corrected one: the reviewer would review it twice."""
    turn = {**TURN, "text": "Michael to close the issue.", "message_id": "m-12"}
    (first,) = ix.extraction.observe(turn).proposals
    ix.goals.edit(first.object_id or "", **change, awaiting_review=True)
    (again,) = ix.extraction.observe(turn).proposals
    assert (again.status, again.object_id) == ("attached", first.object_id)
    assert [i.id for i in ix.goals.review_queue()] == [first.object_id]


@pytest.mark.parametrize("close", ["complete", "cancel"])
def test_a_closed_intent_does_not_come_back_when_its_message_is_seen_again(ix: Intently, close: str) -> None:
    """Confirmed, then done (or cancelled): the same message observed again is not new work."""
    turn = {**TURN, "text": "I'll rotate the signing keys.", "message_id": "m-13"}
    (first,) = ix.extraction.observe(turn).proposals
    ix.goals.promote(first.object_id or "")
    getattr(ix.goals, close)(first.object_id or "")
    (again,) = ix.extraction.observe(turn).proposals
    assert again.status == "suppressed" and ix.goals.review_queue() == []


def test_two_types_on_one_span_stay_two_candidates(ix: Intently) -> None:
    """One span can carry a commitment and a goal; each is its own candidate, on every observe."""
    turn = {**TURN, "text": "I'm planning to return to China after graduation.", "message_id": "m-14"}
    first = ix.extraction.observe(turn).proposals
    assert sorted((p.candidate.type.value, p.status) for p in first) == [("COMMITMENT", "created"), ("GOAL", "created")]
    ix.goals.edit(first[0].object_id or "", type="RISK", awaiting_review=True)
    again = ix.extraction.observe(turn).proposals
    assert [(p.status, p.object_id) for p in again] == [("attached", p.object_id) for p in first]


def test_a_message_observed_again_in_a_busy_home_is_not_duplicated(ix: Intently) -> None:
    """With hundreds of live commitments sharing its words (the restatement search reads at most
    500), observing the same message again still finds the candidate it proposed."""
    ix.goals.add_many([{"text": f"Send the report part {n}", "type": "COMMITMENT"} for n in range(500)])
    turn = {**TURN, "text": "I'll send the report to the board.", "message_id": "m-15"}
    (first,) = ix.extraction.observe(turn).proposals
    (again,) = ix.extraction.observe(turn).proposals
    assert (first.status, again.status, again.object_id) == ("created", "attached", first.object_id)


def test_a_turn_that_fails_part_way_leaves_nothing_behind(ix: Intently, database_url: str | None) -> None:
    """The turn and each of its candidates used to commit one by one: a failure after the first
    candidate (a full disk, a crash) left the turn recorded with half its candidates, and
    observing it again could not tell. Now the turn and its candidates are one transaction."""
    # The database refuses a second intent, as a full disk would refuse a write part way.
    if database_url is None:
        refuse = [
            "CREATE TRIGGER refuse_second BEFORE INSERT ON goals_intents "
            "WHEN (SELECT COUNT(*) FROM goals_intents) >= 1 BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        ]
    else:
        refuse = [
            "CREATE FUNCTION refuse_second() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN "
            "IF (SELECT COUNT(*) FROM goals_intents) >= 1 THEN RAISE EXCEPTION 'disk full'; END IF; "
            "RETURN NEW; END $f$",
            "CREATE TRIGGER refuse_second BEFORE INSERT ON goals_intents FOR EACH ROW EXECUTE FUNCTION refuse_second()",
        ]
    store = ix.runtime.store
    with store.transaction() as tx:
        for sql in refuse:
            tx.execute(sql)
    size = ix.log.size(ix.namespace)
    with pytest.raises(Exception, match="disk full"):
        ix.extraction.observe(TURN)
    assert ix.log.size(ix.namespace) == size  # neither the turn nor its first candidate
    assert ix.log.read(ix.namespace, op="TURN_OBSERVED") == []
    assert ix.goals.review_queue() == [] and ix.goals.decisions() == []

    with store.transaction() as tx:
        tx.execute("DROP TRIGGER refuse_second" + ("" if database_url is None else " ON goals_intents"))
    result = ix.extraction.observe(TURN)  # observed again once the disk has room: all of it, once
    assert [p.status for p in result.proposals] == ["created", "recorded", "created"]
    assert len(ix.goals.review_queue()) == 2
    assert ix.log.verify().ok
