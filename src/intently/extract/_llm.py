"""An extractor backed by any OpenAI-compatible chat-completions endpoint.

The model only proposes. Its reply is untrusted input: it must be one JSON object matching
:data:`REPLY_SCHEMA`, every span must be an exact substring of the turn, and every type one we
know. Anything else rejects the whole reply (:class:`ExtractionRejected`): a half-valid answer
creates nothing, and :meth:`Extraction.observe` logs the rejection as an operation.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import first_problem
from ..core.extras import missing_extra
from ._base import ExtractionRejected, Extractor
from ._dates import find_due
from ._models import Candidate, CandidateType, Turn

if TYPE_CHECKING:
    import httpx

__all__ = ["REPLY_SCHEMA", "ExtractionRejected", "LLMExtractor"]

_TYPES = tuple(t.value for t in CandidateType)
MAX_REPLY_BYTES = 256_000

SYSTEM_PROMPT = """\
You extract intents from one conversational turn. Reply with JSON only, matching the schema.
Types: COMMITMENT (the speaker, or a person named in minutes, undertakes a future action),
GOAL (a desired outcome broader than one action), OPEN_QUESTION (an unresolved question or
pending decision, not chit-chat, not answered in the same turn), DECISION_IN_PROGRESS,
RISK (a potential failure or deadline threat; not negated, not an existing bug), FOLLOW_UP,
DECISION (a decision made or agreed).
Do not extract past-tense reports, hedges ("hoping to", "maybe"), conditionals ("if people want,
I will"), idioms, immediate in-conversation actions ("let me check"), or negated concerns.
"span" must be copied exactly from the text. "owner" only when the text names who; "due" only
when the text states when (copy those words). Return {"candidates": []} when there is nothing."""

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["candidates"],
    "properties": {
        "candidates": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "span", "owner", "due", "confidence"],
                "properties": {
                    "type": {"type": "string", "enum": list(_TYPES)},
                    "span": {"type": "string", "minLength": 1},
                    "owner": {"type": ["string", "null"]},
                    "due": {"type": ["string", "null"]},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        }
    },
}


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: CandidateType
    span: str = Field(min_length=1, max_length=4000)
    owner: str | None = Field(default=None, max_length=200)
    due: str | None = Field(default=None, max_length=200)
    confidence: float = Field(ge=0.0, le=1.0)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    candidates: list[_Item] = Field(max_length=20)


# What a model writes as the owner of a first-person undertaking ("I'll send it"): the speaker,
# as the rules read it. Taken literally, "I" became the actor ``user:i``, one owner for everyone.
_FIRST_PERSON = {"i", "me", "myself", "we", "us", "ourselves", "speaker", "the speaker"}


def _owner(stated: str | None, turn: Turn) -> str | None:
    owner = (stated or "").strip()
    if owner.lower() in _FIRST_PERSON:
        return turn.speaker
    return owner or None


def _due(stated: str | None, turn: Turn) -> datetime | None:
    """The model's due words resolved like the rules' ("by Friday" against the turn's time); or,
    when the model wrote a timestamp (``2026-03-06T17:00:00Z``, which models like to normalise
    to and the date words do not read), that time, in the turn's zone when it names none."""
    if not stated:
        return None
    found = find_due(stated, 0, len(stated), turn.time)
    if found is not None:
        return found.when
    try:
        when = datetime.fromisoformat(stated.strip())
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=turn.time.tzinfo)


class LLMExtractor(Extractor):
    """Asks a chat model for candidates; validates the answer like any untrusted input."""

    name = "llm"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required")
        self.base_url = base_url.rstrip("/")
        self.model = model
        try:
            import httpx  # only an LLM extractor needs it: ~0.12 s of CPU kept off every hook call
        except ModuleNotFoundError as exc:
            missing = missing_extra(exc, "the LLM extractor ([extract] extractor = 'llm')")
            if missing is None:
                raise
            raise missing from exc

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()

    def request_body(self, turn: Turn) -> dict[str, Any]:
        """The chat-completions request for ``turn`` (temperature 0, JSON-schema output)."""
        user = {"speaker": turn.speaker, "time": turn.time.isoformat(), "channel": turn.channel, "text": turn.text}
        return {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": json.dumps(user, ensure_ascii=False)},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "candidates", "strict": True, "schema": REPLY_SCHEMA},
            },
        }

    def extract(self, turn: Turn) -> list[Candidate]:
        content = self._ask(turn)
        return self.parse_reply(turn, content)

    def _ask(self, turn: Turn) -> str:
        import httpx

        try:
            response = self._client.post(f"{self.base_url}/chat/completions", json=self.request_body(turn))
        except httpx.HTTPError as exc:
            raise ExtractionRejected(f"endpoint unreachable: {exc}", kind="unavailable", extractor=self.name) from exc
        if response.status_code != 200:
            raise ExtractionRejected(
                f"endpoint answered HTTP {response.status_code}", kind="unavailable", extractor=self.name
            )
        if len(response.content) > MAX_REPLY_BYTES:
            raise ExtractionRejected("reply too large", kind="malformed", extractor=self.name)
        try:
            body = response.json()
            content = body["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ExtractionRejected(
                "not a chat-completions reply (choices[0].message.content)", kind="malformed", extractor=self.name
            ) from exc
        if not isinstance(content, str):
            raise ExtractionRejected("message content is not text", kind="malformed", extractor=self.name)
        return content

    def parse_reply(self, turn: Turn, content: str) -> list[Candidate]:
        """Validate a model's JSON answer against ``turn``; any defect rejects all of it."""
        try:
            reply = _Reply.model_validate_json(content)
        except ValidationError as exc:
            field, message = first_problem(exc)
            raise ExtractionRejected(f"{field or 'reply'}: {message}", kind="malformed", extractor=self.name) from exc
        out: list[Candidate] = []
        for index, item in enumerate(reply.candidates):
            start = turn.text.find(item.span)
            if start < 0:
                raise ExtractionRejected(
                    f"candidates.{index}.span is not a substring of the turn", kind="malformed", extractor=self.name
                )
            out.append(
                Candidate(
                    type=item.type,
                    span=item.span,
                    start=start,
                    end=start + len(item.span),
                    owner=_owner(item.owner, turn),
                    due=_due(item.due, turn),
                    due_text=item.due,
                    confidence=item.confidence,
                    rule=f"llm:{self.model}",
                )
            )
        return out
