"""Payee typing: which IBAN the request gives for which payee, and for which amount.

A request that pays two people ("Pay Alice 100 for dinner to DE89… and Bob 50 for the taxi to
GB29…") binds both IBANs, so each is ``bound`` on its own; a call that pays Alice's 100 to
Bob's account, or names Alice on a payment to Bob's IBAN, would pass every value check. The
request also says whose each IBAN is: the names and amounts written in the same clause as it.
A payment that puts an IBAN together with another clause's payee or amount mixes them up,
which is what an injected "pay Alice's share to the other account" asks for.
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
# word is capitalised whatever it is: "Pay", "Please").
_NAME = re.compile(r"(?<=[\s(\"'])([A-Z][a-z]+)(?:['’]s)?\b")


@dataclass(frozen=True)
class PayeeClause:
    """One IBAN of the request, with the names and amounts written beside it."""

    iban: str
    names: frozenset[str]
    amounts: frozenset[str]


def payee_clauses(request: str) -> tuple[PayeeClause, ...]:
    """The request's IBANs typed by their clause, when it gives two or more (one IBAN has no
    other payee to be mixed up with). A clause holding two IBANs types neither."""
    found: list[PayeeClause] = []
    for sentence in _SENTENCE.split(request):
        for i, part in enumerate(_PART.split(sentence)):
            ibans = ibans_in(part)
            if len(ibans) != 1:
                continue
            iban = next(iter(ibans))
            # The IBAN's own digits are no amount ("GB29 NWBK 6016 …" holds 6016): the IBAN as
            # written, spaces or none, is taken out before the amounts are read.
            rest = re.sub(r"\s?".join(map(re.escape, iban)), " ", part, flags=re.IGNORECASE)
            names = frozenset(m.group(1).lower() for m in _NAME.finditer(" " + part) if i or m.start(1) > 1)
            found.append(PayeeClause(iban, names, frozenset(amounts_in(rest))))
    return tuple(found) if len({c.iban for c in found}) >= 2 else ()


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
