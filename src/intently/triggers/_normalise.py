"""One normalisation for trigger terms and turns, so the two always meet in the same form.

A turn becomes :class:`TurnText`: *segments* of stemmed tokens (a segment ends at
punctuation, a URL or a code span, so a phrase never matches across them) plus a per-token
negation flag, and *extras*: forms that a token also counts as (the joined form of a
hyphenated, camelCase or spaced compound, a synonym's canonical form, a broader term).

A trigger term becomes :class:`Term`: the alternative token sequences any one of which
satisfies it. Both sides go through :func:`word_tokens` with the same steps: NFKC, case
folding, accent folding, British-to-American spelling, apostrophes dropped, hyphen,
underscore and camelCase splitting, CJK characters one token each, Snowball stemming.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import Stemmer

if TYPE_CHECKING:
    from ._negation import NegationRule
    from ._synonyms import SynonymTable

__all__ = ["Term", "TurnText", "Word", "normalise_turn", "stem", "word_tokens"]

# Text that is not prose: URLs (with or without a scheme), Markdown code and file names
# with their paths (``build.py``, ``migrations/0042_add.sql``; not ``.js``, since "Node.js"
# is a name). An inline code span that is one plain word or a qualified name (`unsafe`,
# `Vec::new`) names that thing in prose and is kept (and consumed, so that its closing
# backtick is not read as the opening of a span running to the next one); a call (`foo()`), a snake_case
# identifier (`on_call`) or any other code is ignored.
_FILE_EXT = (
    "py|pyi|ts|tsx|jsx|rs|go|rb|java|kt|c|h|cc|cpp|hpp|cs|sh|sql|ya?ml|json|toml|ini|cfg|lock|md|rst|txt|html|css|proto"
)
_IGNORED = re.compile(
    r"```.*?```|(?P<mention>`[^\W_]+(?:(?:::|[.\-])[^\W_]+)*`)|`[^`\n]+`|(?:https?|ftp)://\S+|www\.\S+"
    r"|(?<![\w/.\-])(?:[\w.\-]+/)*[\w\-]+(?:\.[\w\-]+)*\.(?:" + _FILE_EXT + r")\b",
    re.IGNORECASE | re.DOTALL,
)
# A word: letters and digits, joined by hyphens, underscores or apostrophes.
_WORD = re.compile(r"[^\W_]+(?:['’_\-‐‑][^\W_]+)*")
_JOINERS = re.compile(r"[_\-‐‑]")
_APOSTROPHES = re.compile(r"['’]")
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af])")
_CLAUSE_BREAK = re.compile(r"[.!?;:,()\[\]{}<>\"“”|/\\#*=+&^~@$%]")

# British spellings folded to American ones. Both sides get the same fold, so a word that
# merely looks British (``contour`` -> ``contor``) still meets itself.
_SPELLING = (
    (re.compile(r"(?<=[a-z]{3})our(?=(?:s|ed|ing|ite|ites|able|er|ers)?$)"), "or"),
    (re.compile(r"(?<=[a-z]{3})is(?=(?:e|es|ed|ing|ation|ations|er|ers)$)"), "iz"),
    (re.compile(r"(?<=[a-z]{2})ys(?=(?:e|es|ed|ing)$)"), "yz"),
    (re.compile(r"(?<=[a-z]{3})tre(?=(?:s|d)?$)"), "ter"),
    (re.compile(r"(?<=[a-z]{3})ogue(?=s?$)"), "og"),
)
_SPELLING_WORDS = {"licence": "license", "defence": "defense", "offence": "offense", "grey": "gray"}

# Irregular verb forms the stemmer cannot reach ("frozen" is "freeze", "broke" is "break").
# Only forms that are rarely anything else: "left", "found" and "bit" stay as they are.
_IRREGULAR = {
    form: base
    for base, forms in {
        "freeze": "froze frozen",
        "break": "broke broken",
        "write": "wrote written",
        "choose": "chose chosen",
        "take": "took taken",
        "begin": "began begun",
        "drive": "drove driven",
        "fall": "fell fallen",
        "forget": "forgot forgotten",
        "hide": "hid hidden",
        "steal": "stole stolen",
        "speak": "spoke spoken",
        "wake": "woke woken",
        "throw": "threw thrown",
        "grow": "grew grown",
        "draw": "drew drawn",
        "fly": "flew flown",
        "ride": "rode ridden",
        "shake": "shook shaken",
        "tear": "tore torn",
        "run": "ran",
        "build": "built",
        "send": "sent",
        "spend": "spent",
        "lose": "lost",
        "go": "went gone",
        "give": "gave given",
        "rebuild": "rebuilt",
        "rewrite": "rewrote rewritten",
    }.items()
    for form in forms.split()
}

_stemmer = Stemmer.Stemmer("english")
_VOWELS = frozenset("aeiouy")


@dataclass(frozen=True, slots=True)
class Word:
    """One written word split into its parts (``roll-back`` -> ``roll``, ``back``), each stemmed."""

    parts: tuple[str, ...]
    joined: tuple[str, ...]  # forms of the whole compound, empty for a one-part word


@dataclass(frozen=True)
class Term:
    """A trigger term: any one of ``alternatives`` (token sequences) must appear.

    ``key`` is the canonical form (the first alternative), used for rarity counts and
    explanations.
    """

    text: str
    alternatives: tuple[tuple[str, ...], ...]
    phrase: bool = False
    key: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", " ".join(self.alternatives[0]))


@dataclass
class TurnText:
    """A normalised turn: tokens by segment, their negation flags, and extra forms."""

    segments: list[list[str]] = field(default_factory=list)
    negated: list[list[bool]] = field(default_factory=list)
    extras: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)

    def tokens(self) -> list[str]:
        return [t for seg in self.segments for t in seg]


@lru_cache(maxsize=200_000)
def stem(part: str) -> str:
    """Spelling fold and Snowball stem of one lower-case, accent-folded word part."""
    if not part.isascii() or not part.isalpha():
        return part
    word = _IRREGULAR.get(part) or _SPELLING_WORDS.get(part, part)
    for pattern, repl in _SPELLING:
        word = pattern.sub(repl, word)
    stemmed: str = _stemmer.stemWord(word)
    # Snowball keeps the s of vowel-less plurals (``rfcs``, ``prs``); acronyms need it gone.
    if len(stemmed) >= 3 and stemmed.endswith("s") and not (_VOWELS & set(stemmed[:-1])):
        stemmed = stemmed[:-1]
    return stemmed


def _fold(text: str) -> str:
    """Case and accent folding (NFKC is applied to the whole text before)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def _camel_parts(chunk: str) -> list[str]:
    """Split ``launchChecklist`` / ``HTTPServer`` / ``ES2022`` / ``RFCs`` at case and digit changes."""
    if chunk.islower() or chunk.isupper() or not any(c.isupper() for c in chunk):
        return _digit_parts(chunk)
    if len(chunk) > 2 and chunk[:-1].isupper() and chunk.endswith("s"):  # RFCs, PRs: plural acronym
        return [chunk[:-1]]
    out: list[str] = []
    start = 0
    for i in range(1, len(chunk)):
        prev, cur = chunk[i - 1], chunk[i]
        nxt = chunk[i + 1] if i + 1 < len(chunk) else ""
        if (prev.islower() and cur.isupper()) or (prev.isupper() and cur.isupper() and nxt.islower()):
            out.append(chunk[start:i])
            start = i
    out.append(chunk[start:])
    return [p for piece in out for p in _digit_parts(piece)]


