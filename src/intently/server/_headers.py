"""``X-Content-Type-Options: nosniff`` on every answer, not only on console pages.

Console pages and ``/docs`` set their own headers (CSP, framing); the API's JSON, its
problem+json errors and the console's static files had none, so a browser could guess a
type for them (a JSON body that echoes ``<script>`` read as HTML). A header the route set
already is left as it is.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["NoSniff"]


class NoSniff:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "x-content-type-options" not in headers:
                    headers["X-Content-Type-Options"] = "nosniff"
            await send(message)

        await self.app(scope, receive, send_with_header)
