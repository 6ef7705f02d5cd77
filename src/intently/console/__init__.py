"""The web console: see and steer what the agents are told and what they may do.

Server-rendered pages (Jinja2) over the same home, tokens and permissions as the HTTP API,
with a little vanilla JavaScript for keyboard shortcuts. Nothing is fetched from outside the
server, so the console works offline. Mount it on the API app::

    app = create_app(ix)
    mount_console(app, ix)
"""

from __future__ import annotations

from ._mount import mount_console

__all__ = ["mount_console"]
