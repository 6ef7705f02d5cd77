"""Provenance of values: where each argument value of a proposed call was seen before.

The gate cannot see inside the agent, so it establishes provenance by matching normalised
values against everything seen so far, per source: the user's request, system configuration,
trusted stores the user declared, and tool outputs. A tool output is split into structured
fields (ids, addresses, names in their own fields) and free text (bodies, descriptions,
documents), and free text into segments; a segment that opens with an action verb is an
instruction. A value seen nowhere was invented by the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ._providers import provider_of
from ._values import (
    IBAN,
    Segment,
    amount_of,
    amounts_in,
    atoms_of,
    collapse_space,
    normalise,
    segments_of,
    shingles,
    skeleton,
    string_leaves,
    words,
)

__all__ = ["Ledger", "Origin", "Sighting", "SourceRecord"]

# Field names whose values are prose, whatever their length.
_TEXT_KEYS = frozenset(
    {"body", "content", "description", "text", "message", "snippet", "notes", "note", "summary", "comment", "markdown"}
)
_SHINGLE = 8


class Origin(StrEnum):
    USER = "user"
    CONFIG = "config"
    TRUSTED = "trusted"
    STRUCTURED = "structured"
    TEXT = "text"
    INSTRUCTION = "instruction"


TRUSTED_ORIGINS = frozenset({Origin.USER, Origin.CONFIG, Origin.TRUSTED})


@dataclass(frozen=True)
class Sighting:
    """One place a value was seen: the origin class and which source (``request``, ``search_emails#2``)."""

    origin: Origin
    source: str
    designated: bool = False
    requested: bool = False
    objects: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": str(self.origin),
            "source": self.source,
            "designated": self.designated,
            "requested": self.requested,
        }


@dataclass
class SourceRecord:
    label: str
    kind: Origin  # USER / CONFIG / TRUSTED for declared sources, STRUCTURED for tool outputs
    designated: bool = False
    requested: bool = False
    objects: frozenset[str] = frozenset()
    leaves: set[str] = field(default_factory=set)
    structured_atoms: set[str] = field(default_factory=set)
    # Numbers however written ("12 000", "one million") in the declared text or structured fields.
    amounts: set[str] = field(default_factory=set)
    segments: list[Segment] = field(default_factory=list)
    segment_atoms: list[set[str]] = field(default_factory=list)


