"""Chat-client noise: quoted reply prefixes and reaction lines.

Meeting chats exported from video-call tools carry the text of the message being answered
(`Replying to "Ok so conclusion: ..."`) and reaction events (`Reacted to "..." with 👍`), in the
language of each participant's client. What was quoted was said by someone else, earlier, and a
reaction says nothing new: neither may propose an intent for this turn's speaker. The openers
are reviewed data (``[chat]`` in ``lexicon.toml``).
"""

from __future__ import annotations

import re

__all__ = ["ChatNoise"]

# Where a quote ends and the answer begins, in order of preference: the blank line clients put
# before the answer, else a single line break, else (some exports) the answer on the quote's line
# ('Replying to "ACDC - please..." ok will do').
_QUOTE_ENDS = (
    re.compile(r"\"[ \t]*\n[ \t]*\n"),
    re.compile(r"\"[ \t]*\n"),
    re.compile(r"\"[ \t]+(?=\S)"),
)


class ChatNoise:
    """Finds where the turn's own words begin, and whether the turn is only a reaction."""

    def __init__(self, reply_openers: list[str], reaction_openers: list[str]) -> None:
        def alternation(entries: list[str]) -> str:
            return "|".join(re.escape(e) for e in sorted(entries, key=len, reverse=True)) or r"(?!x)x"

        # The quote runs to the first `"` that a line break or the answer follows (see _QUOTE_ENDS;
        # quotes may hold newlines and quotes of their own).
        self._reply = re.compile(rf"^\s*(?:{alternation(reply_openers)})\s*\"", re.IGNORECASE)
        self._reaction = re.compile(rf"^\s*(?:{alternation(reaction_openers)})\s", re.IGNORECASE)

    def own_words_start(self, text: str) -> int:
        """Offset where the speaker's own words begin (0 when there is no quoted prefix)."""
        quoted = self.quoted(text)
        return 0 if quoted is None else quoted[1]

    def quoted(self, text: str) -> tuple[str, int] | None:
        """The message a reply form quotes and the offset where the speaker's own words begin, or
        ``None`` when the turn has no quoted prefix (or its quote never ends). The quote says which
        earlier message the turn answers: ``observe`` matches it against a question waiting in review."""
        match = self._reply.match(text)
        if match is None:
            return None
        for quote_end in _QUOTE_ENDS:
            found = quote_end.search(text, match.end())
            if found is not None:
                return text[match.end() : found.start()], found.end()
        return None

    def is_reaction(self, text: str) -> bool:
        return self._reaction.match(text) is not None
