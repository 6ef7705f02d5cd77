"""The gate and its sessions: contracts + provenance + intent + policy, one decision per call.

``Gate.from_tools(tools)`` builds a gate for MCP-style tool definitions; ``gate.session(
user_request=...)`` opens a run; ``session.observe(tool, output)`` feeds it what tools
returned; ``session.check(tool, args)`` returns a :class:`Decision`; ``session.approve(id)``
grants a single-use approval bound to the hash of that exact action.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import posixpath
import re
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from ..core.clock import Clock, SystemClock, format_time
from ..core.errors import InvalidInput, InvalidTransition
from ..core.ids import new_id
from ..core.shell import allowlisted, harmless
from ..log import canonical_json
from ._bundle import Bundle, default_bundle
from ._contracts import ENTITY_ROLES, Contract, Role, SideEffect, ToolDefinition, snake_case
from ._decision import Decision, Level
from ._intent import Proposer, ResolvedRequest, resolve, resolve_parts
from ._journal import Journal, MemoryJournal
from ._paths import (
    CHANGE_KINDS,
    command_paths,
    inside_folder,
    matching_exclusion,
    named_in,
    read_command,
    sweep_covers,
)
from ._payees import mismatch
from ._provenance import TRUSTED_ORIGINS, Ledger, Origin, Sighting
from ._request_facts import request_facts
from ._values import (
    EMAIL,
    MAX_DATA_OPERANDS,
    MAX_OPERANDS,
    addresses_in,
    amount_of,
    atoms_of,
    computable,
    computable_from,
    destination_shape,
    normalise,
    on_site,
    trusted_hosts,
    words,
)
from ._vocabulary import stem_all

__all__ = ["Gate", "Session", "action_hash"]

_LEAVES_HOME = {SideEffect.EXTERNAL_COMM, SideEffect.EGRESS, SideEffect.FINANCIAL}
# Calls that change the files their paths name (or, a command, whatever its words write).
_CHANGES_FILES = {SideEffect.LOCAL_WRITE, SideEffect.DESTRUCTIVE, SideEffect.COMMAND}
_SKIP_KEYS = {"type", "permission"}
# Who sends, not where it goes: never traced as a destination.
_SENDER_KEY = re.compile(r"(?:from|sender|author|reply_from|on_behalf_of)(?:_[a-z]+)?")
# Values up to this long are read for the addresses inside them; longer ones are free text.
_SHORT_VALUE = 300
# Where data goes: a value in one of these roles is traced wherever it sits in the arguments.
_DESTINATIONS = frozenset({Role.RECIPIENT, Role.PAYEE, Role.URL})
# The classes of a value read as text of a tool output (requested or not): what an aside can show.
_TEXTUAL = frozenset({"text", "unrequested"})


# Words of a request that asks for a sum to be worked out ("send back the difference", "split
# the bill", "19.5% of it plus a fee"): a computed amount is then the model's arithmetic, not a
# number it made up. Stems, as ``stem_all`` gives them.
_COMPUTING = frozenset(
    stem_all(
        [
            "difference", "differ", "share", "split", "total", "sum", "half", "third", "quarter", "percent",
            "percentage", "plus", "minus", "remaining", "remainder", "rest", "balance", "average", "each", "per",
            "double", "twice", "triple", "increase", "decrease", "discount", "tip", "vat", "tax", "fee", "interest",
            "convert", "conversion", "exchange", "rate", "add", "subtract", "multiply", "divide", "times", "extra",
            "additional", "accordingly", "adjust", "owe", "owed", "less", "more", "round",
        ]
    )
)  # fmt: skip


# Arguments nested deeper than this are blocked before any recursive step reads them: no tool
# schema nests this far, and otherwise Python's recursion limit would decide (RecursionError).
_MAX_DEPTH = 100


def _jsonable(value: Any) -> Any:
    result: Any = json.loads(json.dumps(value, default=str))
    return result


def action_hash(session_id: str, tool: str, args: Mapping[str, Any]) -> str:
    """SHA-256 of the exact action: session, tool and canonical arguments.

    Arguments that are not plain JSON (a cycle, NaN, a number JCS cannot carry) are
    :class:`InvalidInput` naming ``args``, never a bare ValueError."""
    try:
        clean = _jsonable(dict(args))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"not plain JSON: {exc}", where="args") from exc
    body = canonical_json({"session": session_id, "tool": tool, "args": clean}, where="args")
    return hashlib.sha256(body).hexdigest()


def _readable_args(args: object) -> tuple[dict[str, Any], str | None]:
    """The call's arguments as plain JSON, or ``({}, why)`` when they cannot be read as such.

    A tool call comes from a model and is untrusted: arguments that are not an object, that
    refer to themselves or nest past ``_MAX_DEPTH``, or that hold NaN, infinity or a number or
    string canonical JSON cannot carry, are a reason to block, not an exception for the
    harness (``Session.check`` never raises for a bad call). The depth is measured without
    recursion before anything recursive reads the arguments, so no input reaches the recursion
    limit."""
    if not isinstance(args, Mapping):
        return {}, f"the arguments are {type(args).__name__}, not an object of named values"
    try:
        stack: list[tuple[Any, int]] = [(args, 1)]
        while stack:
            value, depth = stack.pop()
            if not isinstance(value, Mapping | list | tuple):
                continue
            if depth > _MAX_DEPTH:
                return {}, f"the arguments nest deeper than {_MAX_DEPTH} levels (or contain themselves)"
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, Mapping) else value))
        # Strict: an object that only prints like a value ("bob@corp.com") is not that value, and
        # the gate must judge what the tool receives, so anything JSON cannot carry is unreadable.
        clean: dict[str, Any] = json.loads(json.dumps(dict(args), allow_nan=False))
        canonical_json(clean, where="args")
    except Exception as exc:  # anything unreadable blocks: fail closed, with the reason
        return {}, f"the arguments are not plain JSON: {exc}"
    return clean, None


def _unreadable_hash(session_id: str, tool: str, problem: str) -> str:
    """A hash for a call whose arguments could not be read: never the hash of a real call
    (so it cannot be mistaken for ``tool({})`` in the log), and never approvable (it blocks)."""
    body = canonical_json({"session": session_id, "tool": tool, "unreadable_args": problem})
    return hashlib.sha256(body).hexdigest()


class Gate:
    """Contracts for a set of tools, the signed bundle's vocabulary and rules, and a journal."""

    def __init__(
        self,
        tools: Iterable[Mapping[str, Any] | ToolDefinition] = (),
        *,
        bundle: Bundle | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        config: Mapping[str, Any] | None = None,
        shell_allowlist: Sequence[str] = (),
        shell_trusted: Sequence[str] = (),
        web_trusted: Sequence[str] = (),
        context_objects: Sequence[str] = (),
        secrets: Sequence[str] = (),
        proposer: Proposer | None = None,
        journal: Journal | None = None,
        clock: Clock | None = None,
        actor: str = "gate",
    ) -> None:
        self.bundle = bundle or default_bundle()
        contracts = self.bundle.contracts.with_overrides(overrides) if overrides else self.bundle.contracts
        self.tools = {d.name: d for d in (ToolDefinition.parse(t) for t in tools)}
        self.contracts: dict[str, Contract] = contracts.contracts(self.tools.values())
        for name in overrides or {}:
            if name not in self.contracts:
                c = contracts.contract_for(None, name=name)
                if c is not None:
                    self.contracts[name] = c
        self.config = dict(config or {})
        self.shell_allowlist = tuple(shell_allowlist)
        # Commands the user lets run without the gate's own confirmation (still allow-listed
        # in every other way: whole entry or entry plus arguments, no shell operator).
        self.shell_trusted = tuple(shell_trusted)
        # Sites whose addresses the model may make up for a lookup (docs it knows by heart):
        # each entry is a host name and admits its subdomains. Addresses an instruction gave
        # stay suspect whatever their host. A URL or a wildcard here would match nothing and
        # fail silently, so it is refused as the config and the command line refuse it.
        self.web_trusted = trusted_hosts(list(web_trusted), where="web_trusted")
        # What every request in this deployment is about without saying so: a prompt to a
        # coding agent concerns the repository it works in ("add a --verbose flag" names none).
        self.context_objects = frozenset(context_objects)
        self.secrets = tuple(s for s in secrets if len(s) >= 8)
        self.proposer = proposer
        self.journal: Journal = journal or MemoryJournal()
        self.clock = clock or SystemClock()
        self.actor = actor

    @classmethod
    def from_tools(cls, tools: Iterable[Mapping[str, Any] | ToolDefinition], **options: Any) -> Gate:
        """A gate for MCP-style tool definitions (name, description, inputSchema, annotations)."""
        return cls(tools, **options)

    def contract(self, tool: str) -> Contract | None:
        return self.contracts.get(tool)

    def session(
        self,
        *,
        user_request: str,
        namespace: str | None = None,
        trusted: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        request_parts: Sequence[str] | None = None,
        readings: MutableMapping[str, Any] | None = None,
    ) -> Session:
        """Open a run on ``user_request``.

        ``request_parts`` says the request is these prompts joined by blank lines (a
        conversation so far): each prompt is then read once and its reading kept, in this
        process and in ``readings`` when given (a mapping the caller stores, keyed by content
        hash), so a long conversation does not make every later check read all of it again.
        The request reads exactly as the joined text does, but for the paths it protects: the
        prompts are read in order, and a later prompt that allows a change of a path an earlier
        one protected ("Do not edit src/app/config.py", then "OK, now you may edit config.py")
        lifts that protection, and a still later "don't touch config.py" imposes it again. Parts
        that do not join to ``user_request`` are ignored. A session holds one request: a new
        prompt is declared by opening a new session on all the prompts so far (what the Claude
        Code hook does); ``user_request`` alone is one prompt, in which "do not edit X" holds
        whatever else it says."""
        return Session(
            self,
            user_request,
            namespace=namespace,
            trusted=trusted,
            session_id=session_id,
            request_parts=request_parts,
            readings=readings,
        )


