"""A real uvicorn server on a free loopback port, serving the test home."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from intently import Intently
from intently.server import TokenStore, create_app

MAX_BODY = 4096


@dataclass
class Api:
    url: str
    ix: Intently

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def token(self, actor: str) -> str:
        return TokenStore(self.ix).create(actor).token


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(ix: Intently, *, max_body: int = MAX_BODY, **options: Any) -> Iterator[Api]:
    """Run the app for ``ix`` on a free loopback port in a thread; stop it on exit (its
    lifespan's shutdown has run when this returns)."""
    port = _free_port()
    app = create_app(ix, max_body=max_body, **options)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield Api(f"http://127.0.0.1:{port}", ix)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def api(ix: Intently) -> Iterator[Api]:
    with serve(ix) as running:
        yield running
