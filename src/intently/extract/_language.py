"""Whether a turn is in English, the only language the rule extractor reads.

Why: a turn in another language used to give no candidates and no word about it, so a team
writing in German saw an empty review queue and took it for "nothing said". The test is cheap
and deterministic (no language model): mostly non-Latin letters, or function words of the
common European languages well outnumbering English ones. On the 5,160 English turns of the
labelled files it flags none; it flags German, Spanish, French, Italian, Dutch, Portuguese,
Russian and Chinese sentences of a line or more.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["looks_english"]

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_ENGLISH_WORDS = """a an the and or but if so to of in on at for with from by about as into than then i me my we us
    our you your he him his she her it its they them their this that these those there here is are was
    were be been being am do does did have has had will would shall should can could may might must not
    no yes what which who when where why how all any some just also very more most up out"""
_ENGLISH = frozenset(_ENGLISH_WORDS.split())
# German, Spanish, French, Italian, Dutch, Portuguese: none of them an English word as well.
_OTHER_WORDS = """der das und ist nicht ich werde wir sie ein eine den dem zu mit auf für von auch el los las y es yo
    que en por para con una un del se lo les et je nous vous est pas il elle des du au avec pour dans qui
    gli che di per non sono della het een ik wij niet voor met os um uma não eu nós com"""
_OTHER = frozenset(_OTHER_WORDS.split())


def looks_english(text: str) -> bool:
    """False only when the text is clearly in another language; short or mixed text counts as English."""
    words = _WORD.findall(text)
    letters = sum(len(w) for w in words)
    if letters < 4:
        return True
    latin = sum(1 for w in words for ch in w if ch.isascii() or "LATIN" in unicodedata.name(ch, ""))
    if latin < 0.6 * letters:
        return False
    english = sum(1 for w in words if w.lower() in _ENGLISH)
    other = sum(1 for w in words if w.lower() in _OTHER)
    return not (other >= 3 and other > 2 * english)
