"""Trigger entries read off the event description ("When unsafe code or undefined behaviour comes up").

People write the description in the words they think in and the ``--when`` terms in the
words they expect to be typed; the two often differ ("unsafe" in the entry, "undefined
behaviour" only in the description). When the description has the plain shape
"When <things> comes up / is discussed / ...", each of the things becomes an extra entry, so
the reminder fires on what the person said they care about.

The reading is deliberately narrow: only a list of short noun phrases joined by commas and
"or" before a predicate of being talked about. Descriptions of a state ("when staging is
down", "when slides are missing") name an event that the noun alone does not make, so they
give nothing. Derived entries are stored beside the user's own and listed like them, so
nothing fires for a reason the user cannot see; ``event_entries=False`` turns this off.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["entries_from_event", "with_event_entries"]

_TALKED_ABOUT = (
    r"discussed|mentioned|raised|proposed|brought\s+up|started|scheduled|shared|announced|reported|requested"
    r"|debated|considered|reviewed|talked\s+about|asked\s+about|suggested|planned"
)
_PREDICATE = (
    rf"(?:comes?|came)\s+up"
    rf"|(?:is|are|gets?|being)\s+(?:{_TALKED_ABOUT})(?:\s*(?:,|or)\s*(?:{_TALKED_ABOUT}))*"
)
_EVENT = re.compile(rf"^\s*(?:when(?:ever)?|if)\s+(?P<things>.+?)\s+(?:{_PREDICATE})\s*[.!]?\s*$", re.IGNORECASE)
_DETERMINER = re.compile(
    r"^(?:(?:a|an|the|any|our|my|your|their|some|new|possible|potential|upcoming|proposed)\s+)+", re.IGNORECASE
)
_PREPOSITION = re.compile(r"\b(?:of|on|for|to|in|with|about|from|by|at|between|against)\b", re.IGNORECASE)
_FUNCTION_WORDS = frozenset(
    {"of", "for", "to", "in", "on", "the", "a", "an", "with", "about", "from", "by", "at", "its", "their", "our", "my"}
)
_MAX_WORDS = 4  # longer "things" are clauses, not names of a topic


def entries_from_event(event: str) -> tuple[tuple[str, ...], ...]:
    """The entries an event description names, or none when it is not a plain list of topics."""
    found = _EVENT.match(event or "")
    if found is None:
        return ()
    out: list[tuple[str, ...]] = []
    parts = re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", found.group("things"))
    if any(_PREPOSITION.search(part) for part in parts[:-1]):
        return ()  # "an attack on the network or the clients": what "or" joins is not clear
    for part in parts:
        words = tuple(
            w for w in re.findall(r"[\w'-]+", _DETERMINER.sub("", part.strip())) if w.lower() not in _FUNCTION_WORDS
        )
        if not words or len(words) > _MAX_WORDS:
            return ()  # one part is not a short topic: the sentence is not the plain shape
        out.append(words)
    return tuple(out)


def with_event_entries(
    entries: tuple[tuple[str, ...], ...],
    event: str,
    *,
    limit: int,
    usable: Callable[[tuple[str, ...]], bool] = lambda entry: True,
) -> tuple[tuple[str, ...], ...]:
    """``entries`` plus the event's own, up to ``limit`` entries in all.

    An event entry that holds every word of an entry already there adds nothing (whatever
    it matches, the shorter one matches too) and is left out, so lists stay short.
    """
    out = list(entries)
    held = [_words(e) for e in entries]
    for extra in entries_from_event(event):
        words = _words(extra)
        if any(h <= words for h in held) or len(out) >= limit or not usable(extra):
            continue
        held.append(words)
        out.append(extra)
    return tuple(out)


def _words(entry: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for term in entry for w in re.findall(r"[\w'-]+", term.lower()))
