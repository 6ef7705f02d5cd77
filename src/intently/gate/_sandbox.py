"""An in-memory sandbox workspace and the adapter protocol the gate drives real tools through.

The sandbox holds a calendar, an inbox (drafts and sent mail), downloads, notes, a repository
with a shell allow-list, and a read-only database. Its tools carry explicit contracts
(``sandbox.yaml``). :func:`run_plan` puts every proposed call through a gate session: allowed
calls execute, calls waiting for approval run only their safe, non-committing path (draft,
stage), blocked calls do nothing; then each contract's postconditions are checked
deterministically on the diff between the state before and after, and the results are
recorded in the session's journal (``GATE_POSTCONDITIONS_CHECKED`` in a home's log).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.errors import InvalidInput, NotFound
from ._decision import Decision
from ._gate import Gate, Session

__all__ = ["Adapter", "PlanReport", "SandboxWorkspace", "check_postconditions", "run_plan"]


class Adapter(Protocol):
    """What the gate needs from a set of real tools."""

    def tools(self) -> list[dict[str, Any]]: ...

    def call(self, tool: str, args: Mapping[str, Any]) -> Any: ...

    def stage(self, tool: str, args: Mapping[str, Any]) -> Any:
        """The non-committing variant of ``tool`` (draft, stage); raises if there is none."""
        ...

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every collection as ``{id: item}``, for postconditions on the diff."""
        ...


def _t(name: str, description: str, **props: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {k: {"type": v} for k, v in props.items()},
            "required": list(props),
        },
    }


@dataclass
class SandboxWorkspace:
    """Deterministic in-memory tools; the data is whatever a test or demo puts in."""

    calendar: dict[str, dict[str, Any]] = field(default_factory=dict)
    contacts: dict[str, str] = field(default_factory=dict)
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    downloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    repo: dict[str, str] = field(default_factory=dict)
    database: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    shell_allowlist: tuple[str, ...] = ()
    drafts: dict[str, dict[str, Any]] = field(default_factory=dict)
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    staged: dict[str, dict[str, Any]] = field(default_factory=dict)
    commands: dict[str, dict[str, Any]] = field(default_factory=dict)

    def tools(self) -> list[dict[str, Any]]:
        return [
            _t("read_calendar", "Read the calendar for a day.", day="string"),
            _t(
                "create_calendar_block",
                "Block time in the calendar.",
                title="string",
                start="string",
                minutes="integer",
            ),
            _t("find_notes", "Find notes about a topic.", topic="string"),
            _t("draft_email", "Save an email draft.", to="string", subject="string", body="string"),
            _t("send_email", "Send an email.", to="string", subject="string", body="string"),
            _t("list_downloads", "List the downloads folder."),
            _t("delete_file", "Delete a file from downloads.", path="string"),
            _t("read_repo_file", "Read a file of the repository.", path="string"),
            _t("edit_repo_file", "Replace a file of the repository.", path="string", content="string"),
            _t("run_command", "Run a shell command in the repository.", command="string"),
            _t("open_pull_request", "Open a pull request.", title="string", body="string"),
            _t("query_database", "Run a SQL query on the analytics database.", sql="string"),
        ]

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(
            {
                "calendar": self.calendar,
                "drafts": self.drafts,
                "sent": self.sent,
                "files": self.downloads,
                "repo": {k: {"content": v} for k, v in self.repo.items()},
                "staged": self.staged,
                "commands": self.commands,
                "database": {t: {"rows": rows} for t, rows in self.database.items()},
            }
        )

    # -- committing paths ---------------------------------------------------------

    def call(self, tool: str, args: Mapping[str, Any]) -> Any:
        a = dict(args)
        if tool == "read_calendar":
            return [e for e in self.calendar.values() if str(e.get("day", "")).lower() == str(a["day"]).lower()]
        if tool == "create_calendar_block":
            key = f"ev{len(self.calendar) + 1}"
            self.calendar[key] = {"title": a["title"], "start": a["start"], "minutes": a["minutes"]}
            return {"created": key}
        if tool == "find_notes":
            topic = str(a["topic"]).lower()
            return [
                {"id": k, "title": n["title"], "body": n["body"]}
                for k, n in self.notes.items()
                if topic in n["title"].lower() or topic in n.get("folder", "").lower()
            ]
        if tool == "draft_email":
            key = f"draft{len(self.drafts) + 1}"
            self.drafts[key] = {"to": a["to"], "subject": a["subject"], "body": a["body"]}
            return {"draft": key}
        if tool == "send_email":
            key = f"mail{len(self.sent) + 1}"
            self.sent[key] = {"to": a["to"], "subject": a["subject"], "body": a["body"]}
            return {"sent": key}
        if tool == "list_downloads":
            return [{"path": k, **v} for k, v in self.downloads.items()]
        if tool == "delete_file":
            if a["path"] not in self.downloads:
                raise NotFound(f"no file {a['path']}")
            return {"deleted": a["path"], **self.downloads.pop(a["path"])}
        if tool == "read_repo_file":
            if a["path"] not in self.repo:
                raise NotFound(f"no file {a['path']}")
            return self.repo[a["path"]]
        if tool == "edit_repo_file":
            self.repo[a["path"]] = a["content"]
            return {"edited": a["path"]}
        if tool == "run_command":
            cmd = str(a["command"])
            if not any(cmd == e or cmd.startswith(e + " ") for e in self.shell_allowlist):
                raise InvalidInput(f"command not on the allow-list: {cmd}", where="command")
            key = f"cmd{len(self.commands) + 1}"
            self.commands[key] = {"command": cmd, "exit": 0}
            return {"exit": 0}
        if tool == "open_pull_request":
            key = f"pr{len(self.staged) + 1}"
            self.staged[key] = {"kind": "pull-request-opened", **a}
            return {"opened": key}
        if tool == "query_database":
            return self._select(str(a["sql"]))
        raise NotFound(f"no tool {tool}")

    # -- safe, non-committing paths -------------------------------------------------

    def stage(self, tool: str, args: Mapping[str, Any]) -> Any:
        a = dict(args)
        if tool == "send_email":
            return self.call("draft_email", a)
        key = f"stage{len(self.staged) + 1}"
        kinds = {
            "create_calendar_block": "calendar-block-proposed",
            "delete_file": "deletion-proposed",
            "edit_repo_file": "edit-staged",
            "open_pull_request": "pull-request-drafted",
        }
        if tool not in kinds:
            raise InvalidInput(f"{tool} has no safe staging path", where=tool)
        self.staged[key] = {"kind": kinds[tool], **a}
        return {"staged": key}

    def _select(self, sql: str) -> list[dict[str, Any]]:
        """A read-only toy: ``SELECT ... FROM table`` returns that table's rows."""
        words = sql.replace(",", " ").split()
        lowered = [w.lower() for w in words]
        if not lowered or lowered[0] not in ("select", "with") or ";" in sql.strip().rstrip(";"):
            raise InvalidInput("read-only database: SELECT only", where="sql")
        table = words[lowered.index("from") + 1] if "from" in lowered else ""
        if table not in self.database:
            raise NotFound(f"no table {table}")
        return copy.deepcopy(self.database[table])


