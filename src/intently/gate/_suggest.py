"""``intently gate vocab suggest``: vocabulary entries proposed from phrases nobody placed.

Suggestions are for a person to review and add to ``vocabulary.yaml`` (then re-sign the
bundle); nothing here changes what the gate authorises.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ._bundle import Bundle, default_bundle
from ._values import words
from ._vocabulary import stem_all

__all__ = ["suggest"]


def suggest(phrases: list[str], bundle: Bundle | None = None) -> list[dict[str, Any]]:
    """For each unplaced phrase, its leading verb-like word and the action kind it might mean."""
    b = bundle or default_bundle()
    vocab = b.vocabulary
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for phrase in phrases:
        toks = words(phrase)
        stems = stem_all(toks)
        for tok, st in zip(toks, stems, strict=True):
            if st in vocab.fillers or st in vocab.determiners or len(tok) < 3:
                continue
            counts[tok] += 1
            examples.setdefault(tok, phrase)
            break
    out = []
    for word, n in counts.most_common():
        rule = b.contracts.verb_rule(word)
        kinds = list(rule.get("kinds", [])) if rule else []
        out.append(
            {
                "phrase": word,
                "count": n,
                "example": examples[word],
                "suggested_kinds": kinds,
                "note": "matches a tool verb in contracts.yaml"
                if rule
                else "unknown: decide a kind or add to read_verbs",
            }
        )
    return out
