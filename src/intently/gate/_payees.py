"""Payee typing: which IBAN the request gives for which payee, and for which amount.

A request that pays two people ("Pay Alice 100 for dinner to DE89… and Bob 50 for the taxi to
GB29…") binds both IBANs, so each is ``bound`` on its own; a call that pays Alice's 100 to
Bob's account, or names Alice on a payment to Bob's IBAN, would pass every value check. The
request also says whose each IBAN is: the names and amounts written in the same clause as it,
and in the clauses of the message that refer to it by a name or a pronoun ("Alice's IBAN is
DE89…; pay her 100"). A payment that puts an IBAN together with another payee's name or
amount mixes them up, which is what an injected "pay Alice's share to the other account" asks
for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ._values import amounts_in, ibans_in, normalise

__all__ = ["PayeeClause", "mismatch", "payee_clauses"]

# Where one payee's part of a request ends: a sentence end, a semicolon, a line break, a comma,
# or "and" / "then" between two orders ("… to DE89… and pay Bob …").
_PART = re.compile(r"(?<=[.!?])\s+|[;\n]+|,\s+|\s+(?:and|then|and then)\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# A name as a request writes one: a capitalised word that does not open its sentence (a first
# word is capitalised whatever it is: "Pay", "Please"), or one that does with a possessive
# ("Alice's IBAN is …": no verb or filler takes an "'s").
_NAME = re.compile(r"(?<=[\s(\"'])([A-Z][a-z]+)(['’]s)?\b")
# A part that points back at a payee it does not name: "pay her 100", "send him the rest",
# "transfer 50 there", "the same account".
_PRONOUN = re.compile(
    r"\b(?:her|him|them|she|he|they|there|(?:this|that|the same|their|his) (?:account|iban|person|payee))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PayeeClause:
    """One IBAN of the request, with the names and amounts written beside it."""

    iban: str
    names: frozenset[str]
    amounts: frozenset[str]


# Capitalised words that name a time, never a payee ("Today's rent goes to DE89…").
_NOT_NAMES = frozenset([
    "today", "tomorrow", "yesterday", "tonight", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
])  # fmt: skip


def _names(part: str, first: bool) -> set[str]:
    """The names written in ``part`` (``first``: it opens its sentence, so its first word is a
    name only with a possessive)."""
    found = {
        m.group(1).lower() for m in _NAME.finditer(" " + part) if not first or m.start(1) > 1 or m.group(2) is not None
    }
    return found - _NOT_NAMES


def payee_clauses(request: str) -> tuple[PayeeClause, ...]:
    """The request's IBANs typed by what it writes about each, when it gives two or more (one
    IBAN has no other payee to be mixed up with). A clause holding two IBANs types neither.

    First, each IBAN takes the names and amounts of its own clause. Then a clause with no IBAN
    is bound, within the message only, to the one IBAN it refers to: by a name an IBAN's clause
    gave ("Alice's IBAN is DE89…. Pay Alice 100"), or else by a pronoun ("Alice's IBAN is
    DE89…; pay her 100") to the IBAN before it, when that is the only one of its sentence
    (or, if its sentence has none before it, of the last sentence that had any). Where the
    reference could be to either of two IBANs ("Alice's is DE89…, Bob's is GB29…; pay her
    100") the clause types nothing: a guess could refuse the payment the user asked for."""
    names: dict[str, set[str]] = {}
    amounts: dict[str, set[str]] = {}
    # (part, whether it opens its sentence, the IBAN a pronoun in it refers to) for each part
    # with no IBAN. Its names are read only once two IBANs are found: a pasted log of megabytes
    # has tens of thousands of such parts and, most often, no IBAN at all (a second of CPU at
    # every check, for nothing).
    loose: list[tuple[str, bool, str | None]] = []
    last_single: str | None = None  # the one IBAN of the last sentence that held any
    for sentence in _SENTENCE.split(request):
        here: list[str] = []  # the IBANs of this sentence so far, in order
        for i, part in enumerate(_PART.split(sentence)):
            ibans = ibans_in(part)
            if len(ibans) > 1:
                here += sorted(ibans)
                continue
            if not ibans:
                # A pronoun's IBAN: the one IBAN of its sentence so far, or of the last that had any.
                antecedent = (here[-1] if len(set(here)) == 1 else None) if here else last_single
                loose.append((part, i == 0, antecedent))
                continue
            iban = next(iter(ibans))
            here.append(iban)
            names.setdefault(iban, set()).update(_names(part, i == 0))
            amounts.setdefault(iban, set()).update(_amounts(part, iban))
        if here:
            last_single = here[0] if len(set(here)) == 1 else None
    if len(names) < 2:
        return ()
    owners: dict[str, set[str]] = {}
    for iban, written in names.items():
        for name in written:
            owners.setdefault(name, set()).add(iban)
    for part, first, antecedent in loose:
        written = _names(part, first)
        # A name an IBAN's clause gave counts even as the first word ("Alice gets 100").
        named = {iban for name in _names(part, False) for iban in owners.get(name, ())}
        target: str
        if len(named) == 1:
            target = next(iter(named))
        elif not named and antecedent is not None and _PRONOUN.search(part):
            target = antecedent
        else:
            continue
        names[target] |= written
        amounts[target] |= set(amounts_in(part))
    return tuple(PayeeClause(i, frozenset(names[i]), frozenset(amounts[i])) for i in names)


def _amounts(part: str, iban: str) -> set[str]:
    """The amounts of ``part`` but the IBAN's own digits ("GB29 NWBK 6016 …" holds 6016): the
    IBAN as written, spaces or none, is taken out before the amounts are read."""
    rest = re.sub(r"\s?".join(map(re.escape, iban)), " ", part, flags=re.IGNORECASE)
    return set(amounts_in(rest))


def mismatch(clauses: Iterable[PayeeClause], payee: object, texts: Iterable[str], amount: str | None) -> str | None:
    """Why paying ``payee`` with these other arguments (``texts``: the call's other strings;
    ``amount``, normalised) mixes up the request's payees, or ``None``: a name or an amount the
    request wrote only beside another IBAN, on a payment to this one."""
    clauses = tuple(clauses)
    iban = normalise(payee) if isinstance(payee, str) else ""
    own = [c for c in clauses if c.iban == iban]
    if not own:
        return None
    own_names = frozenset().union(*(c.names for c in own))
    own_amounts = frozenset().union(*(c.amounts for c in own))
    written = {w.lower() for t in texts for w in re.findall(r"[A-Za-z]+", t)}
    for other in clauses:
        if other.iban == iban:
            continue
        names = sorted((other.names - own_names) & written)
        if names:
            return f"the request gives {iban} for another payee, and {names[0]!r} the account {other.iban}"
        if amount is not None and own_amounts and amount in other.amounts - own_amounts:
            return f"the request gives {iban} for {', '.join(sorted(own_amounts))}, and {amount} to {other.iban}"
    return None
