"""The gate: execute verified intent, not language.

Typed action contracts (data, or inferred from MCP-style tool definitions), provenance of
every argument value, deterministic intent resolution from vocabulary data, ordered policy
rules with five decisions, a signed bundle, single-use approvals bound to the exact action,
and (bound to a home) every decision as an operation in the log. See ``docs/gate.md``.

Importing this package registers the ``gate`` tables and the appliers of its operations.
"""

from __future__ import annotations

from ._bundle import BUNDLE_FILES, Bundle, default_bundle, load_private_key, load_public_key, sign_bundle
from ._contracts import Contract, ContractSet, FieldSpec, Role, SideEffect, ToolDefinition
from ._decision import Decision, Level
from ._engine import TABLES, GateEngine, IncompleteTraceWarning, UnboundTraceWarning, verify_trace
from ._gate import Gate, Session, action_hash
from ._intent import Clause, Proposer, ResolvedRequest, resolve
from ._journal import Journal, MemoryJournal
from ._policy import PolicySet, Verdict
from ._prompts import opening_read
from ._proposer import OpenAICompatibleProposer
from ._provenance import Ledger, Origin, Sighting
from ._suggest import suggest
from ._vocabulary import Vocabulary

__all__ = [
    "BUNDLE_FILES",
    "TABLES",
    "Bundle",
    "Clause",
    "Contract",
    "ContractSet",
    "Decision",
    "FieldSpec",
    "Gate",
    "GateEngine",
    "IncompleteTraceWarning",
    "Journal",
    "Ledger",
    "Level",
    "MemoryJournal",
    "OpenAICompatibleProposer",
    "Origin",
    "PolicySet",
    "Proposer",
    "ResolvedRequest",
    "Role",
    "Session",
    "SideEffect",
    "Sighting",
    "ToolDefinition",
    "UnboundTraceWarning",
    "Verdict",
    "Vocabulary",
    "action_hash",
    "default_bundle",
    "load_private_key",
    "load_public_key",
    "opening_read",
    "resolve",
    "sign_bundle",
    "suggest",
    "verify_trace",
]