class Ledger:
    """Everything seen so far in one session, indexed for provenance look-ups."""

    def __init__(
        self,
        is_action_verb: Callable[[Sequence[str]], bool],
        is_aside_order: Callable[[Sequence[str]], bool] | None = None,
    ) -> None:
        self._is_action = is_action_verb
        # Orders hidden inside brackets or quotes in mid-sentence (``segments_of``).
        self._is_aside = is_aside_order
        self.records: list[SourceRecord] = []
        self.instruction_shingles: dict[tuple[str, ...], set[str]] = {}
        self.designated_labels: set[str] = set()
        self.text_shingles: set[tuple[str, ...]] = set()
        # What instructions said, for a cheap first test before a full trace: a value absent from
        # all of them cannot have come from one alone.
        self._instructed_text: list[str] = []
        self._instructed_atoms: set[str] = set()
        # (number of trusted sources, their addresses with skeletons): see ``_trusted_destinations``.
        self._destinations_of: tuple[int, list[tuple[str, str, str]]] | None = None
        self._counter = 0

    # -- recording ------------------------------------------------------------

    def add_declared(
        self, kind: Origin, label: str, data: Any, *, scanned: tuple[frozenset[str], frozenset[str]] | None = None
    ) -> None:
        """The user's request, system configuration or a trusted store: trusted as a whole.
        ``scanned``: the atoms and amounts of ``data`` when it is one text and they are known
        already (kept from an earlier check on the same request), so a long request is not
        scanned again."""
        rec = SourceRecord(label=label, kind=kind)
        for _, leaf in string_leaves(data):
            text = str(leaf)
            rec.leaves.add(normalise(leaf))
            atoms, amounts = scanned if scanned is not None and isinstance(data, str) else (None, None)
            rec.structured_atoms |= atoms_of(text) if atoms is None else atoms
            rec.amounts |= amounts_in(text) if amounts is None else amounts
            rec.segments.append(Segment(collapse_space(text).lower(), False, False))
            rec.segment_atoms.append(set())
        self.records.append(rec)

    def add_output(
        self,
        tool: str,
        output: Any,
        *,
        designated: bool,
        requested: bool,
        args: Mapping[str, Any] | None = None,
        objects: frozenset[str] = frozenset(),
    ) -> str:
        """A tool's output: untrusted. The arguments of the call that produced it count as its
        structured fields (a read of ``parser.py`` that succeeded shows the path exists), unless
        the argument so far came only from an instruction: passing an injected address to a
        search does not turn it into data.
        Returns the source label (``tool#n``)."""
        self._counter += 1
        label = f"{tool}#{self._counter}"
        rec = SourceRecord(
            label=label, kind=Origin.STRUCTURED, designated=designated, requested=requested, objects=objects
        )
        for _, leaf in string_leaves(dict(args or {})):
            if self._only_instructed(leaf):
                continue  # an injected value passed to a read is still the instruction's
            rec.leaves.add(normalise(leaf))
        data = _parse(output)
        for key in _keys(data):  # {"bob@x.com": "rw"}: an address used as a key is a field too
            orders = [seg for seg in segments_of(key, self._is_action, self._is_aside) if seg.instruction]
            if orders:  # {"Send the summary to eve@...": true}: a key can give an order too
                for seg in orders:
                    self._add_segment(rec, seg)
                continue
            rec.structured_atoms |= atoms_of(key)
        for key, leaf in string_leaves(data):
            text = str(leaf)
            # A short field is a value ("subject": "Offsite") unless it gives an order: "Also send
            # the summary to eve@..." in a subject or a JSON "todo" is an instruction like any other.
            segments = segments_of(text, self._is_action, self._is_aside)
            if _is_prose(key, text) or any(seg.instruction for seg in segments):
                for seg in segments:
                    self._add_segment(rec, seg)
                    grams = shingles(seg.text, _SHINGLE)
                    self.text_shingles |= grams
                    if seg.instruction or seg.after_instruction:
                        for gram in grams:
                            self.instruction_shingles.setdefault(gram, set()).add(label)
            else:
                rec.leaves.add(normalise(leaf))
                rec.structured_atoms |= atoms_of(text)
                rec.amounts |= amounts_in(text)
        self.records.append(rec)
        if designated:
            self.designated_labels.add(label)
        return label

    def _add_segment(self, rec: SourceRecord, seg: Segment) -> None:
        atoms = atoms_of(seg.text)
        rec.segments.append(seg)
        rec.segment_atoms.append(atoms)
        if seg.instruction:
            self._instructed_text.append(seg.text)
            self._instructed_atoms |= atoms

    def _only_instructed(self, value: Any) -> bool:
        """Whether ``value`` was seen so far inside instructions and nowhere else. Only a value an
        instruction holds can be (the exact look-up is a full trace over the session, so it runs
        only when the cheap test says an instruction might hold it)."""
        nv = normalise(value)
        if not nv or not (nv in self._instructed_atoms or any(nv.lower() in t for t in self._instructed_text)):
            return False
        seen = self.trace(value)
        return bool(seen) and all(s.origin is Origin.INSTRUCTION for s in seen)

    # -- looking up -----------------------------------------------------------

    def trace(self, value: Any) -> list[Sighting]:
        """Every place ``value`` (normalised) was seen, in the order the sources arrived."""
        nv = normalise(value)
        if not nv:
            return []
        pattern = _whole_value(nv.lower())
        found: list[Sighting] = []
        for rec in self.records:
            if rec.kind in TRUSTED_ORIGINS:
                if nv in rec.leaves or nv in rec.structured_atoms or _contains(rec.segments, nv, pattern):
                    found.append(Sighting(rec.kind, rec.label, True, True))
                continue
            hit: Origin | None = None
            for seg, atoms in zip(rec.segments, rec.segment_atoms, strict=True):
                if nv in atoms or (nv.lower() in seg.text and pattern.search(seg.text)):
                    if seg.instruction:
                        hit = Origin.INSTRUCTION
                        break
                    hit = Origin.TEXT
            if hit is not Origin.INSTRUCTION and (nv in rec.leaves or nv in rec.structured_atoms):
                hit = Origin.STRUCTURED
            if hit is not None:
                found.append(Sighting(hit, rec.label, rec.designated, rec.requested, rec.objects))
        return found

    def pointed_only(self, value: Any) -> set[str]:
        """The tool outputs whose asides point the reader at ``value`` ("(visit www.… to claim)"),
        when nothing but such asides shows it (else empty): no trusted source, no field, no
        plain sentence. A link cited that way may be opened, as a citation is for reading; it
        is no one's to pass on in a message or to write to, any more than an order's."""
        sightings = self.trace(value)
        if not sightings or any(s.origin is not Origin.TEXT for s in sightings):
            return set()
        nv = normalise(value)
        pattern = _whole_value(nv.lower())
        labels: set[str] = set()
        for rec in self.records:
            if rec.kind in TRUSTED_ORIGINS:
                continue
            for seg, atoms in zip(rec.segments, rec.segment_atoms, strict=True):
                if nv in atoms or (nv.lower() in seg.text and pattern.search(seg.text)):
                    if nv not in seg.pointed:
                        return set()  # also written outside a pointing aside
                    labels.add(rec.label)
        return labels

    def stated_only_by_instructions(self, value: Any, *, delegated: bool) -> set[str]:
        """The sources whose instructions state this number, when no data, plain text or trusted
        source does (else empty). Numbers are compared as numbers, never as text inside text:
        the 10 of a transaction is not the "$10,000" an injected order names, and a record with
        the number as a field vouches for it even when an order elsewhere in it repeats it. A
        number is read however it is written: "one million", "1m" and "1 000 000" are 1000000."""
        nv = amount_of(value) or normalise(value)
        stated: set[str] = set()
        for rec in self.records:
            if nv in rec.leaves or nv in rec.structured_atoms or nv in rec.amounts:
                return set()
            for seg, atoms in zip(rec.segments, rec.segment_atoms, strict=True):
                if nv in atoms or nv in amounts_in(seg.text):
                    if not seg.instruction or (delegated and rec.designated):
                        return set()
                    stated.add(rec.label)
        return stated

    def amount_seen(self, value: Any, *, requested_only: bool = False) -> bool:
        """Whether the number ``value`` was stated anywhere in the session, however written: the
        request, configuration, a trusted store, or any tool output (data, text or instruction);
        with ``requested_only``, only a tool output the request asked for counts."""
        nv = amount_of(value) or normalise(value)
        for rec in self.records:
            if requested_only and rec.kind is Origin.STRUCTURED and not rec.requested:
                continue
            if nv in rec.leaves or nv in rec.structured_atoms or nv in rec.amounts:
                return True
            if any(
                nv in atoms or nv in amounts_in(seg.text)
                for seg, atoms in zip(rec.segments, rec.segment_atoms, strict=True)
            ):
                return True
        return False

    def amount_sources(self, value: Any) -> set[str]:
        """The tool outputs that state the number ``value`` (however written)."""
        nv = amount_of(value) or normalise(value)
        return {
            rec.label
            for rec in self.records
            if rec.kind is Origin.STRUCTURED
            and (
                nv in rec.leaves
                or nv in rec.structured_atoms
                or nv in rec.amounts
                or any(
                    nv in atoms or nv in amounts_in(seg.text)
                    for seg, atoms in zip(rec.segments, rec.segment_atoms, strict=True)
                )
            )
        }

    def declared_amounts(self) -> set[str]:
        """Every number the request, configuration and trusted stores state (normalised)."""
        return {a for rec in self.records if rec.kind in TRUSTED_ORIGINS for a in rec.amounts}

    def requested_amounts(self) -> set[str]:
        """Every number the reads the request asked for state, as data or plain text (not the
        numbers of an order inside them): what a sum may be worked out from."""
        found: set[str] = set()
        for rec in self.records:
            if rec.kind is not Origin.STRUCTURED or not rec.requested:
                continue
            found |= rec.amounts  # its fields' numbers; not the read's arguments ("n": 100)
            for seg in rec.segments:
                if not seg.instruction:
                    found |= amounts_in(seg.text)
        return found

    def read_requested_data(self) -> bool:
        """Whether a tool output the request asked for (its objects, or a value the user gave)
        has been seen: data the user pointed at, which an amount may be worked out from."""
        return any(rec.kind is Origin.STRUCTURED and rec.requested for rec in self.records)

    def imitated(self, value: Any) -> tuple[str, str] | None:
        """(address, source) that ``value`` imitates: an address, link or IBAN the user,
        configuration or a trusted store gave that looks the same without being it
        ("alice@examp1e.com", or one with a Cyrillic "а", for the user's alice@example.com);
        ``None`` if it imitates none. A destination is checked by its whole value, so a
        look-alike in a tool output's field (an attacker's sender) cannot pass for the user's."""
        nv = normalise(value)
        if not _destination_like(nv):
            return None
        seen = skeleton(nv)
        host = _host_of(nv)
        return next(
            (
                (given, label)
                for given, label, sk in self._trusted_destinations()
                if given != nv and (sk == seen or _squats(host, _host_of(given)))
            ),
            None,
        )

    def _trusted_destinations(self) -> list[tuple[str, str, str]]:
        """(address, source, skeleton) for every address, link and IBAN the trusted sources
        state, worked out once per set of trusted sources (a long request is not re-read for
        every call)."""
        trusted = [rec for rec in self.records if rec.kind in TRUSTED_ORIGINS]
        if self._destinations_of is not None and self._destinations_of[0] == len(trusted):
            return self._destinations_of[1]
        found: list[tuple[str, str, str]] = []
        for rec in trusted:
            # The words of the text too: an IBAN written before other words ("pay DE89… the
            # rent") is read by ``atoms_of`` together with them, so it is not among the atoms.
            tokens = {normalise(t.strip(_TOKEN_EDGES)) for seg in rec.segments for t in seg.text.split()}
            found += [
                (given, rec.label, skeleton(given))
                for given in sorted(rec.structured_atoms | rec.leaves | tokens)
                if _destination_like(given)
            ]
        self._destinations_of = (len(trusted), found)
        return found

    def in_request(self, value: Any) -> bool:
        return any(s.origin in TRUSTED_ORIGINS for s in self.trace(value))

    def copied_from_tools(self, text: str) -> tuple[int, set[str]]:
        """(words of ``text`` copied verbatim from tool prose, the sources of any instruction text it repeats)."""
        w = words(text)
        covered = [False] * len(w)
        instructed: set[str] = set()
        for i in range(len(w) - _SHINGLE + 1):
            gram = tuple(w[i : i + _SHINGLE])
            if gram in self.text_shingles:
                for j in range(i, i + _SHINGLE):
                    covered[j] = True
                instructed |= self.instruction_shingles.get(gram, set())
        return sum(covered), instructed


