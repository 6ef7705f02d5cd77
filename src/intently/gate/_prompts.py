"""Each prompt of a conversation enters the log once, and a run's opening names the prompts it read.

A Claude Code session opens a gate run per prompt, on every prompt so far (a later prompt may
lift what an earlier one protected). The run's opening used to log that whole conversation as
its ``request``, and the phrases the resolver could not place (most of a pasted log) as text
again: a session of N prompts wrote O(N^2) bytes of prompt text to the log. Now each prompt is
a ``GATE_PROMPT_LOGGED`` operation (its text and SHA-256, once per namespace), the opening
holds the hashes in order (``prompts``) and the unplaced phrases as places in the joined text
(``unplaced_at``), and the request is the blank-line join of those texts: the log alone still
says exactly which text each decision was made on (:func:`request_of`).

Listing every prompt's hash in every run's opening still made the log quadratic (run k of a
session named k hashes: 200 prompts logged 1.8 MB of openings, most of it hashes logged
before). Now an opening that continues an earlier run of the namespace names that run
(``after``: its opening's ``seq`` in the stream and its ``run`` id) and only the prompts added
since (``added``), with how many it names in all (``count``): O(new prompts) bytes per run.
A reader follows ``after`` back through the log (:func:`prompts_of`) to an opening that lists
its prompts; the stream is hash-chained, so the openings it passes through are the log's.

Openings logged before this (a ``request``, or every hash in ``prompts``) read as they always did.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import LogIntegrityError, NotFound

if TYPE_CHECKING:
    from ..log import Operation, OperationLog

__all__ = [
    "JOIN",
    "OPENED_OP",
    "PROMPT_OP",
    "OpeningAt",
    "chain_of",
    "continued",
    "log_opening_at",
    "opening_read",
    "places_after",
    "prompt_hash",
    "prompts_of",
    "read_opening",
    "request_of",
    "resolved_of",
    "unplaced_places",
]

#: The operation that logs one prompt's text.
PROMPT_OP = "GATE_PROMPT_LOGGED"
#: The operation that opens a run (and, chained, names the run it continues).
OPENED_OP = "GATE_SESSION_OPENED"

#: What a chained opening's base is, as a reader finds it: the operation at a ``seq`` of the
#: same stream (its kind, its target, its payload), or ``None`` when the stream has none there.
OpeningAt = Callable[[int], tuple[str, str, Mapping[str, Any]] | None]
#: What a conversation's prompts are joined with to make the request (as the hook does).
JOIN = "\n\n"


def prompt_hash(text: str) -> str:
    """The SHA-256 of a prompt's text (UTF-8; a lone surrogate kept as it was sent)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def unplaced_places(request: str, unplaced: Sequence[str]) -> list[list[int]] | None:
    """Each unplaced phrase as ``[offset, length]`` in ``request``, in order (the phrases are
    clauses of the request, in the order they appear); ``None`` when one cannot be found there
    after the one before it, and the phrases are then logged as text, as before."""
    places: list[list[int]] = []
    pos = 0
    for phrase in unplaced:
        at = request.find(phrase, pos)
        if at < 0:
            at = request.find(phrase)
            if at < 0:
                return None
        places.append([at, len(phrase)])
        pos = at + len(phrase)
    return places


def continued(
    payload: Mapping[str, Any], opening_at: OpeningAt, *, stream: str, seq: int | None
) -> tuple[int, Mapping[str, Any]]:
    """The earlier opening a chained one (``after``, ``added``) continues: its ``seq`` and payload.

    One that follows nothing the stream holds there (no opening at that ``seq``, another run's,
    a later one, or one opened on a literal request) is a log that cannot say what the run was
    decided on: :class:`LogIntegrityError`, never a guess."""
    after, added = payload.get("after"), payload.get("added")
    if not isinstance(after, Mapping):
        after = {}
    base = after.get("seq")
    if not isinstance(base, int) or isinstance(base, bool) or not isinstance(added, list):
        raise LogIntegrityError(
            "the run's opening names neither its prompts nor the earlier run it continues", stream=stream, seq=seq
        )
    found = opening_at(base) if seq is None or base < seq else None
    if found is None or found[0] != OPENED_OP or found[1] != str(after.get("run")) or "request" in found[2]:
        raise LogIntegrityError(
            f"the run's opening continues run {after.get('run')} at seq {base}, where the log holds no opening "
            "of that run on prompts",
            stream=stream,
            seq=seq,
        )
    return base, found[2]


def chain_of(
    payload: Mapping[str, Any], opening_at: OpeningAt, *, stream: str, seq: int | None
) -> list[Mapping[str, Any]]:
    """The openings a run's opening stands on, in log order: the one that lists its prompts
    first, then each chained one that continues it (:func:`continued`), the run's own last."""
    chain = [payload]
    current, at = payload, seq
    while "prompts" not in current:
        base, current = continued(current, opening_at, stream=stream, seq=at)
        chain.append(current)
        at = base
    return chain[::-1]


def prompts_of(payload: Mapping[str, Any], opening_at: OpeningAt, *, stream: str, seq: int | None) -> list[str]:
    """The hashes of the prompts a run's opening names, in order: its ``prompts``, or (chained)
    the prompts of the earlier opening it continues and then its ``added`` ones, back to an
    opening that lists them all (:func:`chain_of`). Prompts not as many as the opening's
    ``count`` says: :class:`LogIntegrityError`."""
    return _digests(chain_of(payload, opening_at, stream=stream, seq=seq), payload, stream=stream, seq=seq)


