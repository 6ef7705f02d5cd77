"""The optional LLM extractor: an OpenAI-compatible chat endpoint proposes statements.

Language proposes, symbols decide: what the model returns is only a list of candidates.
Each is checked (non-empty, one statement, bounded length) and then goes through the same
deterministic reconciliation and hard rules as the built-in extractor. The endpoint comes
from ``[llm]`` in ``intently.toml``; the key from the environment variable it names.
Nothing else is sent but the source text.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from ..core.errors import InvalidInput, StoreError
from ._extract import Candidate

__all__ = ["LLMExtractor"]

_PROMPT = """You extract durable, prescriptive project rules from a document: constraints, decisions and
conventions a contributor or coding agent must follow on future tasks. Skip descriptions, task-specific
instructions and facts derivable from the code. Answer with JSON only: a list of objects
{"statement": "...", "rationale": "..." or "", "heading": "section the rule is under" or ""}."""
_MAX_STATEMENT = 400


@dataclass(frozen=True)
class LLMExtractor:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 60.0

    @classmethod
    def from_config(cls, llm: Any) -> LLMExtractor:
        if not llm.base_url or not llm.model:
            raise InvalidInput("set [llm] base_url and model in intently.toml to use the LLM extractor", where="llm")
        return cls(llm.base_url.rstrip("/"), llm.model, os.environ.get(llm.api_key_env, ""))

    @property
    def name(self) -> str:
        return f"intently-scan/llm:{self.model}"

    def extract(self, ref: str, text: str) -> list[Candidate]:
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": _PROMPT},
                {"role": "user", "content": f"Document {ref}:\n\n{text[:60000]}"},
            ],
        }
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read().decode("utf-8"))
            content = str(reply["choices"][0]["message"]["content"])
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise StoreError(f"LLM extractor at {self.base_url} failed: {exc}") from exc
        return self._parse(ref, content)

    def _parse(self, ref: str, content: str) -> list[Candidate]:
        match = re.search(r"\[.*\]", content, re.DOTALL)
        if not match:
            raise StoreError(f"LLM extractor at {self.base_url} returned no JSON list")
        try:
            items = json.loads(match.group(0))
        except ValueError as exc:
            raise StoreError(f"LLM extractor at {self.base_url} returned invalid JSON: {exc}") from exc
        out: list[Candidate] = []
        seen: set[str] = set()
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            statement = " ".join(str(item.get("statement") or "").split())
            if not statement or len(statement) > _MAX_STATEMENT or statement.lower() in seen:
                continue
            seen.add(statement.lower())
            heading = " ".join(str(item.get("heading") or "").split())
            rationale = " ".join(str(item.get("rationale") or "").split())
            anchor = f"{ref}#{heading}" if heading else ref
            out.append(Candidate(statement, rationale, anchor, heading, statement, top=not heading))
        return out