class Session:
    """One run of an agent on one user request."""

    def __init__(
        self,
        gate: Gate,
        user_request: str,
        *,
        namespace: str | None,
        trusted: Mapping[str, Any] | None,
        session_id: str | None,
        request_parts: Sequence[str] | None = None,
        readings: MutableMapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(user_request, str):  # the request is what every call is checked against
            raise InvalidInput(
                f"expected the user's request as a string, got {type(user_request).__name__}", where="user_request"
            )
        self.gate = gate
        self.id = session_id or new_id("run_", now=gate.clock.now())
        self.namespace = namespace
        #: The folder the agent's shell commands start in: a patch a command applies (``git
        #: apply x.patch``) is read from there to see which files it changes. ``None``: this
        #: process's working folder. A hook sets it to the folder Claude Code reports.
        self.workdir: str | None = None
        #: The folder the user's paths are relative to (the project's top): "do not edit
        #: src/app/config.py" names it from there. When :attr:`workdir` lies inside it (the
        #: agent's shell did ``cd src/app``), a command's relative paths (``rm config.py``) are
        #: named from here before they are compared. ``None``: the same as :attr:`workdir`.
        self.project_root: str | None = None
        vocab = gate.bundle.vocabulary
        parts = list(request_parts) if request_parts is not None else None
        if parts is not None and "\n\n".join(parts) == user_request:
            resolved = resolve_parts(parts, vocab, gate.proposer, readings)
        else:
            parts = None
            resolved = resolve(user_request, vocab, gate.proposer)
        if gate.context_objects - resolved.objects:
            resolved = dataclasses.replace(resolved, objects=resolved.objects | gate.context_objects)
        self.request: ResolvedRequest = resolved
        #: Kinds of action an agent proposed and the user agreed to ("Yes, go ahead"), and the
        #: SHA-256 of each proposal: a decision that used them names both, so the log shows
        #: what the user agreed to and the transcript line it came from can be checked.
        self.assented: frozenset[str] = frozenset()
        self.agreements: tuple[str, ...] = ()
        self.ledger = Ledger(vocab.opens_with_action, vocab.orders_in_aside)
        self._executed: dict[str, int] = {}
        # Its atoms and amounts, and whose each IBAN is: scanned once per request and kept in
        # ``readings`` beside the prompts' readings (:mod:`._request_facts`).
        facts = request_facts(user_request, readings)
        self.ledger.add_declared(Origin.USER, "request", user_request, scanned=(facts.atoms, facts.amounts))
        # The amounts the request states ("pay Alice 100 euros"), and whether it asks for one
        # to be worked out ("send back the difference"): a payment's amount seen nowhere is
        # then the model's arithmetic; otherwise the model made it up.
        self._request_amounts = facts.amounts
        self._request_computes = bool(resolved.stems & _COMPUTING) or any(c in user_request for c in "%+")
        # Whose each IBAN of the request is, when it pays two or more ("Alice ... DE89..., Bob ... GB29...").
        self._payees = facts.payees
        if gate.config:
            self.ledger.add_declared(Origin.CONFIG, "config", gate.config)
        for name, data in (trusted or {}).items():
            self.ledger.add_declared(Origin.TRUSTED, f"trusted:{name}", data)
        gate.journal.open_session(
            self.id,
            {
                "namespace": namespace,
                "request": user_request,
                # The prompts the request joins, when it came as them: a home's log keeps each
                # once and the opening names them (:mod:`intently.gate._prompts`).
                **({"request_parts": parts} if parts else {}),
                "resolved": self.request.to_json(),
                "bundle": gate.bundle.version,
                "trusted": sorted((trusted or {}).keys()),
                "started": format_time(gate.clock.now()),
            },
        )

    # -- inputs ---------------------------------------------------------------

    def _folder(self) -> str:
        """Where the agent's shell commands start: :attr:`workdir`, else this process's folder."""
        return self.workdir if self.workdir is not None else os.getcwd()

    def _offset(self) -> str | None:
        """Where :attr:`workdir` lies under :attr:`project_root` (``src/app``), or ``None`` when
        either is unknown, they are the same folder, or the shell is outside the project. Two
        ``realpath`` calls: asked once per check, not once per path of a command."""
        if self.project_root is None or self.workdir is None:
            return None
        offset = os.path.relpath(os.path.realpath(self.workdir), os.path.realpath(self.project_root))
        if offset == "." or offset == ".." or offset.startswith(".." + os.sep):
            return None
        return Path(offset).as_posix()

    def agree_to(self, proposal: str) -> frozenset[str]:
        """The user answered the agent's ``proposal`` with a bare assent ("Yes, go ahead").

        The kinds of action the proposal names (not negated there) count as agreed to; its
        values do not: the proposal is the model's text, so every address, path or amount in a
        later call must still come from the user or a tool output. Returns the agreed kinds."""
        read = resolve(proposal, self.gate.bundle.vocabulary, None)
        agreed = read.intents - read.negated
        self.assented = self.assented | agreed
        self.agreements = (*self.agreements, hashlib.sha256(proposal.encode("utf-8")).hexdigest())
        return agreed

    def observe(self, tool: str, output: Any, args: Mapping[str, Any] | None = None) -> str:
        """Record a tool's output (untrusted). ``args`` (the call that produced it) lets the gate
        tell a read the user pointed at from one the model chose. Returns the source label."""
        contract = self.gate.contract(tool)
        designated = any(
            self.ledger.in_request(v) for _, v in _scalars(args or {}) if isinstance(v, str) and len(v) >= 3
        )
        requested = designated or bool(contract and contract.objects & self.request.objects)
        label = self.ledger.add_output(
            tool,
            output,
            designated=designated,
            requested=requested,
            # A write's own arguments are not evidence for later calls: otherwise one approved
            # payment would make an identical second payment look already "seen" and pass.
            args=args if contract is not None and contract.side_effect is SideEffect.NONE else None,
            objects=contract.objects if contract else frozenset(),
        )
        digest = hashlib.sha256(json.dumps(_jsonable(output), sort_keys=True).encode()).hexdigest()
        self.gate.journal.observed(self.id, tool, label, digest)
        return label

    # -- decisions ------------------------------------------------------------

    def check(self, tool: str, args: Mapping[str, Any]) -> Decision:
        """Decide one proposed call. Never raises for a bad call: it blocks (fail closed).

        A tool name that is not a string, arguments that are not plain JSON (not an object, a
        cycle, NaN, nesting past 100 levels) and any failure while deciding all give a
        ``block`` decision with rule ``unreadable-call`` or ``internal-error`` and the reason,
        recorded in the journal like any other. The one exception is a journal that cannot
        record the decision (:class:`~intently.PermissionDenied` for another actor's session,
        :class:`~intently.StoreError`): then no decision is returned, so nothing may run."""
        name = tool if isinstance(tool, str) else f"<{type(tool).__name__}>"
        clean, problem = _readable_args(args)
        if not isinstance(tool, str):
            problem = f"the tool name is {type(tool).__name__}, not a string"
        provenance: dict[str, list[dict[str, Any]]] = {}
        facts: dict[str, Any] = {"tool": name}
        rules: tuple[str, ...]
        if problem is not None:
            ahash = _unreadable_hash(self.id, name, problem)
            level, rules, reason = Level.BLOCK, ("unreadable-call",), f"the gate cannot read this call: {problem}"
        else:
            ahash = action_hash(self.id, name, clean)
            try:
                contract = self.gate.contract(name)
                if contract is None:
                    level, rules = Level.BLOCK, ("no-contract",)
                    reason = f"{name} has no contract, so the gate blocks it"
                else:
                    facts, provenance = self._facts(contract, clean)
                    verdict = self.gate.bundle.policies.decide(facts)
                    level, rules, reason = verdict.level, verdict.rule_ids, verdict.reason
                    if facts["destination_lookalike"] and level is not Level.BLOCK:
                        level, rules = Level.BLOCK, ("lookalike-destination",)
                        reason = (
                            f"{facts['lookalike_values']} but is another address: a look-alike of one "
                            "the user gave is an impersonation, never theirs"
                        )
                    elif facts["path_excluded"]:
                        # As for look-alikes: in code until a re-signed bundle carries the rule.
                        # It outranks every allow and approval: the user said so about this path.
                        why = facts["excluded_path_values"]
                        if level is Level.BLOCK:
                            rules, reason = (*rules, "excluded-path"), f"{reason}; and {why}"
                        else:
                            level, rules, reason = Level.BLOCK, ("excluded-path",), why
                    elif facts["path_named"]:
                        # A program the gate cannot trace names a protected path: a person
                        # decides, whatever an allow-list or a trusted entry would say.
                        why = facts["named_path_values"]
                        if level in (Level.ALLOW, Level.WARN):
                            level, rules, reason = Level.CONFIRM, ("excluded-path-named",), why
                        else:
                            rules, reason = (*rules, "excluded-path-named"), f"{reason}; and {why}"
                    elif facts["path_lifted"]:
                        # Say why a path the user once protected may be changed now.
                        reason = f"{reason}; {facts['lifted_path_values']}"
                    elif facts["payee_mismatch"] and level is not Level.BLOCK:
                        # As for look-alikes: in code until a re-signed bundle carries the rule.
                        level, rules = Level.BLOCK, ("payee-mismatch",)
                        reason = f"{facts['payee_mismatch_values']}: the payment mixes up the request's payees"
            except Exception as exc:  # an internal error blocks, never allows (fail closed)
                provenance, facts = {}, {"tool": name}
                level, rules = Level.BLOCK, ("internal-error",)
                reason = f"the gate failed on this call: {type(exc).__name__}: {exc}"
        used = self.gate.journal.open_approval(self.id, ahash) if level.needs_approval else None
        kept = {k: v for k, v in facts.items() if isinstance(v, bool | int | str)}

        def make(approval: str | None) -> Decision:
            final, final_rules, final_reason = level, tuple(rules), reason
            if approval is not None:
                final, final_rules = Level.ALLOW, (*final_rules, "approved")
                final_reason = f"approved by the user (approval {approval}); was: {reason}"
            return Decision(
                id=new_id("dec_", now=self.gate.clock.now()),
                session_id=self.id,
                level=final,
                tool=name,
                args=clean,
                action_hash=ahash,
                rule_ids=final_rules,
                reason=final_reason,
                provenance=provenance,
                facts=kept,
                approval_used=approval,
            )

        decision = make(used)
        try:
            self.gate.journal.decided(decision)
        except InvalidTransition:  # another process used that approval first: ask again
            decision = make(None)
            self.gate.journal.decided(decision)
        if decision.executes:
            self._executed[name] = self._executed.get(name, 0) + 1
        return decision

    def approve(self, decision_id: str, *, approver: str | None = None) -> None:
        """Approve a confirm/review decision of this session: once, for that exact action."""
        decision = self.gate.journal.decision(decision_id)
        if decision.session_id != self.id:
            raise InvalidTransition("approval", "other-session", "approved")
        if not decision.level.needs_approval:
            raise InvalidTransition("decision", str(decision.level), "approved")
        self.gate.journal.approve(decision, approver or self.gate.actor)

    def deny(self, decision_id: str, reason: str) -> None:
        """Refuse a confirm/review decision of this session for good (the user said no)."""
        decision = self.gate.journal.decision(decision_id)
        if decision.session_id != self.id or not decision.level.needs_approval:
            raise InvalidTransition("decision", str(decision.level), "denied")
        self.gate.journal.deny(decision, reason)

    # -- facts ----------------------------------------------------------------

    def _facts(
        self, contract: Contract, args: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
        req = self.request
        kinds = contract.kinds
        # A "read" that changes state has no kinds: authorised only when the request names
        # what it touches (every word of the tool's name after the verb, e.g. "unread emails").
        if kinds:
            authorized = bool(kinds & req.intents)
        else:
            authorized = bool(contract.objects & req.objects) and contract.name_words <= req.stems
        groups: dict[str, list[str]] = {
            k: []
            for k in ("bound", "instructed", "delegated", "invented", "trusted_site", "derived", "text", "unrequested")
        }
        sources: dict[str, set[str]] = {k: set() for k in groups}
        provenance: dict[str, list[dict[str, Any]]] = {}
        recipients_bound = True
        excluded: list[str] = []  # destinations the request said to leave out
        # Destinations that look like one the user gave but are not it: a phishing look-alike.
        lookalikes: list[str] = []
        # Payees the request typed: its IBAN for one payee paid with another's name or amount.
        mixed: list[str] = []
        invented_elsewhere = False
        # A path outside the working folder that the user did not give: whatever source named
        # it (a README's free text), writing there is asked about, never merely warned of.
        outside_paths: list[str] = []
        # A project's docs tell readers which files to change ("edit src/parser.py"); when the
        # agent's own search also found that file, the instruction is not its only source.
        instructed_unfound = False
        # Opening an address is sending to it, even for a tool that only reads: the request
        # (its host, path and query) reaches whoever owns the address.
        addresses: list[str] = []
        # A trusted site vouches for an address the model made up only when the call reads or
        # looks something up there; a write or a message to a made-up address stays refused.
        lookup = contract.side_effect is SideEffect.NONE or (
            contract.side_effect is SideEffect.EGRESS and contract.risk == "low"
        )
        for arg, key, scalar, role in self._traced_values(contract, args):
            if key in _SKIP_KEYS or scalar in (None, ""):
                continue
            sightings = self.ledger.trace(scalar)
            id_objects = self._id_objects(key) if role is Role.TARGET else frozenset()
            if id_objects:
                # An email_id comes from reading emails: ids seen only in reads of other
                # kinds of objects (a file numbered 9) do not vouch for it.
                sightings = [
                    s for s in sightings if not s.objects or s.objects & id_objects or s.origin in TRUSTED_ORIGINS
                ]
            provenance.setdefault(arg, []).append({"value": scalar, "seen": [s.to_json() for s in sightings]})
            group, srcs = _classify(sightings, req.delegated)
            if group == "invented" and role is Role.URL and lookup and on_site(str(scalar), self.gate.web_trusted):
                group = "trusted_site"  # made up, for a read or lookup, on a site the user trusts
            if (
                group in _TEXTUAL
                and role in _DESTINATIONS
                and not lookup
                and (pointed := self.ledger.pointed_only(scalar))
            ):
                # Only an aside pointing the reader at it ("(visit www.… to claim)") shows this
                # address: opening it is what a citation is for, writing or sending to it follows
                # the pointer as an order.
                group, srcs = _as_order(pointed, self.ledger.designated_labels, req.delegated), pointed
            groups[group].append(f"{arg} {scalar!r}")
            if group == "invented" and not (role is Role.PATH and _inside_working_folder(str(scalar))):
                invented_elsewhere = True
            if role is Role.PATH and group != "bound" and not _inside_working_folder(str(scalar)):
                outside_paths.append(f"{arg} {scalar!r}")
            if group == "instructed" and not (
                role is Role.PATH and any(s.origin is Origin.STRUCTURED and s.requested for s in sightings)
            ):
                instructed_unfound = True
            sources[group] |= srcs
            if role in _DESTINATIONS and group != "bound":
                recipients_bound = False
            if role in _DESTINATIONS and group != "bound" and isinstance(scalar, str):
                imitated = self.ledger.imitated(scalar)
                if imitated is not None:
                    lookalikes.append(f"{arg} {scalar!r} looks like {imitated[0]!r} from {imitated[1]}")
            if role in _DESTINATIONS and _ruled_out(scalar, role, req):
                excluded.append(f"{arg} {scalar!r}")
            if role is Role.PAYEE and self._payees:
                texts = [v for _, v in _scalars({a: v for a, v in args.items() if a != arg}) if isinstance(v, str)]
                amounts = [amount_of(v) for a, v in args.items() if contract.role_of(a) is Role.AMOUNT]
                why = mismatch(self._payees, scalar, texts, next((a for a in amounts if a is not None), None))
                if why is not None:
                    mixed.append(f"{arg} {scalar!r}: {why}")
            if role is Role.URL and group in ("instructed", "invented"):
                addresses.append(
                    f"{arg} {scalar!r} ({'from an instruction in ' + ', '.join(sorted(srcs)) if srcs else 'made up'})"
                )
        # An amount is only ever checked for the one sign of an attack: every place it was seen
        # is an instruction in a tool output ("send 9,800 instead"). Amounts are computed (a
        # total, a share, a difference), and small numbers are everywhere, so an amount the
        # model worked out, or one a bill or the request also shows, is left alone.
        for arg, value in args.items():
            if contract.role_of(arg) is not Role.AMOUNT or isinstance(value, bool) or value in (None, ""):
                continue
            stated = self.ledger.stated_only_by_instructions(value, delegated=req.delegated)
            if stated:
                groups["instructed"].append(f"{arg} {value!r}")
                sources["instructed"] |= stated
                instructed_unfound = True
                provenance.setdefault(arg, []).append(
                    {"value": value, "seen": [{"origin": "instruction", "source": s} for s in sorted(stated)]}
                )
            elif contract.side_effect is SideEffect.FINANCIAL and self._amount_made_up(value):
                groups["invented"].append(f"{arg} {value!r}")
                invented_elsewhere = True
                provenance.setdefault(arg, []).append({"value": value, "seen": []})
            elif contract.side_effect is SideEffect.FINANCIAL and self._amount_unrequested(value):
                # A number that merely shows up in a read the request did not ask for (a figure
                # in an unrelated email or file) is no amount the user asked to pay: as any value
                # from such a read, it is paid only with the user's approval.
                groups["unrequested"].append(f"{arg} {value!r}")
                sources["unrequested"] |= self.ledger.amount_sources(value)
                provenance.setdefault(arg, []).append(
                    {
                        "value": value,
                        "seen": [
                            {"origin": "unrequested", "source": s} for s in sorted(self.ledger.amount_sources(value))
                        ],
                    }
                )
        copied = 0
        content_instruction = False
        content_fields: list[str] = []
        content_addresses: list[str] = []
        for arg, value in args.items():
            if contract.role_of(arg) is Role.CONTENT and isinstance(value, str):
                n, repeated = self.ledger.copied_from_tools(value)
                copied += n
                if req.delegated:  # text of the document the user said to follow may be repeated
                    repeated -= self.ledger.designated_labels
                if repeated:
                    content_instruction = True
                    content_fields.append(arg)
                # A link or address carried in the message is a destination for whoever reads
                # it: one that only an instruction in a tool output gave is the attacker's.
                for address in addresses_in(value):
                    group, srcs = _classify(self.ledger.trace(address), req.delegated)
                    if group in _TEXTUAL and (pointed := self.ledger.pointed_only(address)):
                        # a link only an aside pointed at, passed on
                        group, srcs = _as_order(pointed, self.ledger.designated_labels, req.delegated), pointed
                    if group == "instructed":
                        content_addresses.append(
                            f"{address!r} in {arg} (from an instruction in {', '.join(sorted(srcs))})"
                        )
        commands = [str(v) for a, v in args.items() if contract.role_of(a) is Role.COMMAND]
        excluded_paths, lifted_paths, named_paths = self._excluded_paths(contract, args)
        # Whatever leaves with the call: a search's query reaches the search engine.
        texts = [
            str(v) for a, v in args.items() if contract.role_of(a) in (Role.CONTENT, Role.COMMAND, Role.URL, Role.QUERY)
        ]
        secret = any(sec in t for sec in self.gate.secrets for t in texts)
        violations = contract.violations(args, self._folder())
        missing = contract.missing(args)
        facts: dict[str, Any] = {
            "tool": contract.tool,
            "side_effect": str(contract.side_effect),
            "risk": contract.risk,
            "confirm_rule": contract.confirm,
            "kinds": " or ".join(sorted(kinds)) or f"touch {', '.join(sorted(contract.objects)) or 'this'}",
            "kind_authorized": authorized,
            "kind_negated": bool(kinds & req.negated),
            "kind_proposed": bool(kinds & req.proposed),
            "kind_assented": bool(kinds & self.assented),
            "assented_kinds": " or ".join(sorted(self.assented)),
            "assented_proposals": ", ".join(self.agreements),
            "delegated": req.delegated,
            "bound": bool(groups["bound"]),
            "all_bound": not any(groups[g] for g in groups if g != "bound"),
            "instructed": bool(groups["instructed"]),
            "followed": bool(groups["delegated"]),
            "invented": bool(groups["invented"]),
            "invented_new_paths": bool(groups["invented"]) and not invented_elsewhere,
            "trusted_site": bool(groups["trusted_site"]),
            "instructed_paths_found": bool(groups["instructed"]) and not instructed_unfound,
            "derived": bool(groups["derived"]),
            "path_outside": bool(outside_paths),
            "outside_paths": "; ".join(outside_paths),
            "text_only": bool(groups["text"]),
            "unrequested": bool(groups["unrequested"]),
            "recipients_bound": recipients_bound,
            "recipient_excluded": bool(excluded),
            "excluded_values": "; ".join(excluded),
            "path_excluded": bool(excluded_paths),
            "excluded_path_values": "; ".join(excluded_paths),
            "path_named": bool(named_paths),
            "named_path_values": "; ".join(named_paths),
            "path_lifted": bool(lifted_paths),
            "lifted_path_values": "; ".join(lifted_paths),
            "destination_lookalike": bool(lookalikes),
            "lookalike_values": "; ".join(lookalikes),
            "payee_mismatch": bool(mixed),
            "payee_mismatch_values": "; ".join(mixed),
            "address_suspect": bool(addresses),
            "address_values": "; ".join(addresses),
            "leaves_home": contract.side_effect in _LEAVES_HOME,
            "content_instruction": content_instruction,
            "content_fields": ", ".join(content_fields) or "content",
            "content_address_instructed": bool(content_addresses),
            "content_address_values": "; ".join(content_addresses),
            "content_copied_words": copied,
            "command": commands[0] if commands else "",
            "content_secret": secret,
            "same_tool_executed": self._executed.get(contract.tool, 0),
            "request_plural": req.plural,
            "constraint_violated": bool(violations),
            "violations": "; ".join(violations),
            "required_missing": bool(missing),
            "missing_fields": ", ".join(missing),
            "command_allowlisted": bool(commands) and all(self._allowlisted(c) for c in commands),
            "command_trusted": bool(commands) and all(harmless(c, self.gate.shell_trusted) for c in commands),
            "recipients": "; ".join(groups["instructed"] + groups["text"] + groups["unrequested"] + groups["derived"])
            or "them",
        }
        for g in groups:
            facts[f"{g}_values"] = "; ".join(groups[g])
            facts[f"{g}_sources"] = ", ".join(sorted(sources[g]))
        return facts, provenance

    def _excluded_paths(self, contract: Contract, args: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
        """The paths of this call the request ruled out ("do not edit src/app/config.py"), each
        as ``arg 'value': the request says not to change <what the user named>`` (and, in a
        conversation of several prompts, which prompt said so): any path a change names (a file
        tool's path, a command's targets: ``rm``, ``mv``, ``sed -i``, ``>``), or one a read names
        when the user said not even to read it. Reading a file the user said not to edit stays
        allowed. Kinds alone cannot say this: "Fix tests/test_api.py. Do not edit
        src/app/config.py." authorises ``update``, and so did the edit of config.py.

        A command is read with ``_paths.read_command``: a folder it changes whole (``rm -rf
        src``, ``git checkout .``, ``find src -name config.py -delete``, ``find ... | xargs rm``)
        counts as changing every protected path under it.

        Second, the paths of this call whose protection a later prompt lifted ("now you may
        edit config.py"), saying which prompts: a decision on them names its grounds. Third,
        the protected paths a command names for a program whose writes cannot be traced
        (``python fix.py src/app/config.py``, ``python -c "open('src/app/config.py', 'w')"``):
        such a call is never allowed silently, whatever the allow-list says."""
        req = self.request
        if not (req.excluded_paths or req.excluded_reads or req.lifted_paths):
            return [], [], []
        changes = contract.side_effect in _CHANGES_FILES or bool(contract.kinds & CHANGE_KINDS)
        protected = req.excluded_paths if changes else req.excluded_reads
        by = dict(req.excluded_by)
        lifted = {p: (a, b) for p, a, b in req.lifted_paths}
        found: list[str] = []
        freed: list[str] = []
        opaque: list[str] = []

        def said_in(named: str) -> str:
            return f" (prompt {by[named]} of {req.prompts})" if req.prompts > 1 and named in by else ""

        # Where the user's paths are named from, when a hook said: case folds only where its
        # file system does. A command's paths are named from there too (``there``).
        root = self.project_root or self.workdir
        offset = self._offset()

        def there(path: str) -> str:
            """A command's relative ``path`` (from :attr:`workdir`) named from the project's top,
            as the user names paths: ``config.py`` run in ``src/app`` is ``src/app/config.py``.
            Absolute paths, and every path when the shell is not inside the project, stay as
            they are (an absolute path is matched by its end)."""
            if offset is None or not path or os.path.isabs(path) or path.startswith(("~", "$", "\0")):
                return path
            return posixpath.normpath(posixpath.join(offset, path))

        def excepted(value: str, folder: str) -> bool:
            """Whether a later prompt allowed ``value`` (or a folder holding it) inside the
            protected ``folder``: "now you may edit src/lib/a.py" after "don't touch src/lib/"."""
            was = matching_exclusion(value, lifted, root)
            return was is not None and inside_folder(was, folder)

        def hit(arg: str, value: str, among: frozenset[str], change: bool) -> None:
            named = matching_exclusion(value, among, root)
            # free only when every protection the path falls under holds the lifted path
            under = [e for e in among if matching_exclusion(value, [e], root) is not None] if change else []
            if named is not None and under and all(excepted(value, e) for e in under):
                named = None
            if named is not None:
                verb = "read or change" if named in req.excluded_reads else "change"
                found.append(f"{arg} {value!r}: the request says not to {verb} {named}{said_in(named)}")
            elif change and (was := matching_exclusion(value, lifted, root)) is not None:
                a, b = lifted[was]
                freed.append(f"{arg} {value!r}: prompt {b} allowed changing {was} again (prompt {a} had said not to)")

        for arg, value in args.items():
            role = contract.role_of(arg)
            if role is Role.PATH:
                for _, scalar in _scalars({arg: value}):
                    if isinstance(scalar, str):
                        hit(arg, scalar, protected, changes)
            elif role is Role.COMMAND and isinstance(value, str):
                reading = read_command(value, self._folder())
                for word in command_paths(value) if reading is None else reading.targets:
                    hit(arg, there(word), req.excluded_paths, True)
                for word in command_paths(value) if req.excluded_reads else []:
                    hit(arg, there(word), req.excluded_reads, False)
                if reading is None:
                    continue
                for folder, pattern in [(there(f), p) for f, p in reading.sweeps]:  # rm -rf src, find src -delete
                    for named in sorted(req.excluded_paths):
                        if sweep_covers(folder, pattern, named, root) and not excepted(folder, named):
                            what = f"{folder}/{pattern}" if pattern else folder
                            found.append(
                                f"{arg} changes {what}: the request says not to change {named}{said_in(named)}"
                            )
                for named in named_in(reading.opaque, req.excluded_paths, root):
                    opaque.append(
                        f"{arg} {value!r} runs a program that may change {named}, which the request says not to "
                        f"change{said_in(named)}; the gate cannot tell what it writes, so it runs only with your approval"
                    )
                for named in sorted(req.excluded_paths):  # cd $DIR && rm config.py, rm $F, git apply x.patch
                    why = next((w for g, w in reading.unsure if matching_exclusion(there(g), [named], root)), None)
                    if why is not None:
                        opaque.append(
                            f"{arg} {value!r} may change {named}, which the request says not to change{said_in(named)}: "
                            f"{why}; the gate cannot tell, so it runs only with your approval"
                        )
        if found:
            opaque = []
        return list(dict.fromkeys(found)), list(dict.fromkeys(freed)), list(dict.fromkeys(opaque))

    def _amount_made_up(self, value: Any) -> bool:
        """Whether a payment's amount is one nothing gave: seen nowhere in the session (not the
        request, configuration, a trusted store or any tool output, however written), and not
        the model's arithmetic either. A sum is worked out only when the request asks for one
        ("the difference", "split", "plus a fee") or, stating no amount itself, points at data
        that was read ("pay the bill in the file", "adjust the rent accordingly"). "Pay Alice
        100 euros" states the amount, so a call paying 1,000,000 is refused as made up.
        Arithmetic needs numbers to work on: while no data the request points at was read, the
        sum must come out of the numbers the user gave ("50 for each of the 3 lessons" lets
        150 through, not 99,999), and a request that asks for a sum but states none ("pay Bob
        the total I owe him") leaves nothing to compute from, so whatever is paid is made up.
        Once data the request points at was read, the sum must come out of its numbers and the
        user's, at most three of them ("the difference for the March payment" after a 10%
        rise pays 5 on a payment of 50, not 4,321.77); a request's numbers count as percents
        too ("19.5%" of 1,000 is 195)."""
        amount = amount_of(value)
        if amount is None or self.ledger.amount_seen(amount):
            return amount is None and isinstance(value, str) and bool(value.strip())
        if self.ledger.read_requested_data() and (self._request_computes or not self._request_amounts):
            given = {float(a) for a in self._request_amounts | self.ledger.declared_amounts()}
            pool = given | {g / 100 for g in given} | {float(a) for a in self.ledger.requested_amounts()}
            if len(pool) > MAX_DATA_OPERANDS:
                return False  # too many numbers to combine in one check: left to the data rules
            return not computable_from(float(amount), sorted(pool))
        if self._request_computes:
            # Nothing was read: the only numbers to work from are those the user gave.
            operands = sorted({float(a) for a in self._request_amounts | self.ledger.declared_amounts()})
            if len(operands) > MAX_OPERANDS:
                return False
            return not computable(float(amount), operands)
        return bool(self._request_amounts) or not self.ledger.read_requested_data()

    def _amount_unrequested(self, value: Any) -> bool:
        """Whether a payment's amount was seen only in reads the request did not ask for: not
        stated by the request, configuration or a trusted store, nor by any read it asked for."""
        amount = amount_of(value)
        return (
            amount is not None
            and self.ledger.amount_seen(amount)
            and not self.ledger.amount_seen(amount, requested_only=True)
        )

    def _traced_values(self, contract: Contract, args: Mapping[str, Any]) -> list[tuple[str, str, Any, Role]]:
        """Every value whose source must be traced: (where, key, value, role).

        The contract's entity arguments are traced whole. A destination does not escape by
        hiding: an argument the contract does not declare is read by its name like any other
        (``bcc``, ``callback_url``), and inside any other structured argument a value is traced
        when its key names a destination or it is itself an address or a link
        (``headers.Bcc``, ``meta.link``, ``extra[0].bcc``). Free text (a body, a command, a
        query) is left to the content checks, which read the links written inside it."""
        names = self.gate.bundle.contracts
        out: list[tuple[str, str, Any, Role]] = []
        for arg, value in args.items():
            role = contract.role_of(arg) if arg in contract.fields else names.role_of_name(arg)
            if role in ENTITY_ROLES:
                out.extend((arg, key, scalar, role) for key, scalar in _scalars({arg: value}))
                continue
            if role in (Role.TIME, Role.AMOUNT) or (
                role in (Role.CONTENT, Role.COMMAND, Role.QUERY) and isinstance(value, str)
            ):
                continue
            for where, key, scalar in _leaves(arg, value):
                if _SENDER_KEY.fullmatch(snake_case(key)):
                    continue  # who sends ("from": the user's own address) is no destination
                found = names.role_of_name(key) if where != arg else Role.OTHER
                if found not in _DESTINATIONS:
                    shape = destination_shape(scalar)
                    found = Role(shape) if shape else Role.OTHER
                if found in _DESTINATIONS:
                    out.append((where, key, scalar, found))
                elif isinstance(scalar, str) and len(scalar) <= _SHORT_VALUE:
                    # "Eve <eve@evil.com>", "a@x.com;b@y.com", "mailto:...": the addresses inside
                    out.extend(
                        (where, key, address, Role.RECIPIENT if EMAIL.fullmatch(address) else Role.URL)
                        for address in addresses_in(scalar)
                    )
        return out

    def _id_objects(self, key: str) -> frozenset[str]:
        """The objects an id argument names (``email_id`` -> email, ``file_id`` -> file)."""
        vocab = self.gate.bundle.vocabulary
        return frozenset(vocab.objects_in(stem_all(words(key))))

    def _allowlisted(self, command: str) -> bool:
        return allowlisted(command, self.gate.shell_allowlist + self.gate.shell_trusted)


def _inside_working_folder(path: str) -> bool:
    """A relative path that cannot climb out: a name a tool would create in its working folder.

    Creating a file means naming one nobody has named yet, so a new path is "invented" by
    nature; inside the working folder that is the agent's job, anywhere else it is a guess
    the gate refuses (an absolute path, a home-relative one, or one with a ``..`` step)."""
    text = path.strip().replace("\\", "/")
    if not text or text.startswith(("/", "~")) or re.match(r"[A-Za-z]:", text) or "://" in text:
        return False
    return ".." not in text.split("/")


def _as_order(sources: set[str], designated: set[str], delegated: bool) -> str:
    """The class of a value only an order (here: an aside pointing at it) in ``sources`` gave,
    as :func:`_classify` reads one: the document the user told the agent to follow may give
    it (``delegated``, asked about), any other source may not (``instructed``)."""
    return "delegated" if delegated and sources <= designated else "instructed"


def _classify(sightings: list[Sighting], delegated: bool) -> tuple[str, set[str]]:
    """The provenance class of one value: the most trustworthy place it was seen, except that
    a value appearing inside an instruction in tool output is suspect unless the user gave it."""
    trusted = {s.source for s in sightings if s.origin in TRUSTED_ORIGINS}
    if trusted:
        return "bound", trusted
    designated = {s.source for s in sightings if s.origin is Origin.STRUCTURED and s.designated}
    if designated:  # a field of a read the user pointed at outranks any instruction elsewhere
        return "derived", designated
    instructed = {s.source for s in sightings if s.origin is Origin.INSTRUCTION and not (delegated and s.designated)}
    if instructed:
        return "instructed", instructed
    followed = {s.source for s in sightings if s.origin is Origin.INSTRUCTION}
    if followed:  # an instruction in the very document the user told the agent to follow
        return "delegated", followed
    if not sightings:
        return "invented", set()
    derived = {s.source for s in sightings if s.origin is Origin.STRUCTURED and s.requested}
    if derived:
        return "derived", derived
    text = {s.source for s in sightings if s.origin is Origin.TEXT and s.requested}
    if text:
        return "text", text
    return "unrequested", {s.source for s in sightings}


def _leaves(where: str, obj: Any, key: str | None = None) -> list[tuple[str, str, Any]]:
    """(path, nearest key, value) for every scalar in ``obj``: ``headers.Bcc``, ``extra[0].bcc``."""
    key = where if key is None else key
    if isinstance(obj, Mapping):
        return [item for k, v in obj.items() for item in _leaves(f"{where}.{k}", v, str(k))]
    if isinstance(obj, list | tuple):
        return [item for i, v in enumerate(obj) for item in _leaves(f"{where}[{i}]", v, key)]
    return [(where, key, obj)]


def _scalars(obj: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(obj, Mapping):
        return [item for k, v in obj.items() for item in _scalars(v, str(k))]
    if isinstance(obj, list | tuple):
        return [item for v in obj for item in _scalars(v, key)]
    return [(key, obj)]


def _ruled_out(value: Any, role: Role, req: ResolvedRequest) -> bool:
    """Whether a destination is one the request said to leave out: the same address, link or
    IBAN, or (for a person) one of the names it was given by (``bob.smith@x.com``, ``Bob Smith``
    for "not Bob"). A link is never matched by a name: "don't share it outside Acme" says
    nothing about acme.example."""
    if not isinstance(value, str):
        return False
    if atoms_of(value) & req.excluded_values or normalise(value) in req.excluded_values:
        return True
    if role is not Role.RECIPIENT or not req.excluded_names:
        return False
    people = re.sub(r"@[\w.-]+", "", value)  # names, and the local parts of addresses, not domains
    return bool(set(re.findall(r"[a-z]+", people.lower())) & req.excluded_names)