@dataclass
class PlanReport:
    decisions: list[Decision]
    executed: list[str]
    staged: list[str]
    blocked: list[str]
    postconditions: list[dict[str, Any]]

    @property
    def verified(self) -> bool:
        return all(p["ok"] for p in self.postconditions)


def run_plan(session: Session, adapter: Adapter, plan: list[tuple[str, dict[str, Any]]]) -> PlanReport:
    """Drive ``plan`` (what an agent proposes, in order) through the gate and the adapter."""
    before = adapter.snapshot()
    decisions: list[Decision] = []
    executed: list[str] = []
    staged: list[str] = []
    blocked: list[str] = []
    for tool, args in plan:
        d = session.check(tool, args)
        decisions.append(d)
        if d.executes:
            out = adapter.call(tool, args)
            session.observe(tool, out, args=args)
            executed.append(tool)
        elif d.level.needs_approval:
            contract = session.gate.contract(tool)
            if contract is not None and contract.stage:
                adapter.stage(tool, args)
                staged.append(tool)
        else:
            blocked.append(tool)
    after = adapter.snapshot()
    approved = {d.tool for d in decisions if d.approval_used}
    results = check_postconditions(session.gate, decisions, before, after, approved)
    if results:  # kept in the session's journal, so the run shows them after the fact
        session.gate.journal.postconditions(session.id, results)
    return PlanReport(decisions, executed, staged, blocked, results)


def check_postconditions(
    gate: Gate,
    decisions: list[Decision],
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    approved: set[str],
) -> list[dict[str, Any]]:
    """Evaluate the declared postconditions of every contract the run touched, on the diff.

    Each result names its check (``tool:check:collection``) and the first decision on that
    tool, so a stored result can be traced to the call it was about.
    """
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    for d in decisions:
        contract = gate.contract(d.tool)
        if contract is None or d.tool in seen:
            continue
        seen.add(d.tool)
        for pc in contract.postconditions:
            coll = str(pc["collection"])
            b, a = before.get(coll, {}), after.get(coll, {})
            added = [k for k in a if k not in b]
            removed = [k for k in b if k not in a]
            changed = [k for k in a if k in b and a[k] != b[k]]
            check = str(pc["check"])
            if check == "unchanged":
                ok = (pc.get("unless_approved") and d.tool in approved) or not (added or removed or changed)
                detail = f"added {added}, removed {removed}, changed {changed}"
            elif check == "max_added":
                ok, detail = len(added) <= int(pc["count"]), f"{len(added)} added"
            elif check == "max_removed":
                ok, detail = len(removed) <= int(pc["count"]), f"{len(removed)} removed"
            elif check == "no_secret_in":
                blob = repr(a)
                leaked = [s[:4] + "..." for s in gate.secrets if s in blob]
                ok, detail = not leaked, f"secrets found: {leaked}" if leaked else "no secret"
            else:
                ok, detail = False, f"unknown check {check!r} (fails closed)"
            results.append(
                {
                    "id": f"{d.tool}:{check}:{coll}",
                    "decision_id": d.id,
                    "tool": d.tool,
                    "check": check,
                    "collection": coll,
                    "ok": bool(ok),
                    "detail": detail,
                }
            )
    return results