def _digests(
    chain: Sequence[Mapping[str, Any]], payload: Mapping[str, Any], *, stream: str, seq: int | None
) -> list[str]:
    """The prompts a chain of openings names (:func:`chain_of`), as many as ``payload`` (its
    last) says it read, or :class:`LogIntegrityError`."""
    digests = [str(d) for p in chain for d in (p["prompts"] if "prompts" in p else p["added"])]
    if "count" in payload and payload["count"] != len(digests):
        raise LogIntegrityError(
            f"the run's opening says it read {payload['count']} prompts; the runs it continues name {len(digests)}",
            stream=stream,
            seq=seq,
        )
    return digests


def places_after(
    base: Sequence[Any] | None, payload: Mapping[str, Any], *, stream: str, seq: int | None
) -> list[Any] | None:
    """The places of a chained opening's unplaced phrases: the first ``unplaced_kept`` of the
    run's it continues (``base``), then its own ``unplaced_at`` (those in or after its added
    prompts): run k of a session logs the places of its new prompts' phrases, not all k again.
    ``None`` when the opening logs its unplaced phrases as text (``unplaced_at`` null)."""
    own = payload.get("unplaced_at")
    if own is None:
        return None
    kept = payload.get("unplaced_kept", 0)
    if not isinstance(kept, int) or isinstance(kept, bool) or not 0 <= kept <= len(base or ()):
        raise LogIntegrityError(
            f"the run's opening keeps {kept!r} unplaced phrases of the run it continues, which has {len(base or ())}",
            stream=stream,
            seq=seq,
        )
    return [*(base or ())[:kept], *own]


def _no_base(_seq: int) -> None:
    """No earlier opening is at hand (a reader that was given none)."""
    return None


def read_opening(
    payload: Mapping[str, Any],
    text_of: Callable[[str], str | None],
    *,
    stream: str,
    seq: int | None,
    opening_at: OpeningAt = _no_base,
) -> tuple[str, dict[str, Any]]:
    """The request a run's opening (``GATE_SESSION_OPENED`` payload) was made on, and its
    reading: its own ``request`` (the old shape), or its prompts' texts (``text_of(hash)``)
    joined, the prompts and the places of the unplaced phrases as the chain of openings it
    stands on names them (:func:`chain_of`; a chained opening's base by ``opening_at``).

    A prompt the log does not hold, or whose text does not hash to its name, is a log that
    cannot say what the run was decided on: :class:`LogIntegrityError`, never a guess."""
    if "request" in payload:
        request = str(payload["request"])
        return request, resolved_of(payload, request)
    chain = chain_of(payload, opening_at, stream=stream, seq=seq)
    texts: list[str] = []
    for digest in _digests(chain, payload, stream=stream, seq=seq):
        text = text_of(digest)
        if text is None or prompt_hash(text) != digest:
            raise LogIntegrityError(
                f"the run's opening names prompt {digest}, which the log does not hold"
                + ("" if text is None else " as that text (its hash differs)"),
                stream=stream,
                seq=seq,
            )
        texts.append(text)
    places = chain[0].get("unplaced_at")
    for link in chain[1:]:
        places = places_after(places, link, stream=stream, seq=seq)
    request = JOIN.join(texts)
    return request, resolved_of({"resolved": payload["resolved"], "unplaced_at": places}, request)


def request_of(
    payload: Mapping[str, Any],
    text_of: Callable[[str], str | None],
    *,
    stream: str,
    seq: int | None,
    opening_at: OpeningAt = _no_base,
) -> str:
    """The request a run's opening was made on (:func:`read_opening`)."""
    return read_opening(payload, text_of, stream=stream, seq=seq, opening_at=opening_at)[0]


def resolved_of(payload: Mapping[str, Any], request: str) -> dict[str, Any]:
    """The run's reading as the resolver gave it: the unplaced phrases put back from their
    places (``unplaced_at``, all of them: a chained opening's are put together by
    :func:`read_opening`)."""
    resolved = dict(payload["resolved"])
    places = payload.get("unplaced_at")
    if places is not None:
        resolved["unplaced"] = [request[int(at) : int(at) + int(n)] for at, n in places]
    return resolved


def log_opening_at(log: OperationLog, stream: str) -> OpeningAt:
    """:data:`OpeningAt` over ``stream`` of ``log``: what a chained opening's ``after`` names."""

    def opening_at(seq: int) -> tuple[str, str, Mapping[str, Any]] | None:
        try:
            op = log.get(stream, seq)
        except NotFound:
            return None
        return op.op, op.target, op.payload

    return opening_at


def opening_read(log: OperationLog, opening: Operation) -> tuple[str, dict[str, Any]]:
    """The request and reading of a logged ``GATE_SESSION_OPENED``, from the log alone (the
    prompts it names, and the earlier openings a chained one continues, are read from the log,
    not from the gate's tables): what an auditor holding only the log rebuilds to see which text
    the run's decisions were made on."""

    def text_of(digest: str) -> str | None:
        logged = log.read(opening.stream, op=PROMPT_OP, target=digest, limit=1)
        return str(logged[0].payload.get("text")) if logged else None

    return read_opening(
        opening.payload,
        text_of,
        stream=opening.stream,
        seq=opening.seq,
        opening_at=log_opening_at(log, opening.stream),
    )
