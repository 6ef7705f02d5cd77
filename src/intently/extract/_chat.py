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


class ChatNoise:
    """Finds where the turn's own words begin, and whether the turn is only a reaction."""

    def __init__(self, reply_openers: list[str], reaction_openers: list[str]) -> None:
        def alternation(entries: list[str]) -> str:
            return "|".join(re.escape(e) for e in sorted(entries, key=len, reverse=True)) or r"(?!x)x"

        # The quote ends at the last `"` before the first blank line (quotes may hold newlines
        # and quotes of their own; the client always puts a blank line before the answer).
        self._reply = re.compile(rf"^\s*(?:{alternation(reply_openers)})\s*\"", re.IGNORECASE)
        self._reaction = re.compile(rf"^\s*(?:{alternation(reaction_openers)})\s", re.IGNORECASE)

    def own_words_start(self, text: str) -> int:
        """Offset where the speaker's own words begin (0 when there is no quoted prefix)."""
        match = self._reply.match(text)
        if match is None:
            return 0
        blank = re.compile(r"\"[ \t]*\n[ \t]*\n").search(text, match.end())
        if blank is not None:
            return blank.end()
        line = re.compile(r"\"[ \t]*\n").search(text, match.end())
        if line is not None:
            return line.end()
        # Some exports keep the reply on the quote's line ('Replying to "ACDC - please..." ok will do').
        same_line = re.compile(r"\"[ \t]+(?=\S)").search(text, match.end())
        return same_line.end() if same_line else 0

    def is_reaction(self, text: str) -> bool:
        return self._reaction.match(text) is not None
