"""The LLM extractor against a real local HTTP server speaking the chat-completions protocol.

The server answers whatever the test queued, so each test states exactly what the "model"
said; the extractor must accept only a well-formed answer whose spans are in the turn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from intently.extract import ExtractionRejected, LLMExtractor, Turn
from tests._config import set_config

TEXT = "Michael to close the issue by Friday. Should we drop Node 18?"


class ChatServer:
    """A minimal /v1/chat/completions endpoint; ``replies`` are served in order."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                server.requests.append(json.loads(self.rfile.read(length)))
                server.headers.append(dict(self.headers))
                status, body = server.replies.pop(0) if server.replies else (500, {"error": "no reply queued"})
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status if self.path == "/v1/chat/completions" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def answer(self, content: Any) -> None:
        text = content if isinstance(content, str) else json.dumps(content)
        self.replies.append((200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}))


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    server = ChatServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        server.thread.join(timeout=5)


def _turn() -> Turn:
    return Turn(speaker="bob", text=TEXT, time=datetime(2026, 3, 4, 10, tzinfo=UTC), message_id="m-1")


GOOD = {
    "candidates": [
        {"type": "COMMITMENT", "span": "Michael to close the issue by Friday", "owner": "Michael", "due": "by Friday",
         "confidence": 0.9},
        {"type": "OPEN_QUESTION", "span": "Should we drop Node 18?", "owner": None, "due": None, "confidence": 0.7},
    ]
}  # fmt: skip


def test_well_formed_reply_becomes_candidates(chat: ChatServer) -> None:
    chat.answer(GOOD)
    llm = LLMExtractor(base_url=chat.url, model="tiny", api_key="sk-test")
    cands = llm.extract(_turn())
    assert [(c.type.value, c.owner) for c in cands] == [("COMMITMENT", "Michael"), ("OPEN_QUESTION", None)]
    assert cands[0].due == datetime(2026, 3, 6, 23, 59, 59, tzinfo=UTC)
    request = chat.requests[0]
    assert request["model"] == "tiny" and request["temperature"] == 0
    assert request["response_format"]["type"] == "json_schema"
    assert chat.headers[0]["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    "content",
    [
        "not json at all",
        {"candidates": [{"type": "WISH", "span": "Michael", "owner": None, "due": None, "confidence": 0.5}]},
        {"candidates": [{"type": "GOAL", "span": "world peace", "owner": None, "due": None, "confidence": 0.5}]},
        {"candidates": [{"type": "GOAL", "span": "Michael", "owner": None, "due": None, "confidence": 7}]},
        {"candidates": [], "note": "extra keys are not allowed"},
        {"items": []},
    ],
)
def test_malformed_reply_is_rejected_whole(chat: ChatServer, content: Any) -> None:
    chat.answer(content)
    with pytest.raises(ExtractionRejected) as info:
        LLMExtractor(base_url=chat.url, model="tiny").extract(_turn())
    assert info.value.kind == "malformed"


def test_http_error_is_unavailable(chat: ChatServer) -> None:
    chat.replies.append((503, {"error": "overloaded"}))
    with pytest.raises(ExtractionRejected) as info:
        LLMExtractor(base_url=chat.url, model="tiny").extract(_turn())
    assert info.value.kind == "unavailable"


def _configure_llm(ix: Intently, url: str) -> Intently:
    path: Path = ix.home.config_path
    set_config(path, "llm", "base_url", f'"{url}"')
    set_config(path, "llm", "model", '"tiny"')
    set_config(path, "extract", "extractor", '"llm"')
    return Intently.open(ix.home.path, actor="user:alice", clock=ix.runtime.clock)


def test_observe_with_llm_proposes_for_review(ix: Intently, chat: ChatServer) -> None:
    chat.answer(GOOD)
    with _configure_llm(ix, chat.url) as llm_ix:
        result = llm_ix.extraction.observe(_turn())
        assert result.extractor == "llm" and result.rejected is None
        assert [p.status for p in result.proposals] == ["created", "created"]
        queue = llm_ix.goals.review_queue()
    assert {i.value for i in queue} == {"Michael to close the issue by Friday", "Should we drop Node 18?"}


def test_malformed_reply_creates_nothing_and_is_logged(ix: Intently, chat: ChatServer) -> None:
    chat.answer({"candidates": [{"type": "GOAL", "span": "invented text", "owner": None, "due": None,
                                 "confidence": 0.5}]})  # fmt: skip
    with _configure_llm(ix, chat.url) as llm_ix:
        result = llm_ix.extraction.observe(_turn())
        assert result.proposals == [] and result.rejected is not None
        assert llm_ix.goals.review_queue() == []
        ops = [op.op for op in llm_ix.log.read(llm_ix.namespace)]
    assert ops[-2:] == ["TURN_OBSERVED", "EXTRACTION_REJECTED"]


@pytest.mark.parametrize("stated", ["I", "me", "We", "the speaker"])
def test_a_first_person_owner_is_the_speaker(ix: Intently, chat: ChatServer, stated: str) -> None:
    """Models name the owner of "I'll send it" as "I"; that is the speaker, as the rules read it,
    not an actor called ``user:i`` shared by every speaker's undertakings."""
    text = "I'll send the report by Friday."
    chat.answer({"candidates": [{"type": "COMMITMENT", "span": "I'll send the report by Friday", "owner": stated,
                                 "due": "by Friday", "confidence": 0.9}]})  # fmt: skip
    with _configure_llm(ix, chat.url) as llm_ix:
        (proposal,) = llm_ix.extraction.observe(
            Turn(speaker="bob", text=text, time=datetime(2026, 3, 4, tzinfo=UTC))
        ).proposals
        assert proposal.candidate.owner == "bob"
        assert llm_ix.goals.get(proposal.object_id or "").owner == "user:bob"


def test_a_due_date_the_model_normalised_to_a_timestamp_is_kept(chat: ChatServer) -> None:
    """Models often give "due" as an ISO timestamp rather than the words; the date words do not
    read ``2026-03-06T17:00:00Z`` (the T), and the candidate lost its due date."""
    chat.answer({"candidates": [{"type": "COMMITMENT", "span": "Michael to close the issue by Friday",
                                 "owner": "Michael", "due": "2026-03-06T17:00:00Z", "confidence": 0.9}]})  # fmt: skip
    (cand,) = LLMExtractor(base_url=chat.url, model="tiny").extract(_turn())
    assert cand.due == datetime(2026, 3, 6, 17, tzinfo=UTC) and cand.due_text == "2026-03-06T17:00:00Z"
