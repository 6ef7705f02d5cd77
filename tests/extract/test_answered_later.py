"""A question proposed from one turn and answered by a later turn of the same channel.

``observe`` notes the answer on the candidate (which stays in review for a person to decide),
through the log, and only for a person's turn on the same channel within the window.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from intently import Intently, InvalidInput
from intently.access import Permission
from intently.cli._app import app
from intently.core.actors import Actor
from tests._config import set_config

QUESTION = "Should we drop Node 18?"


def _say(ix: Intently, text: str, message_id: str | None, minute: int, **kw: Any) -> Any:
    turn = {
        "speaker": kw.pop("speaker", "carol"),
        "text": text,
        "time": datetime(2026, 3, 4, 10, 0, tzinfo=UTC) + timedelta(minutes=minute),
        "channel": kw.pop("channel", "tsc-chat"),
        "message_id": message_id,
    }
    return ix.extraction.observe(turn, **kw)


def _question(ix: Intently, text: str = QUESTION, message_id: str | None = "m-1", minute: int = 0, **kw: Any) -> str:
    result = _say(ix, text, message_id, minute, speaker="bob", **kw)
    (proposal,) = [p for p in result.proposals if p.candidate.type.value == "OPEN_QUESTION"]
    assert proposal.status == "created" and proposal.object_id is not None
    return proposal.object_id


def _untouched(ix: Intently, intent_id: str) -> None:
    intent = ix.goals.get(intent_id)
    assert intent.context_note is None and intent.version == 1
    assert ix.log.read(ix.namespace, op="INTENT_UPDATE", target=intent_id) == []


def test_a_yes_in_the_next_turn_is_noted_on_the_waiting_question(ix: Intently) -> None:
    qid = _question(ix)
    result = _say(ix, "Yes, let's drop it. I'll update the CI matrix.", "m-2", 1)
    (answered,) = result.answered
    assert answered.intent_id == qid and answered.question_evidence_id == "m-1"
    assert (answered.reply.signal, answered.reply.span) == ("answer", "Yes, let's drop it.")
    intent = ix.goals.get(qid)
    # still waiting for a person: annotated, not withdrawn
    assert intent.epistemic_type.value == "INFERRED" and qid in {i.id for i in ix.goals.review_queue()}
    assert intent.context_note is not None
    assert "message m-2" in intent.context_note and '"Yes, let\'s drop it."' in intent.context_note
    assert "chars 0..19" in intent.context_note and "carol" in intent.context_note
    (update,) = ix.log.read(ix.namespace, op="INTENT_UPDATE", target=qid)  # through the log
    assert update.payload["answered_by"]["evidence_id"] == "m-2"
    assert update.payload["answered_by"]["span"] == "Yes, let's drop it."
    assert result.to_json()["answered"][0]["intent_id"] == qid
    ix.goals.dismiss(qid, expected_version=intent.version)  # the person decides, in one step
    assert ix.goals.review_queue()[0].value.startswith("I'll update")


def test_a_decision_naming_an_option_links_the_recorded_decision(ix: Intently) -> None:
    qid = _question(ix, "Should we use Postgres or SQLite for the store?")
    result = _say(ix, "Let's go with Postgres.", "m-2", 2)
    (decided,) = [p for p in result.proposals if p.status == "recorded"]
    (answered,) = result.answered
    assert answered.reply.signal == "decision" and answered.reply.decision_id == decided.object_id
    note = ix.goals.get(qid).context_note
    assert note is not None and f"decision {decided.object_id} recorded" in note and "message m-2" in note


def test_agreement_that_names_the_question_verb_is_an_answer(ix: Intently) -> None:
    qid = _question(ix)
    (answered,) = _say(ix, "Agreed, dropping it in 3.0", "m-2", 1).answered
    assert answered.intent_id == qid and answered.reply.signal == "agreement"


@pytest.mark.parametrize(
    "reply",
    [
        "I'll send the meeting notes by Friday.",  # unrelated
        "Sounds good.",  # agrees with something, names nothing of the question
        "Ok, but should we drop Node 20 too?",  # asks back
        "No idea, ask Michael.",  # not an answer
        "We don't know yet.",  # the matter stays open
        "Let's go with the blue logo.",  # a decision about something else
    ],
)
def test_a_next_turn_that_does_not_answer_changes_nothing(ix: Intently, reply: str) -> None:
    qid = _question(ix)
    assert _say(ix, reply, "m-2", 1).answered == []
    _untouched(ix, qid)


@pytest.mark.parametrize(
    "reply",
    [
        "No probation is involved.",  # "no" as a determiner opens a statement
        "No one has looked at the CI logs yet.",
        "No tests cover the release script.",
    ],
)
def test_a_no_that_opens_an_unrelated_sentence_answers_nothing(ix: Intently, reply: str) -> None:
    """The turn right after the one question may answer it with a bare "No", but "No" that is a
    determiner ("No probation is involved.") opens a statement: it must not be noted as an answer
    the reviewer would then dismiss the question on."""
    qid = _question(ix)
    assert _say(ix, reply, "m-2", 1).answered == []
    _untouched(ix, qid)


@pytest.mark.parametrize(
    ("reply", "span"),
    [
        ("No.", "No."),
        ("No, keep it until April.", "No, keep it until April."),
        ("No - keep it until April.", "No - keep it until April."),
        ("No we keep it until April.", "No we keep it until April."),
        ("No let's wait for the LTS.", "No let's wait for the LTS."),
        ("Nope, not this release.", "Nope, not this release."),
        ("Yes we can.", "Yes we can."),
    ],
)
def test_a_no_that_stands_as_an_answer_still_answers(ix: Intently, reply: str, span: str) -> None:
    qid = _question(ix)
    (answered,) = _say(ix, reply, "m-2", 1).answered
    assert answered.intent_id == qid and (answered.reply.signal, answered.reply.span) == ("answer", span)


def test_a_yes_to_alternatives_picks_neither(ix: Intently) -> None:
    qid = _question(ix, "Should we use Postgres or SQLite for the store?")
    assert _say(ix, "Yes.", "m-2", 1).answered == []
    _untouched(ix, qid)
    other = _question(ix, "Should we drop Node 18 or not?", "m-3", 2)
    assert [a.intent_id for a in _say(ix, "Yes.", "m-4", 3).answered] == [other]


def test_the_opener_itself_names_nothing(ix: Intently) -> None:
    """ "Okay." after a question that says "okay" agrees with something, but names nothing of the
    question: only the words after the opener can name its verb or alternative."""
    qid = _question(ix, "Is it okay if we defer the vote, or should we hold it now?")
    assert _say(ix, "Okay.", "m-2", 1).answered == []
    _untouched(ix, qid)
    (answered,) = _say(ix, "Okay, we hold it now.", "m-3", 2).answered
    assert answered.intent_id == qid and answered.reply.signal == "agreement"


def test_the_look_back_reads_a_bounded_part_of_the_log(ix: Intently, monkeypatch: pytest.MonkeyPatch) -> None:
    """The look-back costs the same however long the log grows: it reads only the namespace's last
    SCAN_OPS operations, so a question further back in a busy namespace is not found."""
    from intently.extract import _answers

    monkeypatch.setattr(_answers, "SCAN_OPS", 3)
    qid = _question(ix)
    for n in range(3):
        _say(ix, f"I will review PR {n} by Friday.", f"x-{n}", 1, channel="elsewhere")
    assert _say(ix, "Yes, let's drop Node 18.", "m-2", 2).answered == []
    _untouched(ix, qid)
    monkeypatch.setattr(_answers, "SCAN_OPS", 20_000)
    assert [a.intent_id for a in _say(ix, "Yes, let's drop Node 18 now.", "m-3", 3).answered] == [qid]


def test_an_answer_on_another_channel_changes_nothing(ix: Intently) -> None:
    qid = _question(ix)
    assert _say(ix, "Yes, let's drop Node 18.", "m-2", 1, channel="other-chat").answered == []
    assert _say(ix, "Yes, let's drop Node 18.", "m-3", 1, channel="TSC-chat").answered == []
    _untouched(ix, qid)


def test_turns_with_no_channel_are_not_one_conversation(ix: Intently) -> None:
    """A turn given without a channel (the API's default) is placed nowhere: two such turns may
    come from anywhere, so one is not read as answering the other."""
    qid = _question(ix, channel="")
    assert _say(ix, "Yes, let's drop Node 18.", "m-2", 1, channel="").answered == []
    _untouched(ix, qid)


def test_a_reviewed_question_is_untouched(ix: Intently) -> None:
    confirmed = _question(ix)
    ix.goals.promote(confirmed)
    assert _say(ix, "Yes, let's drop it.", "m-2", 1).answered == []
    assert ix.goals.get(confirmed).context_note is None
    edited = _question(ix, "Should we drop Node 16?", "m-3", 2)
    ix.goals.edit(edited, text="Should we drop Node 16 in v4?", awaiting_review=True)  # still INFERRED
    assert _say(ix, "Yes, let's drop Node 16.", "m-4", 3).answered == []
    assert ix.goals.get(edited).context_note is None and ix.goals.get(edited).version == 2


def test_out_of_the_window_is_untouched(ix: Intently) -> None:
    late = _question(ix)
    assert _say(ix, "Yes, let's drop Node 18.", "m-2", 59 + 2).answered == []  # 61 minutes later
    _untouched(ix, late)
    far = _question(ix, "Should we drop Node 16?", "m-3", 0, channel="c2")
    for n, text in enumerate(["Hello all.", "Coffee is ready.", "The build is green."]):
        _say(ix, text, f"m-4{n}", 1 + n, channel="c2")
    assert _say(ix, "Yes, let's drop Node 16.", "m-5", 5, channel="c2").answered == []  # 4 turns later
    _untouched(ix, far)


def test_the_window_is_configured_and_validated(ix: Intently) -> None:
    set_config(ix.home.config_path, "extract", "answer_window_turns", "0")
    with Intently.open(ix.home.path, actor="user:alice", clock=ix.runtime.clock) as off:
        qid = _question(off)
        assert _say(off, "Yes, let's drop it.", "m-2", 1).answered == []
        _untouched(off, qid)
    set_config(ix.home.config_path, "extract", "answer_window_turns", "-1")
    with (
        Intently.open(ix.home.path, actor="user:alice") as bad,
        pytest.raises(InvalidInput, match=r"extract\.answer_window_turns"),
    ):
        _say(bad, "Yes.", "m-9", 1)
    set_config(ix.home.config_path, "extract", "answer_window_turns", "3")
    set_config(ix.home.config_path, "extract", "answer_window_minutes", "0")
    with (
        Intently.open(ix.home.path, actor="user:alice") as bad,
        pytest.raises(InvalidInput, match=r"extract\.answer_window_minutes"),
    ):
        _say(bad, "Yes.", "m-9", 1)


@pytest.mark.parametrize("message_ids", [True, False])
def test_observing_the_conversation_again_is_idempotent(ix: Intently, message_ids: bool) -> None:
    for _ in range(2):
        _say(ix, QUESTION, "m-1" if message_ids else None, 0, speaker="bob")
        _say(ix, "Yes, let's drop it.", "m-2" if message_ids else None, 1)
    (qid,) = [i.id for i in ix.goals.review_queue()]
    assert len(ix.log.read(ix.namespace, op="INTENT_UPDATE", target=qid)) == 1
    note = ix.goals.get(qid).context_note
    assert note is not None and note.count("answered by") == 1


def test_a_bare_yes_answers_only_the_one_question_just_asked(ix: Intently) -> None:
    both = _say(ix, "Should we drop Node 18? Should we rename the CLI?", "m-1", 0, speaker="bob")
    ids = {p.candidate.span: p.object_id for p in both.proposals}
    assert len(ids) == 2
    assert _say(ix, "Yes.", "m-2", 1).answered == []  # which one? a person reads it
    (answered,) = _say(ix, "Yes, rename it to intently.", "m-3", 2).answered  # names one
    assert answered.intent_id == ids["Should we rename the CLI?"]


@pytest.mark.parametrize(
    ("actor", "speaker", "trusted"),
    [
        ("user:alice", "carol", False),  # relayed over MCP / tool output: nobody vouches for it
        ("user:alice", "agent:claude", True),
        ("user:alice", "assistant", True),
        ("agent:claude", "carol", True),  # an agent feeding turns with its own token
    ],
)
def test_an_answer_no_person_vouches_for_changes_nothing(ix: Intently, actor: str, speaker: str, trusted: bool) -> None:
    qid = _question(ix)
    if actor != "user:alice":
        ix.access.grant(Actor.parse(actor), Permission.WRITE)
    with Intently.open(ix.home.path, actor=actor, clock=ix.runtime.clock) as other:
        result = _say(other, "Yes, let's drop Node 18.", "m-2", 1, speaker=speaker, trusted=trusted)
    assert result.answered == []
    _untouched(ix, qid)


def test_cli_observe_then_review_shows_the_answer(ix: Intently) -> None:
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(app, ["--home", str(ix.home.path), "--actor", "user:alice", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    def observe(text: str, speaker: str, minute: int, message_id: str) -> Any:
        when = f"2026-03-04T10:{minute:02d}:00Z"
        return run("review", "observe", text, "--speaker", speaker, "--time", when, "--channel", "dm-7",
                   "--message-id", message_id, "--json")  # fmt: skip

    asked = observe("Should we drop Node 18 in the next release?", "bob", 0, "slack:D7/1")
    assert asked["answered"] == [] and asked["proposals"][0]["status"] == "created"
    answer = observe("Yep, drop it.", "carol", 1, "slack:D7/2")
    assert [a["intent_id"] for a in answer["answered"]] == [asked["proposals"][0]["id"]]
    assert answer["answered"][0]["span"] == "Yep, drop it." and answer["answered"][0]["signal"] == "answer"
    (queued,) = run("review", "--json")
    assert queued["epistemic_type"] == "INFERRED"
    assert "message slack:D7/2" in queued["context_note"] and "'Yep, drop it.'" in queued["context_note"]
    again = observe("Yep, drop it.", "carol", 1, "slack:D7/2")  # the same turn again: nothing new
    assert again["answered"] == []
    text = runner.invoke(
        app,
        ["--home", str(ix.home.path), "--actor", "user:alice", "review", "observe", "Yes, drop Node 18.",
         "--speaker", "dave", "--time", "2026-03-04T10:02:00Z", "--channel", "dm-7", "--message-id", "slack:D7/3"],
    )  # fmt: skip
    assert text.exit_code == 0 and "answers question" in text.output
    listing = runner.invoke(app, ["--home", str(ix.home.path), "--actor", "user:alice", "review"], input="s\n")
    assert listing.exit_code == 0 and "note: answered by carol in message slack:D7/2" in listing.output


def test_the_eval_reads_each_labelled_turn_alone(tmp_path: Any) -> None:
    """Labelled turns are independent: a question followed by a row that would answer it in a live
    channel is still scored as the open question it is (the look-back is observe's, not the eval's)."""
    rows = [
        {"id": "q", "speaker": "bob", "source_kind": "chat", "text": "Should we adopt a chalk-like API?",
         "labels": [{"type": "OPEN_QUESTION"}]},
        {"id": "a", "speaker": "carol", "source_kind": "chat", "text": "Yes, let's adopt it.", "labels": []},
    ]  # fmt: skip
    data = tmp_path / "pair.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "extraction", "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["types"]["OPEN_QUESTION"] == {
        "precision": 1.0, "recall": 1.0, "f1": 1.0, "tp": 1, "fp": 0, "fn": 0,
    }  # fmt: skip


@pytest.mark.parametrize(
    "reply",
    [
        'Replying to "Should we drop Node 18?"\n\nYes, let\'s drop it.',
        'In reply to "Should we drop Node 18?"\nYes, let\'s drop it.',
        'Replying to "Should we drop Node 18?" Yes, let\'s drop it.',
        'Antworten auf "Should we drop Node 18?"\n\nYes, let\'s drop it.',
    ],
)
def test_a_chat_reply_quoting_the_question_answers_it_from_where_the_quote_ends(ix: Intently, reply: str) -> None:
    """A chat client's reply form starts with the question it answers: the quote is read against
    the waiting question and the answer from where the quote ends (it used to read the quote's
    "?" as the reply asking back, and note nothing)."""
    qid = _question(ix)
    (answered,) = _say(ix, reply, "m-2", 1).answered
    assert answered.intent_id == qid and answered.reply.signal == "answer"
    assert answered.reply.span == "Yes, let's drop it."
    assert reply[answered.reply.start : answered.reply.end] == "Yes, let's drop it."
    note = ix.goals.get(qid).context_note
    assert note is not None and f"chars {answered.reply.start}..{answered.reply.end}" in note


def test_a_quoted_reply_picks_the_question_it_quotes(ix: Intently) -> None:
    """The quote is strong evidence which question a reply answers: of two questions asked in one
    turn (where a bare "Yes" answers neither), it answers the one it quotes, even in words that no
    opener starts ("Node 18 goes in 3.0."); a reply quoting another message answers neither."""
    said = _say(ix, "Should we drop Node 18? Should we rename the CLI?", "m-1", 0, speaker="bob")
    ids = {p.candidate.span: p.object_id for p in said.proposals if p.candidate.type.value == "OPEN_QUESTION"}
    assert _say(ix, "Yes.", "m-2", 1).answered == []
    (answered,) = _say(ix, 'Replying to "Should we rename the CLI?"\n\nYes.', "m-3", 2).answered
    assert answered.intent_id == ids["Should we rename the CLI?"] and answered.reply.span == "Yes."
    (answered,) = _say(ix, 'Replying to "Should we drop Node 18?"\n\nNode 18 goes in 3.0.', "m-4", 3).answered
    assert answered.intent_id == ids["Should we drop Node 18?"] and answered.reply.signal == "quoted"


def test_a_bare_yes_quoting_another_message_answers_nothing(ix: Intently) -> None:
    """A bare "Yes" right after the one question answers it, unless it quotes another message:
    then it says yes to that one."""
    qid = _question(ix)
    assert _say(ix, 'Replying to "See you at the summit, ok?"\n\nYes.', "m-2", 1).answered == []
    _untouched(ix, qid)


def test_a_quoted_reply_to_alternatives_names_one_or_answers_nothing(ix: Intently) -> None:
    qid = _question(ix, "Should we use Postgres or SQLite for the store?")
    assert _say(ix, 'Replying to "Should we use Postgres or SQLite for the store?"\n\nYes.', "m-2", 1).answered == []
    assert _say(ix, 'Replying to "Should we use Postgres or SQLite?"\n\nNot sure yet.', "m-3", 2).answered == []
    _untouched(ix, qid)
    (answered,) = _say(ix, 'Replying to "Should we use Postgres or SQLite?"\n\nSQLite, for now.', "m-4", 3).answered
    assert answered.intent_id == qid and answered.reply.span == "SQLite, for now."


def test_a_name_label_answers_and_names_the_speaker(ix: Intently) -> None:
    """Minutes put the speaker in a ``Name:`` label: the answer is read after it, and the note and
    the log name the label's speaker, not the note-taker who fed the turn."""
    qid = _question(ix)
    text = "carol: Yes, let's drop it."
    (answered,) = _say(ix, text, "m-2", 1, speaker="minutes-bot").answered
    assert answered.intent_id == qid and answered.reply.signal == "answer"
    assert answered.reply.span == "Yes, let's drop it." and answered.reply.speaker == "carol"
    assert text[answered.reply.start : answered.reply.end] == answered.reply.span
    note = ix.goals.get(qid).context_note
    assert note is not None and note.startswith("answered by carol in message m-2") and "minutes-bot" not in note
    (update,) = ix.log.read(ix.namespace, op="INTENT_UPDATE", target=qid)
    assert update.payload["answered_by"]["speaker"] == "carol"
    assert _say(ix, text, "m-2", 1, speaker="minutes-bot").to_json()["answered"] == []  # noted once


@pytest.mark.parametrize("text", ["assistant: Yes, let's drop it.", "Decision: Yes."])
def test_a_label_that_is_no_person_answers_nothing(ix: Intently, text: str) -> None:
    """An agent's line in a transcript answers nothing; a ``Decision:`` label names no one (the
    turn's speaker still answers, as before)."""
    qid = _question(ix)
    answered = _say(ix, text, "m-2", 1).answered
    if text.startswith("assistant"):
        assert answered == []
        _untouched(ix, qid)
    else:
        assert [a.reply.speaker for a in answered] in ([], [None])


@pytest.mark.parametrize(
    ("question", "decision"),
    [
        # one word the conversation itself uses
        ("Is it ok to have an invalid vtable as a design question?", "Conclusion: have a design meeting next week."),
        # one word of a long question that is not its verb
        (
            "Should we pay the cost of adding new syntax to the language for iterators?",
            "We decided the syntax highlighting theme stays dark.",
        ),
    ],
)
def test_a_decision_sharing_one_loose_word_is_no_answer(ix: Intently, question: str, decision: str) -> None:
    """Fed every labelled file as live channels, most wrong notes were a recorded decision sharing
    one word with a question ("meeting", "syntax"): a decision answers only when it names the
    question's verb, an option of its alternatives, or two of its content words."""
    qid = _question(ix, question)
    result = _say(ix, decision, "m-2", 1)
    assert [p.status for p in result.proposals if p.candidate.type.value == "DECISION"] == ["recorded"]
    assert result.answered == []
    _untouched(ix, qid)


def test_a_decision_naming_the_question_verb_or_two_of_its_words_answers(ix: Intently) -> None:
    qid = _question(ix, "Should we raise a concern and resolve the matter asynchronously?")
    (answered,) = _say(ix, "We decided to raise a concern on the issue.", "m-2", 1).answered
    assert answered.intent_id == qid and answered.reply.signal == "decision"


def test_a_quote_cut_short_answers_the_question_it_starts(ix: Intently) -> None:
    """Clients cut long quotes ("Should we change the pri..."): the quote's words, in order, pick
    the question they start, not another question sharing some of its words (as in the Ethereum
    call chats fed through observe)."""
    said = _say(ix, "Should the price change? Should we change the price feed?", "m-1", 0)
    ids = {p.candidate.span: p.object_id for p in said.proposals if p.candidate.type.value == "OPEN_QUESTION"}
    assert len(ids) == 2
    reply = 'Replying to "Should we change the pri..."\n\nthat\'s the other way around: we want to inform clients.'
    (answered,) = _say(ix, reply, "m-2", 1).answered
    assert answered.intent_id == ids["Should we change the price feed?"]
    assert answered.reply.span == "that's the other way around: we want to inform clients."
