"""One normalisation for trigger terms and turns, so the two always meet in the same form.

A turn becomes :class:`TurnText`: *segments* of stemmed tokens (a segment ends at
punctuation, a URL or a code span, so a phrase never matches across them) plus a per-token
negation flag, and *extras*: forms that a token also counts as (the joined form of a
hyphenated, camelCase or spaced compound, a synonym's canonical form, a broader term).

A trigger term becomes :class:`Term`: the alternative token sequences any one of which
satisfies it. Both sides go through :func:`word_tokens` with the same steps: NFKC, case
folding, accent folding, British-to-American spelling, apostrophes dropped, hyphen,
underscore, camelCase and in-name punctuation splitting (``CI/CD``, ``Node.js``), CJK
characters one token each, Snowball stemming.
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

__all__ = ["Term", "TurnText", "Word", "compound_stem", "compound_stems", "normalise_turn", "stem", "word_tokens"]

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
# A word: letters and digits, joined by hyphens, underscores or apostrophes, or, with no
# space around them, by ".", "/" or "&": a name such as "Node.js", "CI/CD", "v2.0", "R&D"
# or "I/O" is one word whose parts stay adjacent, so a trigger naming it meets it. A name
# may also begin with a dot (".NET", not a decimal point) and end in "++" or "#" ("C++",
# "C#"; "C++20" too, but "PR#12" is a reference): the symbol is part of the name, so "C++"
# is not "C" and ".NET" is not "net".
_WORD_PATTERN = (
    r"(?:(?<![\w.])\.(?=[^\W\d_]))?"
    r"[^\W_]+(?:['’_\-‐‑./&][^\W_]+)*"
    r"(?:\+\+(?![^\W\d]|[+\#])|\#(?![\w+\#]))?"
)
# Punctuation that ends a clause, so that a phrase never matches across it. It is tried
# after a word at each position, so the "." of "Node.js" or the "/" of "CI/CD" (inside a
# word) is not a break, while the "." ending a sentence or a spaced "/" still is.
_CLAUSE_BREAK = r"[.!?;:,()\[\]{}<>\"“”|/\\#*=+&^~@$%]"
_SCAN = re.compile(rf"(?P<word>{_WORD_PATTERN})|{_CLAUSE_BREAK}")
# Where a written word splits into parts; the capture keeps the joint, since a joint inside
# a name ("." "/" "&") glues into one token only between real words ("CI/CD" is "cicd",
# "Node.js" "nodejs"), never between initials or numbers ("R&D" is not "rd", "3.12" not "312").
_JOINTS = re.compile(r"([_\-‐‑./&])")
_NAME_JOINTS = frozenset("./&")
_MAX_JOINED = 12  # the longest spaced pair a turn also reads as one word, stemmed whole
_APOSTROPHES = re.compile(r"['’]")
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af])")

# British spellings folded to American ones. Both sides get the same fold, so a word that
# merely looks British (``contour`` -> ``contor``) still meets itself.
_SPELLING = (
    (re.compile(r"(?<=[a-z]{3})our(?=(?:s|ed|ing|ite|ites|able|er|ers)?$)"), "or"),
    (re.compile(r"(?<=[a-z]{3})is(?=(?:e|es|ed|ing|ation|ations|er|ers)$)"), "iz"),
    (re.compile(r"(?<=[a-z]{2})ys(?=(?:e|es|ed|ing)$)"), "yz"),
    (re.compile(r"(?<=[a-z]{3})tre(?=(?:s|d)?$)"), "ter"),
    (re.compile(r"(?<=[a-z]{3})ogue(?=s?$)"), "og"),
)
_ANY_SPELLING = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in _SPELLING))
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
    """One written word split into its parts (``roll-back`` -> ``roll``, ``back``), each stemmed.

    ``folded`` keeps the parts before stemming, so that two spaced words can be joined and
    stemmed as the one word they may also be written as ("on call" and "oncall" meet only
    once "oncall" is stemmed whole). ``bare`` holds forms a turn's word also counts as but a
    trigger never takes as an alternative: ".gitignore" in a turn mentions "gitignore", while
    a trigger ``.NET`` must not fire on "net".
    """

    parts: tuple[str, ...]
    joined: tuple[str, ...]  # forms of the whole compound, empty for a one-part word
    folded: tuple[str, ...] = ()
    bare: tuple[str, ...] = ()


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
    return _stem(part)


def compound_stem(first: str, second: str) -> str:
    """:func:`stem` of two spaced words joined, as their one-word form is stemmed."""
    return compound_stems([first + second])[0]


def compound_stems(joined: list[str]) -> list[str]:
    """:func:`stem` of many joined word pairs at once, for the spaced compounds of a turn.

    A turn has a pair per adjacent words, mostly never seen again, so they are not cached
    (they would evict the words themselves) and the plain ones go to Snowball in one call;
    the result is exactly :func:`stem`'s.
    """
    plain = [
        w.isascii()
        and w.isalpha()
        and len(w) > 3
        and w not in _IRREGULAR
        and w not in _SPELLING_WORDS
        and not _ANY_SPELLING.search(w)
        for w in joined
    ]
    stemmed = iter(_stemmer.stemWords([w for w, ok in zip(joined, plain, strict=True) if ok]))
    return [next(stemmed) if ok else _stem(w) for w, ok in zip(joined, plain, strict=True)]


def _stem(part: str) -> str:
    if not part.isascii() or not part.isalpha():
        return part
    word = _IRREGULAR.get(part) or _SPELLING_WORDS.get(part, part)
    if _ANY_SPELLING.search(word):  # one search instead of every rule on most words
        for pattern, repl in _SPELLING:
            word = pattern.sub(repl, word)
    # A final s is not dropped from a word of three letters ("aws" is not "aw", "sms" not
    # "sm", "ios" not "io"): at that length it is an acronym far more often than a plural.
    # Nor from a vowel-less word, which Snowball leaves alone: "https" is not "http", "gcs"
    # not "gc". A plural acronym is told apart by its case instead ("PRs", "RFCs", see
    # :func:`_camel_parts`), before folding loses it.
    if len(word) <= 3 and word.endswith("s"):
        return word
    stemmed: str = _stemmer.stemWord(word)
    return stemmed


def _lower_case_plural(word: str) -> str | None:
    """The singular a lower-case turn word may also mean, when :func:`stem` kept its s.

    Written in lower case, "rfcs" or "prs" is most likely a plural (and "https" a name): case,
    which tells "PRs" from "HTTPS", is gone. So a turn's lower-case vowel-less word, or a
    three-letter one Snowball would shorten ("ids", "ads"), also counts as its singular.
    Only in a turn: a trigger ``HTTPS`` or ``dns`` is that word and never its singular.
    """
    if not (word.isascii() and word.isalpha() and len(word) >= 3 and word.endswith("s")) or word.endswith("ss"):
        return None
    if not _VOWELS & set(word[:-1]):
        return word[:-1]
    if len(word) <= 3:
        shorter: str = _stemmer.stemWord(word)
        return shorter if shorter != word else None
    return None


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
    """Normalise one written word (a ``word`` match of :data:`_SCAN`) into stemmed parts and joined forms."""
    text = _APOSTROPHES.sub("", raw_word)
    # A name's symbols (".NET", "C++", "C#") stay on its first and last part, unstemmed.
    lead = "." if text.startswith(".") else ""
    mark = "++" if text.endswith("++") else "#" if text.endswith("#") else ""
    text = text[len(lead) : len(text) - len(mark)]
    chunks = _JOINTS.split(text)
    glue = all(
        chunks[i - 1].isalpha() and chunks[i + 1].isalpha() and len(chunks[i - 1]) > 1 and len(chunks[i + 1]) > 1
        for i in range(1, len(chunks), 2)
        if chunks[i] in _NAME_JOINTS
    )
    pieces: list[str] = []
    for chunk in chunks[::2]:
        if not chunk:
            continue
        for piece in _camel_parts(chunk):
            pieces.extend(p for p in _CJK.split(piece) if p)
    pairs = [(p, f) for p, f in ((p, _fold(p)) for p in pieces) if f]
    if not pairs:
        return Word((), ())
    folded = [f for _, f in pairs]
    stems = [stem(f) for f in folded]
    bare = [stems[0]] if lead else []  # ".gitignore" in a turn mentions "gitignore"
    # An all-capitals piece ending in S (HTTPS, GCS, AWS) is that name and nothing else.
    bare.extend(s for s in (_lower_case_plural(f) for p, f in pairs if not p.isupper()) if s)
    folded[0], stems[0] = lead + folded[0], lead + stems[0]
    folded[-1], stems[-1] = folded[-1] + mark, stems[-1] + mark
    parts = tuple(stems)
    if len(parts) <= 1 or not glue or any(_CJK.fullmatch(p) for p in parts):
        return Word(parts, (), tuple(folded), tuple(bare))
    whole = "".join(pieces)
    joined = {"".join(parts), lead + stem(_fold(whole)) + mark}
    return Word(parts, tuple(sorted(j for j in joined if j)), tuple(folded), tuple(bare))


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
        words: list[Word] = []
        for m in _SCAN.finditer(text, start, end):
            raw = m.group("word")
            if raw is None:  # a clause break
                if words:
                    segments.append(words)
                words = []
                continue
            word = word_tokens(raw)
            if word.parts:
                words.append(word)
        if words:
            segments.append(words)
    return segments


def normalise_turn(text: str, negation: NegationRule, synonyms: SynonymTable) -> TurnText:
    """Normalise a turn once; every armed intent is then matched against the result."""
    turn = TurnText()
    for words in raw_segments(text):
        tokens: list[str] = []
        folded: list[str] = []
        for word in words:
            tokens.extend(word.parts)
            folded.extend(word.folded)
        flags = negation.flags(tokens)
        pos = 0
        for word in words:
            n = len(word.parts)
            neg = flags[pos]  # a compound is negated when its head is, like a phrase
            for joined in word.joined + word.bare:
                turn.extras.append(((joined,), neg))
            pos += n
        # Spaced compounds: "roll back" also counts as "rollback", "dev net" as "devnet".
        # The joined word is also stemmed whole, as the one-word form is ("on call" is
        # "oncall", stemmed "oncal"; "data base" is "database", stemmed "databas").
        # Like a phrase, the compound is negated when its first word is ("no code freeze").
        # Only short pairs are stemmed whole: a one-word form longer than a dozen letters is
        # rare ("launch checklist" is never one word), and stemming every pair doubled the cost.
        short = [i for i in range(len(tokens) - 1) if len(folded[i]) + len(folded[i + 1]) <= _MAX_JOINED]
        whole = dict(zip(short, compound_stems([folded[i] + folded[i + 1] for i in short]), strict=True))
        for i in range(len(tokens) - 1):
            for form in dict.fromkeys((tokens[i] + tokens[i + 1], whole.get(i, ""))):
                if form:
                    turn.extras.append(((form,), flags[i]))
        turn.extras.extend(synonyms.expand(tokens, flags))
        turn.segments.append(tokens)
        turn.negated.append(flags)
    return turn
