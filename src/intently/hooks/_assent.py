"""A bare "yes, go ahead": the user agreeing to what the agent just proposed.

In a coding session the agent often proposes ("I'll make ``main`` return ``None`` on empty
input. Shall I?") and the user answers with an assent that names no action. Read alone, that
answer asks for nothing, so every change the agent then makes was refused as not requested.
The hook reads what was agreed to from the transcript (the agent's last message) and hands it
to the gate session, which takes the kinds of action it names and none of its values
(:meth:`intently.gate.Session.agree_to`).

Deterministic and deliberately narrow: a short answer made only of assent and politeness
words. "Yes, but not the tests" or "ok, now rename it" are not bare assents; the latter names
its own action.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["is_bare_assent", "last_agent_message"]

_ASSENT = (
    "yes",
    "yeah",
    "yep",
    "yup",
    "y",
    "ok",
    "okay",
    "k",
    "sure",
    "go ahead",
    "go for it",
    "do it",
    "do that",
    "please do",
    "proceed",
    "sounds good",
    "looks good",
    "lgtm",
    "that works",
    "works for me",
    "let's do it",
    "lets do it",
    "let's do that",
    "agreed",
    "approved",
    "perfect",
    "great",
    "good",
    "fine",
    "alright",
    "all right",
    "absolutely",
    "correct",
    "right",
)
_POLITE = ("please", "thanks", "thank you", "thx", "then", "and", "just", "that", "sounds", "plan", "the")
_WORDS = sorted(set(_ASSENT + _POLITE), key=len, reverse=True)
_ASSENT_WORD = re.compile(r"\b(?:" + "|".join(re.escape(a) for a in _ASSENT) + r")\b")
_PIECE = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in _WORDS) + r")\b")
_MAX_WORDS = 8
#: The agent's message is the proposal; a very long one is cut (its head carries the plan).
MAX_PROPOSAL_CHARS = 20_000


def is_bare_assent(prompt: str) -> bool:
    """Whether ``prompt`` only agrees: assent and politeness words, at most eight words, and at
    least one assent word. Anything else in it (an action, a "but", a "no") makes it a request
    of its own."""
    text = prompt.lower().replace("’", "'")
    if len(text.split()) > _MAX_WORDS:
        return False
    if not _ASSENT_WORD.search(text):
        return False
    rest = _PIECE.sub(" ", text)
    return not re.sub(r"[\s.,!?:;()\-👍]+", "", rest)


def last_agent_message(transcript: Path) -> str | None:
    """The agent's last text message in a Claude Code transcript, or ``None`` (no file, no such
    message, unreadable). Only what the main conversation showed the user counts: side chains,
    meta lines and tool traffic are skipped by the transcript reader."""
    from ..requirements._transcripts import read_transcript

    try:
        turns = read_transcript(transcript).turns
    except OSError:
        return None
    for turn in reversed(turns):
        if turn.role == "assistant":
            return turn.text[:MAX_PROPOSAL_CHARS]
    return None
