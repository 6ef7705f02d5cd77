"""The optional model proposer: validated, filtered to known kinds, never authoritative."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from intently.gate import Gate, Level, OpenAICompatibleProposer, default_bundle, resolve


class _Completions(BaseHTTPRequestHandler):
    answer = '{"kinds": ["delete", "teleport"]}'

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        json.loads(self.rfile.read(length))
        body = json.dumps({"choices": [{"message": {"content": "Sure: " + self.answer}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        del format, args


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Completions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_proposals_are_filtered_and_only_reach_review(endpoint: str, tools: list[dict[str, Any]]) -> None:
    proposer = OpenAICompatibleProposer(endpoint, "any-model")
    r = resolve("Tidy up the shared drive", default_bundle().vocabulary, proposer)
    assert r.proposed == frozenset({"delete"})  # "teleport" is not a kind: dropped
    assert "delete" not in r.intents
    s = Gate.from_tools(tools, proposer=proposer).session(user_request="Tidy up the shared drive")
    s.observe("list_files", [{"id": "7", "name": "old.txt"}])
    d = s.check("delete_file", {"file_id": "7"})
    assert d.level is Level.REVIEW and d.rule_ids == ("proposed-only",)


def test_a_failing_model_proposes_nothing(tools: list[dict[str, Any]]) -> None:
    dead = OpenAICompatibleProposer("http://127.0.0.1:9/v1", "m", timeout=0.5)
    r = resolve("Tidy up the shared drive", default_bundle().vocabulary, dead)
    assert r.proposed == frozenset()
