"""The ``[hooks]`` table of ``intently.toml``, read and checked as a whole.

An unknown key is an error naming the file and the key, as everywhere else in the file: a
typo such as ``shell_alowlist`` would otherwise leave the allow-list empty without a word.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.config import ENGINE_TABLE_KEYS
from ..core.errors import InvalidInput
from ..core.shell import SHELL_OPERATOR
from ..gate._values import trusted_hosts

if TYPE_CHECKING:
    from .._intently import Intently

__all__ = ["HOOK_KEYS", "HookSettings", "hook_settings"]

HOOK_KEYS = ENGINE_TABLE_KEYS["hooks"]  # the home refuses any other key when it opens


@dataclass(frozen=True)
class HookSettings:
    """What ``[hooks]`` says; every key has the default ``intently init`` writes."""

    shell_allowlist: tuple[str, ...] = ()
    shell_trusted: tuple[str, ...] = ()
    web_trusted: tuple[str, ...] = ()
    extract_tool_output: bool = False
    skip_prompt_when_allowed: bool = False
    server: bool = False


def hook_settings(ix: Intently) -> HookSettings:
    """``[hooks]`` of the home's ``intently.toml``; :class:`InvalidInput` names the bad key."""
    where = f"{ix.home.config_path}: hooks"
    section = ix.config.extra.get("hooks", {})
    if not isinstance(section, Mapping):
        raise InvalidInput("must be a table", where=where)
    unknown = sorted(set(section) - set(HOOK_KEYS))
    if unknown:
        raise InvalidInput(f"unknown key (known: {', '.join(HOOK_KEYS)})", where=f"{where}.{unknown[0]}")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("shell_allowlist", "shell_trusted"):
        value = section.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise InvalidInput("must be a list of command prefixes", where=f"{where}.{key}")
        for entry in value:
            if SHELL_OPERATOR.search(entry):  # a command with an operator never runs, so it could never match
                raise InvalidInput(
                    f"{entry!r}: a command prefix without shell operators (| ; & > $ ...)", where=f"{where}.{key}"
                )
        lists[key] = tuple(v.strip() for v in value)
    sites = trusted_hosts(section.get("web_trusted", []), where=f"{where}.web_trusted")
    flags: dict[str, bool] = {}
    for key in ("extract_tool_output", "skip_prompt_when_allowed", "server"):
        value = section.get(key, False)
        if not isinstance(value, bool):
            raise InvalidInput("must be true or false", where=f"{where}.{key}")
        flags[key] = value
    return HookSettings(
        shell_allowlist=lists["shell_allowlist"],
        shell_trusted=lists["shell_trusted"],
        web_trusted=sites,
        extract_tool_output=flags["extract_tool_output"],
        skip_prompt_when_allowed=flags["skip_prompt_when_allowed"],
        server=flags["server"],
    )
