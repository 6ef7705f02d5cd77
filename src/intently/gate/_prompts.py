"""Each prompt of a conversation enters the log once, and a run's opening names the prompts it read.

A Claude Code session opens a gate run per prompt, on every prompt so far (a later prompt may
lift what an earlier one protected). The run's opening used to log that whole conversation as
its ``request``, and the phrases the resolver could not place (most of a pasted log) as text
again: a session of N prompts wrote O(N^2) bytes of prompt text to the log. Now each prompt is
a ``GATE_PROMPT_LOGGED`` operation (its text and SHA-256, once per namespace), the opening
holds the hashes in order (``prompts``) and the unplaced phrases as places in the joined text
(``unplaced_at``), and the request is the blank-line join of those texts: the log alone still
says exactly which text each decision was made on (:func:`request_of`).

Openings logged before this (a ``request`` in the payload) read as they always did.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import LogIntegrityError

if TYPE_CHECKING:
    from ..log import Operation, OperationLog

__all__ = ["JOIN", "PROMPT_OP", "opening_read", "prompt_hash", "request_of", "resolved_of", "unplaced_places"]

#: The operation that logs one prompt's text.
PROMPT_OP = "GATE_PROMPT_LOGGED"
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


def request_of(
    payload: Mapping[str, Any], text_of: Callable[[str], str | None], *, stream: str, seq: int | None
) -> str:
    """The request a run's opening (``GATE_SESSION_OPENED`` payload) was made on: its own
    ``request`` (the old shape), or its prompts' texts (``text_of(hash)``) joined.

    A prompt the log does not hold, or whose text does not hash to its name, is a log that
    cannot say what the run was decided on: :class:`LogIntegrityError`, never a guess."""
    if "request" in payload:
        return str(payload["request"])
    texts: list[str] = []
    for digest in payload["prompts"]:
        text = text_of(str(digest))
        if text is None or prompt_hash(text) != digest:
            raise LogIntegrityError(
                f"the run's opening names prompt {digest}, which the log does not hold"
                + ("" if text is None else " as that text (its hash differs)"),
                stream=stream,
                seq=seq,
            )
        texts.append(text)
    return JOIN.join(texts)


def resolved_of(payload: Mapping[str, Any], request: str) -> dict[str, Any]:
    """The run's reading as the resolver gave it: the unplaced phrases put back from their places."""
    resolved = dict(payload["resolved"])
    places = payload.get("unplaced_at")
    if places is not None:
        resolved["unplaced"] = [request[int(at) : int(at) + int(n)] for at, n in places]
    return resolved


def opening_read(log: OperationLog, opening: Operation) -> tuple[str, dict[str, Any]]:
    """The request and reading of a logged ``GATE_SESSION_OPENED``, from the log alone (the
    prompts it names are read from the log, not from the gate's tables): what an auditor
    holding only the log rebuilds to see which text the run's decisions were made on."""

    def text_of(digest: str) -> str | None:
        logged = log.read(opening.stream, op=PROMPT_OP, target=digest, limit=1)
        return str(logged[0].payload.get("text")) if logged else None

    request = request_of(opening.payload, text_of, stream=opening.stream, seq=opening.seq)
    return request, resolved_of(opening.payload, request)
