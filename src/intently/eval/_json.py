"""Reading an evaluation's JSON data file, with errors that name the file (and line)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput

__all__ = ["read_json_object"]


def read_json_object(path: Path, *, lists: Sequence[str], wants: str) -> dict[str, Any]:
    """``path`` as a JSON object holding a list under each key of ``lists``.

    A data file is often edited by hand: one that cannot be read, is not JSON or lacks a part
    is an :class:`InvalidInput` naming the file (and line), not an internal error (a
    ``JSONDecodeError`` or ``KeyError`` with no file name) a minute into a run. ``wants``
    says what the file should be, for the error when it is not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc.strerror or exc}", where=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not JSON: {exc.msg}", where=f"{path}:{exc.lineno}") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"want {wants}", where=str(path))
    for key in lists:
        if not isinstance(data.get(key), list):
            raise InvalidInput(f"missing list {key!r}", where=str(path))
    return data
