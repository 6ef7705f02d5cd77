"""Turning library objects into JSON, whatever shape an engine returns."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from typing import Any

from ..core.clock import format_time

__all__ = ["jsonable"]


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, Enum):
        return jsonable(value.value)
    if isinstance(value, datetime):
        return format_time(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return str(value)
