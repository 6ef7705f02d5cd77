"""What provenance needs from the user's request, computed once per request and kept.

Every check opens a session on the whole conversation so far, and the session scans that text
for the numbers, addresses, IBANs and amounts it states (the request is a trusted source of
values) and for whose each IBAN is. The scan is linear in the text, but a Claude Code hook runs
each check in a new process: after a pasted log of megabytes every later check paid seconds of
CPU for the same answer, and in a long session each check paid for all the prompts again, so the
session's total grew with the square of its length. The facts are now kept beside the prompts'
readings (in the mapping the caller stores, keyed by the request's content hash and this
module's format), so a request is scanned once: later checks on the same prompts read the kept
facts, and a new prompt pays one scan.

A kept entry is checked as it is read back; one that does not parse is scanned again, never
trusted (as a damaged reading is).
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from ._payees import PayeeClause, payee_clauses
from ._values import amounts_in, atoms_of

__all__ = ["FACTS_FORMAT", "RequestFacts", "facts_key", "request_facts"]

#: Bump when what the facts hold, or how the scans compute them, changes: kept facts of another
#: format are not read (and the hook drops them from its record).
FACTS_FORMAT = 1
_PREFIX = "facts"


@dataclass(frozen=True)
class RequestFacts:
    """The request's atoms (:func:`atoms_of`), amounts (:func:`amounts_in`) and payee clauses
    (:func:`payee_clauses`): exactly what scanning the text gives."""

    atoms: frozenset[str]
    amounts: frozenset[str]
    payees: tuple[PayeeClause, ...]

    @classmethod
    def scan(cls, text: str) -> RequestFacts:
        return cls(frozenset(atoms_of(text)), frozenset(amounts_in(text)), payee_clauses(text))

    def to_json(self) -> dict[str, Any]:
        return {
            "atoms": sorted(self.atoms),
            "amounts": sorted(self.amounts),
            "payees": [{"iban": p.iban, "names": sorted(p.names), "amounts": sorted(p.amounts)} for p in self.payees],
        }

    @classmethod
    def from_json(cls, data: Any) -> RequestFacts:
        """The facts ``to_json`` wrote; ``ValueError`` for anything else."""
        if not isinstance(data, dict):
            raise ValueError("kept request facts are not an object")
        payees = data["payees"]
        if not isinstance(payees, list) or not all(isinstance(p, dict) for p in payees):
            raise ValueError("kept payee clauses are not a list of objects")
        return cls(
            _strings(data["atoms"]),
            _strings(data["amounts"]),
            tuple(PayeeClause(_string(p["iban"]), _strings(p["names"]), _strings(p["amounts"])) for p in payees),
        )


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _strings(values: Any) -> frozenset[str]:
    if not isinstance(values, list):
        raise ValueError("expected a list of strings")
    return frozenset(_string(v) for v in values)


def facts_key(text: str) -> str:
    """The key the facts of ``text`` are kept under (never a prompt reading's key, which opens
    with a number)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{_PREFIX}:{FACTS_FORMAT}:{digest}"


def request_facts(text: str, store: MutableMapping[str, Any] | None = None) -> RequestFacts:
    """The facts of ``text``: read from ``store`` when kept there, else scanned (and kept)."""
    key = facts_key(text)
    if store is not None and key in store:
        try:
            return RequestFacts.from_json(store[key])
        except (KeyError, TypeError, ValueError):
            pass  # damaged: scanned again below and replaced
    found = RequestFacts.scan(text)
    if store is not None:
        store[key] = found.to_json()
    return found
