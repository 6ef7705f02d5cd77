"""Ordered policy rules as data: CEL conditions compiled once, first match decides, fail closed."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import PolicyError
from ._decision import Level

__all__ = ["PolicyRule", "PolicySet", "Verdict"]

# Loading the extension by hand bypasses the import lock, and its initialiser panics when run
# twice (it installs a process-wide logger): the HTTP server checks gate calls on several threads.
_CEL_LOCK = threading.Lock()


def _cel() -> Any:
    """The compiled ``cel`` extension, loaded without running ``cel/__init__.py``.

    That ``__init__`` also imports the package's interactive CLI (prompt_toolkit, typer,
    rich): about 0.17 s of CPU on every gate start, paid by each Claude Code hook call.
    ``cel.cel`` is the extension ``cel.compile`` comes from, so behaviour is the same.
    Loaded once per process, whatever the number of threads asking at once.
    """
    import sys

    if "cel.cel" in sys.modules:
        return sys.modules["cel.cel"]
    with _CEL_LOCK:
        return _load_cel()


def _load_cel() -> Any:
    import importlib.machinery
    import importlib.util
    import sys
    from pathlib import Path

    if "cel.cel" in sys.modules:  # another thread loaded it while this one waited
        return sys.modules["cel.cel"]
    spec = importlib.util.find_spec("cel")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"cel{suffix}"
            ext = importlib.util.spec_from_file_location("cel.cel", path) if path.is_file() else None
            if ext is not None and ext.loader is not None:
                module = importlib.util.module_from_spec(ext)
                ext.loader.exec_module(module)
                sys.modules["cel.cel"] = module
                return module
    import cel  # an unusual layout: the package itself (slower start, same behaviour)

    return cel


@dataclass(frozen=True)
class PolicyRule:
    id: str
    when: str
    level: Level
    reason: str
    program: Any


@dataclass(frozen=True)
class Verdict:
    level: Level
    rule_ids: tuple[str, ...]
    reason: str


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class PolicySet:
    """The rules of one bundle. An unparsable rule refuses to load the whole set."""

    def __init__(self, data: Mapping[str, Any], *, where: str = "policies") -> None:
        rules: list[PolicyRule] = []
        seen: set[str] = set()
        try:
            items = list(data["rules"])
            default = data.get("default") or {}
        except (KeyError, TypeError) as exc:
            raise PolicyError(f"{where}: needs a `rules` list") from exc
        for i, item in enumerate(items):
            place = f"{where}: rules[{i}]"
            try:
                rid, when, level = str(item["id"]), str(item["when"]), Level(item["decision"])
            except (KeyError, TypeError, ValueError) as exc:
                raise PolicyError(f"{place}: needs id, when and a decision among {[str(x) for x in Level]}") from exc
            if rid in seen:
                raise PolicyError(f"{place}: duplicate rule id {rid!r}")
            seen.add(rid)
            try:
                program = _cel().compile(when)
            except ValueError as exc:
                raise PolicyError(f"{place} ({rid}): cannot parse condition: {exc}") from exc
            rules.append(PolicyRule(rid, when, level, str(item.get("reason", rid)), program))
        self.rules = tuple(rules)
        self.version = str(data.get("version", "0"))
        self.default_level = Level(default.get("decision", "block"))
        if self.default_level is not Level.BLOCK:
            raise PolicyError(f"{where}: default decision must be block (fail closed)")
        self.default_reason = str(default.get("reason", "no rule allowed this call"))

    def decide(self, facts: Mapping[str, Any]) -> Verdict:
        """First matching rule wins; an error in any condition blocks (fail closed)."""
        for rule in self.rules:
            try:
                hit = rule.program.execute(dict(facts))
            except (RuntimeError, ValueError, TypeError) as exc:
                return Verdict(Level.BLOCK, (rule.id, "policy-error"), f"rule {rule.id} could not be evaluated: {exc}")
            if hit is True:
                return Verdict(rule.level, (rule.id,), rule.reason.format_map(_Blank(facts)))
            if hit is not False:
                return Verdict(Level.BLOCK, (rule.id, "policy-error"), f"rule {rule.id} did not yield a boolean")
        return Verdict(self.default_level, ("default",), self.default_reason)
