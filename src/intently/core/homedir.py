"""Where a home is, with nothing but the standard library.

The rule (``--home``, then ``INTENTLY_HOME``, then the nearest ``.intently/`` upward, like git
finds ``.git``) lives here so that a process which must start fast, the Claude Code hook
client, finds the same home as everything else without importing the config models.
:func:`intently.core.config.find_home` wraps this.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CONFIG_FILE", "HOME_DIRNAME", "locate_home"]

HOME_DIRNAME = ".intently"
CONFIG_FILE = "intently.toml"


def locate_home(start: Path | None = None, explicit: str | Path | None = None) -> Path | None:
    """The home folder's path, or ``None`` when no home is found upward from ``start``.

    An explicit choice (argument or ``INTENTLY_HOME``) is returned whether or not it exists yet,
    so that the caller can say what is missing there. Naming a project folder instead of its
    ``.intently/`` works too.
    """
    chosen = explicit or os.environ.get("INTENTLY_HOME")
    if chosen:
        path = Path(chosen).expanduser()
        if path.name != HOME_DIRNAME and (path / HOME_DIRNAME).is_dir():
            path = path / HOME_DIRNAME
        return path
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / HOME_DIRNAME
        if (candidate / CONFIG_FILE).is_file():
            return candidate
    return None
