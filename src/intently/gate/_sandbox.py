"""An in-memory sandbox workspace and the adapter protocol the gate drives real tools through.

The sandbox holds a calendar, an inbox (drafts and sent mail), downloads, notes, a repository
with a shell allow-list, and a read-only database. Its tools carry explicit contracts
(``sandbox.yaml``). :func:`run_plan` puts every proposed call through a gate session: allowed
calls execute, calls waiting for approval run only their safe, non-committing path (draft,
stage), blocked calls do nothing. After each call that ran (committed or staged), its
contract's postconditions are checked deterministically on the diff that call made, against
that call's own arguments (the mail went to the approved recipient, the deleted file is the
one named), and a tool whose contract says it only reads must change nothing. The results are
recorded in the session's journal (``GATE_POSTCONDITIONS_CHECKED`` in a home's log), also
when a call or a check fails part way.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.errors import InvalidInput, NotFound
from ._contracts import ENTITY_ROLES, SideEffect
from ._decision import Decision
from ._gate import Gate, Session
from ._values import normalise, string_leaves

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
    """Drive ``plan`` (what an agent proposes, in order) through the gate and the adapter.

    Each call that runs is checked on its own diff (the state just before and just after it),
    so two correct sends each add one mail, and a failure names the call that made it. If a
    call, a snapshot or the session raises, what ran so far is still checked and recorded
    (the failing call's check fails: its effect could not be verified), then the error is
    raised: a side effect never goes unrecorded."""
    decisions: list[Decision] = []
    executed: list[str] = []
    staged: list[str] = []
    blocked: list[str] = []
    results: list[dict[str, Any]] = []
    try:
        for tool, args in plan:
            d = session.check(tool, args)
            decisions.append(d)
            contract = session.gate.contract(tool)
            commit = d.executes
            if not commit and not (d.level.needs_approval and contract is not None and contract.stage):
                if not d.level.needs_approval:
                    blocked.append(tool)
                continue
            before = adapter.snapshot()
            try:
                out = adapter.call(tool, args) if commit else adapter.stage(tool, args)
            except Exception as exc:
                results.extend(_after_failure(session.gate, adapter, d, before, commit, exc))
                raise
            results.extend(check_postconditions(session.gate, d, before, adapter.snapshot(), executed=commit))
            if commit:
                session.observe(tool, out, args=args)
                executed.append(tool)
            else:
                staged.append(tool)
    finally:
        if results:  # kept in the session's journal, so the run shows them after the fact
            session.gate.journal.postconditions(session.id, results)
    return PlanReport(decisions, executed, staged, blocked, results)


def _after_failure(
    gate: Gate, adapter: Adapter, d: Decision, before: dict[str, dict[str, Any]], commit: bool, exc: Exception
) -> list[dict[str, Any]]:
    """The results for a call whose adapter raised: a failed ``completed`` check naming the
    error, and its postconditions on whatever it changed before failing (fail closed: an
    effect that cannot be checked is a failed check)."""
    failed = _result(d, "completed", "*", False, f"the call raised {type(exc).__name__}: {exc}")
    try:
        after = adapter.snapshot()
    except Exception as snap:
        return [failed, _result(d, "snapshot", "*", False, f"the state after it cannot be read: {snap}")]
    return [failed, *check_postconditions(gate, d, before, after, executed=commit)]


def _result(d: Decision, check: str, collection: str, ok: bool, detail: str) -> dict[str, Any]:
    return {
        "id": f"{d.tool}:{check}:{collection}",
        "decision_id": d.id,
        "tool": d.tool,
        "check": check,
        "collection": collection,
        "ok": bool(ok),
        "detail": detail,
    }


def _diff(b: Mapping[str, Any], a: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    added = [k for k in a if k not in b]
    removed = [k for k in b if k not in a]
    changed = [k for k in a if k in b and a[k] != b[k]]
    return added, removed, changed


def _same(x: Any, y: Any) -> bool:
    """Values equal as the gate compares them (``Bob@Corp.com`` is ``bob@corp.com``)."""
    if isinstance(x, Mapping | list | tuple) or isinstance(y, Mapping | list | tuple):
        return bool(x == y)
    return normalise(x) == normalise(y)


def _stray(key: str, item: Any, args: Mapping[str, Any]) -> str | None:
    """Why the item ``key`` a call added, changed or removed is not the one its arguments
    name, or ``None`` when it is. A field the item shares with the arguments must hold the
    argument's value (the mail's ``to`` is the approved recipient); with no such field, the
    item's id must be one the arguments name (the deleted path, the cancelled event id)."""
    shared = [f for f in args if isinstance(item, Mapping) and f in item]
    for f in shared:
        if not _same(item[f], args[f]):
            return f"{key}: {f} is {item[f]!r}, the call said {args[f]!r}"
    # Every scalar an argument carries names an item (``ids: [1, 2]`` names 1 and 2).
    if shared or normalise(key) in {normalise(v) for _, v in string_leaves(dict(args))}:
        return None
    return f"{key} is not named by the call's arguments"