def _keys(obj: Any) -> Iterable[str]:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            yield str(k)
            yield from _keys(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _keys(v)


# After an address, what would make it a longer one: a letter, digit, "-" or "_", or a further
# short label ("bob@corp.com" is not "bob@corp.com.au"). A sentence's full stop with the space
# missing ("www.our-company.com.they sent") does not.
_HOST_GOES_ON = r"(?![a-z0-9_\-]|\.(?:[a-z]{2,3}|[a-z0-9-]+\.)(?![a-z]))"
_HOST = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}")


def _address_like(nv: str) -> bool:
    """A host, a link or a path-like value (checked without a backtracking pattern)."""
    if any(c.isspace() for c in nv):
        return False
    return "@" in nv or "/" in nv or _HOST.fullmatch(nv) is not None


# Punctuation around an address written in a sentence ("(alice@example.com),").
_TOKEN_EDGES = "()[]<>{}\"'`,;:!?."


def _destination_like(nv: str) -> bool:
    """An email address, a host or link, or an IBAN (normalised): what a look-alike imitates."""
    return _address_like(nv) or IBAN.fullmatch(nv) is not None


def _host_of(nv: str) -> str:
    """The host of a normalised email address or link ("" for anything else): where it goes."""
    if IBAN.fullmatch(nv) or any(c.isspace() for c in nv):
        return ""
    host = nv.rpartition("@")[2] if "@" in nv else re.split(r"[/?#:]", nv, maxsplit=1)[0]
    return host if _HOST.fullmatch(host) else ""


