"""Change one key of a home's ``intently.toml`` the way a user would: edit its line in place.

``intently init`` writes every table with every key, so a test cannot append a second
``[hooks]`` table (TOML refuses a table defined twice); it edits the line that is there.
"""

from __future__ import annotations

import re
from pathlib import Path


def set_config(config: Path, table: str, key: str, toml_value: str) -> None:
    """Set ``[table] key = toml_value`` (a TOML literal, written as given)."""
    text = config.read_text(encoding="utf-8")
    start = text.index(f"\n[{table}]\n")
    end = text.find("\n[", start + 1)
    end = len(text) if end < 0 else end
    line = re.compile(rf"^{re.escape(key)} = .*$", re.MULTILINE).search(text, start, end)
    if line is None:
        raise KeyError(f"{config} has no {key} in [{table}]")
    config.write_text(text[: line.start()] + f"{key} = {toml_value}" + text[line.end() :], encoding="utf-8")