def check_postconditions(
    gate: Gate,
    decision: Decision,
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    *,
    executed: bool = True,
) -> list[dict[str, Any]]:
    """Check one call's effect (``before`` -> ``after`` around that call alone) against its
    contract and its own arguments.

    Each result names its check (``tool:check:collection``) and the call's decision, so a
    stored result is traced to the call that made the change. A contract that only reads
    (side effect ``none``) must change nothing at all. ``max_added`` / ``max_removed`` count
    the items, and each item must be the one the call named (:func:`_stray`); a call that only
    staged (``executed=False``) may add or remove none. ``unchanged`` with ``unless_approved``
    lets an approved call make its own change (items matching its arguments) and nothing else:
    no removal, no change to other items. A collection the adapter does not have, or a check
    that cannot run, is a failed check (fail closed), never a vacuous pass."""
    contract = gate.contract(decision.tool)
    if contract is None:
        return [_result(decision, "contract", "*", False, "no contract to check the effect against")]
    args = decision.args
    entity = {k: v for k, v in args.items() if contract.role_of(k) in ENTITY_ROLES}
    results: list[dict[str, Any]] = []
    if contract.side_effect is SideEffect.NONE:
        touched = [
            f"{c}: added {a}, removed {r}, changed {ch}"
            for c in sorted(set(before) | set(after))
            for a, r, ch in [_diff(before.get(c, {}), after.get(c, {}))]
            if a or r or ch
        ]
        detail = "; ".join(touched) or "nothing changed"
        results.append(_result(decision, "read_only", "*", not touched, detail))
    for pc in contract.postconditions:
        check, coll = str(pc.get("check")), str(pc.get("collection"))
        try:
            ok, detail = _evaluate(gate, decision, pc, before, after, entity, executed)
        except Exception as exc:  # a check that cannot run is a failed check
            ok, detail = False, f"the check could not run: {type(exc).__name__}: {exc} (fails closed)"
        results.append(_result(decision, check, coll, ok, detail))
    if contract.side_effect is not SideEffect.NONE:
        named = {str(pc.get("collection")) for pc in contract.postconditions}
        results.extend(_outside_named(decision, before, after, named, entity))
    return results


def _outside_named(
    decision: Decision,
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    named: set[str],
    entity: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """A failed ``outside_named`` result for each collection the postconditions do not name in
    which the call changed something that is not its own doing.

    Postconditions check the collections they name; without this, a send that also deleted a
    file, or a calendar write that also sent a mail, passed every check. Outside the named
    collections a call may only add or change items its arguments name (the draft a staged
    send saves, the entry a command leaves) and remove items its entity arguments name; any
    other change fails. Nothing is recorded for a collection left as it was, or changed only
    as the call said, so the results of a well-behaved call are the same as before."""
    out: list[dict[str, Any]] = []
    args: Mapping[str, Any] = decision.args
    for coll in sorted((set(before) | set(after)) - named):
        b, a = before.get(coll, {}), after.get(coll, {})
        added, removed, changed = _diff(b, a)
        strays = [s for k in added + changed if (s := _stray(k, a[k], args))]
        strays += [f"{k} removed ({s})" for k in removed if (s := _stray(k, b[k], entity))]
        if strays:
            detail = (
                f"added {added}, removed {removed}, changed {changed} in a collection its postconditions do not "
                f"name; not the call's own change: {'; '.join(strays)}"
            )
            out.append(_result(decision, "outside_named", coll, False, detail))
    return out


def _evaluate(
    gate: Gate,
    decision: Decision,
    pc: Mapping[str, Any],
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    entity: Mapping[str, Any],
    executed: bool,
) -> tuple[bool, str]:
    args: Mapping[str, Any] = decision.args
    coll, check = str(pc["collection"]), str(pc["check"])
    if coll not in before or coll not in after:
        return False, f"the adapter has no collection {coll!r} (fails closed)"
    b, a = before[coll], after[coll]
    added, removed, changed = _diff(b, a)
    if check == "unchanged":
        detail = f"added {added}, removed {removed}, changed {changed}"
        if pc.get("unless_approved") and executed and decision.approval_used:
            strays = [s for k in added + changed if (s := _stray(k, a[k], args))]
            strays += [f"{k} removed" for k in removed]
            return not strays, detail + (f"; not the approved change: {'; '.join(strays)}" if strays else "")
        return not (added or removed or changed), detail
    if check in ("max_added", "max_removed"):
        limit = int(pc["count"]) if executed else 0
        if check == "max_added":
            items, verb = [(k, a[k], args) for k in added], "added"
        else:
            items, verb = [(k, b[k], entity) for k in removed], "removed"
        strays = [s for k, item, named in items if (s := _stray(k, item, named))]
        ok = len(items) <= limit and not strays
        detail = f"{len(items)} {verb}" + ("" if executed else " (staged only: nothing may be committed)")
        return ok, detail + (f"; not what the call named: {'; '.join(strays)}" if strays else "")
    if check == "no_secret_in":  # in what this call wrote, so a leak is blamed on its writer
        blob = repr([a[k] for k in added + changed])
        leaked = [sec[:4] + "..." for sec in gate.secrets if sec in blob]
        return not leaked, f"secrets found: {leaked}" if leaked else "no secret"
    return False, f"unknown check {check!r} (fails closed)"
