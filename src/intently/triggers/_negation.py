"""The negation guard: "no objections" or "did not raise any concerns" is not a mention.

A token is *negated* when a negation cue (``no``, ``not``, ``never``, ``without``, any
``n't`` contraction, ...) precedes it in the same clause with only transparent words in
between (determiners, quantifiers, a few light verbs such as ``raise``, ``see``,
``have``, ``need``, and ``to``, so "don't need to upgrade" negates the upgrade). After a determiner-like cue (``no``, ``without``) the negation covers the next
words of the noun group too ("no launch checklist"); after ``not`` it covers one word, so
"we don't have enough Windows expertise" still mentions Windows. A compound or phrase takes
the flag of its first word (see ``normalise_turn``), so "no code freeze" negates the freeze.
A term counts as present only if at least one occurrence is not negated, so "we have no
rollback plan, but rollback came up" still fires. The rule is a short word list, the same
for every intent; an intent can switch the guard off.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from ._normalise import stem

__all__ = ["NegationRule"]

_CUES = (
    "no not never without none nobody nothing neither nor cannot lack lacks lacking "
    "dont doesnt didnt isnt arent wasnt werent wont cant couldnt shouldnt wouldnt hasnt havent hadnt "
    "neednt mustnt aint"
)
_TRANSPARENT = (
    "a an the any some more further other another additional real major big serious significant "
    "obvious new known such remaining outstanding open particular specific single "
    "have has had raise raised raising see seen saw find found hear heard get got need needs needed "
    "be been is are was were expect expected anticipate foresee report reported mention mentioned "
    "hit encounter encountered notice noticed spot spotted really yet still to"
)
# Words that end a noun group, so negation does not flow past them.
_FUNCTION = (
    "and or but to for of in on at by with from as that which who this these those it its we you they "
    "i he she is are was were be been will would should could can may might must do does did if then than "
    "so because while when where how what why "
    "think know believe want care mind like understand agree remember feel guess suppose say"
)
# Cues that negate a whole noun group ("no launch checklist"), not just the next word.
_DETERMINERS = "no without never none neither nor lack lacks lacking"
_MAX_GAP = 3  # transparent words allowed between a cue and the negated word
_MAX_CHAIN = 2  # words of a noun group that inherit a negation


class NegationRule:
    """Marks negated tokens in a segment of stemmed tokens."""

    @cached_property
    def cues(self) -> frozenset[str]:
        return frozenset(stem(w) for w in _CUES.split()) | frozenset(_CUES.split())

    @cached_property
    def determiners(self) -> frozenset[str]:
        return frozenset(stem(w) for w in _DETERMINERS.split())

    @cached_property
    def transparent(self) -> frozenset[str]:
        return frozenset(stem(w) for w in _TRANSPARENT.split())

    @cached_property
    def function_words(self) -> frozenset[str]:
        return frozenset(stem(w) for w in _FUNCTION.split())

    def flags(self, tokens: Sequence[str]) -> list[bool]:
        """One flag per token: is this occurrence negated?"""
        cues, transparent, function = self.cues, self.transparent, self.function_words
        out = [False] * len(tokens)
        for i, tok in enumerate(tokens):
            if tok not in cues:
                continue
            j = i + 1
            gap = 0
            while j < len(tokens) and gap <= _MAX_GAP:
                nxt = tokens[j]
                if nxt in cues:
                    break
                if nxt in transparent:
                    gap += 1
                    j += 1
                    continue
                out[j] = True
                if tok not in self.determiners:
                    break
                chain = 0
                k = j + 1
                while k < len(tokens) and chain < _MAX_CHAIN and tokens[k] not in function and tokens[k] not in cues:
                    out[k] = True
                    chain += 1
                    k += 1
                break
        return out
