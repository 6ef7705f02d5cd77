"""The optional LLM extractor against a real local OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from intently import Intently
from intently.core.errors import StoreError

from .conftest import git

REPLY: list[Any] = [
    {"statement": "Never hand-edit files under generated/.", "rationale": "They are rebuilt.", "heading": "Build"},
    {"statement": "", "rationale": "empty statements are refused"},
    "not an object",
]


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            return
        content = "Here you go:\n" + json.dumps(REPLY)
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def configure(ix: Intently, base_url: str, model: str) -> None:
    config = ix.home.config_path
    text = config.read_text().replace('base_url = ""', f'base_url = "{base_url}"')
    config.write_text(text.replace('model = ""', f'model = "{model}"'))


def test_llm_candidates_go_through_the_same_reconcile(
    repo: Path, rix: Intently, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "AGENTS.md").write_text("# Rules\n\nGenerated files come from the build.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    configure(rix, endpoint, "tiny-model")
    monkeypatch.setenv("INTENTLY_LLM_KEY", "sk-test")
    with Intently.open(rix.home.path, actor="user:alice") as ix:
        report = ix.requirements.scan(llm=True)
        (req,) = ix.requirements.list()
    assert report.created == [req.id]
    assert req.statement == "Never hand-edit files under generated/." and req.rationale == "They are rebuilt."
    assert req.meta.provenance.extracted_by == "intently-scan/llm:tiny-model"
    assert req.scope.domains == ["build"] and not req.meta.user_edited
    (call,) = [c for c in _Handler.seen if "Generated files" in c["body"]["messages"][1]["content"]]
    assert call["path"] == "/v1/chat/completions" and call["auth"] == "Bearer sk-test"
    assert call["body"]["model"] == "tiny-model" and call["body"]["temperature"] == 0


def test_a_failing_endpoint_writes_nothing(repo: Path, rix: Intently, endpoint: str) -> None:
    (repo / "AGENTS.md").write_text("# Rules\n\n- Never push to main.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    configure(rix, endpoint, "broken")
    with Intently.open(rix.home.path, actor="user:alice") as ix:
        with pytest.raises(StoreError, match="LLM extractor"):
            ix.requirements.scan(llm=True)
        assert ix.requirements.list() == []
    assert not (rix.home.path / "scan-state.yaml").exists()
