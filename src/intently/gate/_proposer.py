"""An optional OpenAI-compatible model that proposes action kinds for a request.

It sits behind :class:`~intently.gate.Proposer`. Its answer is parsed strictly and filtered to
the vocabulary's kinds; the policy treats a kind only the proposer saw as ``review`` at most,
never as authority. Any failure (network, bad JSON, unknown kinds) proposes nothing.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["OpenAICompatibleProposer"]

_PROMPT = (
    "You classify a user's request to an AI assistant. Answer with a JSON object "
    '{{"kinds": [...]}} listing which of these action kinds the user explicitly asks for '
    "(none if the request only reads or asks questions):\n{kinds}"
)


class OpenAICompatibleProposer:
    """POSTs to ``{base_url}/chat/completions``; needs ``httpx`` (the ``server`` extra)."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def propose(self, request: str, kinds: dict[str, str]) -> list[str]:
        import httpx

        listing = "\n".join(f"- {k}: {d}" for k, d in sorted(kinds.items()))
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": _PROMPT.format(kinds=listing)},
                {"role": "user", "content": request},
            ],
        }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        resp = httpx.post(f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=self.timeout)
        resp.raise_for_status()
        return parse_kinds(resp.json(), set(kinds))


def parse_kinds(payload: Any, allowed: set[str]) -> list[str]:
    """The kinds in a chat-completions answer, keeping only known ones."""
    try:
        text = payload["choices"][0]["message"]["content"]
        data = json.loads(text[text.index("{") : text.rindex("}") + 1])
        kinds = data["kinds"]
    except (KeyError, IndexError, TypeError, ValueError):
        return []
    if not isinstance(kinds, list):
        return []
    return [k for k in kinds if isinstance(k, str) and k in allowed][:12]