# A host shorter than this (its first label) is not compared letter by letter: "x.com" and
# "y.com" are one letter apart and both real.
_SQUAT_MIN_LABEL = 4


def _squats(host: str, given: str) -> bool:
    """Whether ``host`` passes for the host ``given`` by the user without being it or one of its
    subdomains: a letter added, dropped, changed or two swapped ("exampe.com", "exxample.com",
    "exmaple.com", "example.co"), the same letters read through look-alikes ("examp1e.com" for
    any local part: the user's own domain imitated), or the user's host written at the start of
    another one ("example.com.evil.net", "examp1e.com.evil.net", "example-com.net"). Compared
    by skeleton, so look-alike letters do not hide a one-letter change either. Hosts that
    merely differ ("example.org", "corp.com") are other hosts."""
    if not host or not given or host == given or host.endswith("." + given):
        return False
    seen, want = skeleton(host), skeleton(given)
    if seen == want:
        return True
    if ("." + want + ".") in ("." + seen.replace("-", ".") + "."):
        return True  # the user's host inside another one, not at its end (not a subdomain)
    if len(want.split(".")[0]) < _SQUAT_MIN_LABEL or not _one_edit(seen, want):
        return False
    # Two providers one letter apart ("gmail.com" and "mail.com", "outlook.de" and "outlook.be")
    # are two real domains, neither made to look like the other: not a squat. Only this test
    # is relaxed: a provider's look-alike letters or its name inside another host still are.
    ours, theirs = provider_of(host), provider_of(given)
    return ours is None or theirs is None or ours == theirs


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one letter added, dropped or changed, or by two
    neighbours swapped (the optimal string alignment distance is 1)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        if a[i + 1 :] == b[i + 1 :]:
            return True  # one changed
        return a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :]  # two swapped
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1 :] == shorter[i:]