def _digit_parts(chunk: str) -> list[str]:
    return [p for p in re.split(r"(?<=\d)(?=[^\W\d_])|(?<=[^\W\d_])(?=\d)", chunk) if p]


@lru_cache(maxsize=100_000)
def word_tokens(raw_word: str) -> Word:
    """Normalise one written word (a :data:`_WORD` match) into stemmed parts and joined forms."""
    pieces: list[str] = []
    for chunk in _JOINERS.split(_APOSTROPHES.sub("", raw_word)):
        if not chunk:
            continue
        for piece in _camel_parts(chunk):
            pieces.extend(p for p in _CJK.split(piece) if p)
    folded = [_fold(p) for p in pieces]
    parts = tuple(stem(p) for p in folded if p)
    if len(parts) <= 1:
        return Word(parts, ())
    joined = {"".join(parts), stem("".join(folded))}
    if any(_CJK.fullmatch(p) for p in parts):
        joined = set()
    return Word(parts, tuple(sorted(j for j in joined if j)))


def _spans(text: str) -> list[tuple[int, int]]:
    """Prose spans of ``text`` (start, end), with URLs and code left out."""
    if "`" not in text and "/" not in text and "." not in text:
        return [(0, len(text))]  # the common case, without running the pattern
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _IGNORED.finditer(text):
        if m.group("mention"):
            continue  # prose; matched only so that its closing backtick cannot open a code span
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    return spans


def raw_segments(text: str) -> list[list[Word]]:
    """Split prose into segments of words; punctuation, URLs and code end a segment."""
    text = unicodedata.normalize("NFKC", text)
    segments: list[list[Word]] = []
    for start, end in _spans(text):
        for clause in _CLAUSE_BREAK.split(text[start:end]):
            words = [w for w in map(word_tokens, _WORD.findall(clause)) if w.parts]
            if words:
                segments.append(words)
    return segments


def normalise_turn(text: str, negation: NegationRule, synonyms: SynonymTable) -> TurnText:
    """Normalise a turn once; every armed intent is then matched against the result."""
    turn = TurnText()
    for words in raw_segments(text):
        tokens: list[str] = []
        for word in words:
            tokens.extend(word.parts)
        flags = negation.flags(tokens)
        pos = 0
        for word in words:
            n = len(word.parts)
            neg = flags[pos]  # a compound is negated when its head is, like a phrase
            for joined in word.joined:
                turn.extras.append(((joined,), neg))
            pos += n
        # Spaced compounds: "roll back" also counts as "rollback", "dev net" as "devnet".
        # Like a phrase, the compound is negated when its first word is ("no code freeze").
        for i in range(len(tokens) - 1):
            turn.extras.append(((tokens[i] + tokens[i + 1],), flags[i]))
        turn.extras.extend(synonyms.expand(tokens, flags))
        turn.segments.append(tokens)
        turn.negated.append(flags)
    return turn