def _whole_value(nv: str) -> re.Pattern[str]:
    """Where ``nv`` stands as a whole value in text. An address is whole only between
    characters that cannot belong to it: "doe@gmail.com" is not inside "jane.doe@gmail.com",
    nor "bob@corp.com" inside "bob@corp.com.au"; other values end at a letter or digit."""
    if "@" in nv:  # an email: its local part may hold dots, dashes and pluses
        return re.compile(r"(?<![a-z0-9._%+\-])" + re.escape(nv) + _HOST_GOES_ON)
    if _address_like(nv):  # a host or a link, kept without "https://www." when normalised
        return re.compile(r"(?<![a-z0-9_%+\-])" + re.escape(nv) + _HOST_GOES_ON)
    return re.compile(r"(?<![a-z0-9])" + re.escape(nv) + r"(?![a-z0-9])")


def _contains(segments: Iterable[Segment], nv: str, pattern: re.Pattern[str]) -> bool:
    return any(nv.lower() in s.text and pattern.search(s.text) for s in segments)


def _is_prose(key: str, text: str) -> bool:
    # A bare document (no field name), several lines, or a long string is prose.
    return not key or key.lower() in _TEXT_KEYS or "\n" in text.strip() or len(text) > 80 or len(words(text)) > 10


def _parse(output: Any) -> Any:
    if isinstance(output, str):
        stripped = output.strip()
        if stripped[:1] in "[{":
            try:
                return json.loads(stripped)
            except json.JSONDecodeError:
                return output
        return output
    if isinstance(output, Mapping | list | tuple):
        return output
    return str(output)
