"""Request bodies. Unknown fields are refused (422 naming the field), never ignored."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..access import Permission

__all__ = [
    "ContextRequest",
    "GateApprove",
    "GateCheck",
    "GoalCancel",
    "GoalCreate",
    "GoalUpdate",
    "GrantRequest",
    "ObservedOutput",
    "RequirementPreview",
    "ReviewConfirm",
    "ToolDefinition",
    "TriggerCreate",
    "TriggerTest",
    "TurnObserve",
]


#: ``name`` (a user) or ``kind:name``; the library checks the same rule.
ACTOR_PATTERN = r"^(?:(?:user|agent|system|tool):)?[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$"
IntentType = Literal["GOAL", "COMMITMENT", "OPEN_QUESTION", "DECISION_IN_PROGRESS", "RISK", "FOLLOW_UP"]
Priority = Literal["LOW", "MEDIUM", "HIGH", "CRITICAL"]
GoalState = Literal["ACTIVE", "COMPLETED", "CANCELLED", "ON_HOLD", "EXPIRED", "SUPERSEDED"]
#: The requirements engine's ``Status`` (a test keeps them equal): a typo is a 422, not an empty list.
RequirementStatus = Literal["active", "proposed", "disabled", "superseded"]
Term = Annotated[str, Field(min_length=1, max_length=200, pattern=r"\w")]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContextRequest(_Body):
    query: str = Field(max_length=20_000, description="The task or prompt.")
    session: str | None = Field(default=None, max_length=200)
    channel: str | None = Field(default=None, max_length=200)
    conversation: str | None = Field(default=None, max_length=200)
    sender: str | None = Field(default=None, max_length=200)
    paths: list[str] = Field(default_factory=list, max_length=500)
    budget: int | None = Field(default=None, ge=50, le=200_000)
    fire: bool = Field(default=True, description="False previews standing intents without charging a fire.")


class GrantRequest(_Body):
    actor: str = Field(max_length=140, pattern=ACTOR_PATTERN, description="kind:name or name (a user).")
    permission: Permission


class GoalCreate(_Body):
    text: str = Field(min_length=1, max_length=10_000)
    type: IntentType | None = None
    priority: Priority | None = None
    owner: str | None = Field(default=None, max_length=140, pattern=ACTOR_PATTERN)
    due: str | None = Field(default=None, max_length=40)
    completion_criteria: str | None = Field(default=None, max_length=10_000, description="How we will know it is done.")


class GoalUpdate(_Body):
    text: str | None = Field(default=None, min_length=1, max_length=10_000)
    priority: Priority | None = None
    owner: str | None = Field(default=None, max_length=140, pattern=ACTOR_PATTERN)
    due: str | None = Field(default=None, max_length=40)
    type: IntentType | None = None
    context_note: str | None = Field(default=None, max_length=10_000)
    completion_criteria: str | None = Field(
        default=None,
        max_length=10_000,
        description="How we will know it is done (null removes it). A person's goal's criteria are theirs: 403 for an agent.",
    )
    expected_version: int | None = Field(
        default=None, ge=1, description="Version the edit is based on; a newer stored version answers 409."
    )


class GoalComplete(_Body):
    """Optional body of ``POST .../goals/{id}/complete``: why, the version the caller saw (409 if
    the goal changed since), and whether to keep a completion summary (default yes)."""

    reason: str | None = Field(default=None, max_length=2_000, description="Why (recorded in the log).")
    expected_version: int | None = Field(default=None, ge=1)
    summary: bool = Field(default=True, description="Keep a completion summary (RFC-0013 section 9).")
    evidence_ids: list[Annotated[str, Field(min_length=1, max_length=500)]] | None = Field(
        default=None,
        max_length=100,
        description="What shows the work is done; kept with an agent's completion claim on a person's goal.",
    )


class GoalClaim(_Body):
    """Optional body of ``POST .../goals/{id}/claim``: an agent says a person's goal is done."""

    note: str | None = Field(default=None, max_length=2_000, description="What was done (shown to the person).")
    evidence_ids: list[Annotated[str, Field(min_length=1, max_length=500)]] | None = Field(
        default=None, max_length=100, description="What shows the work is done."
    )
    expected_version: int | None = Field(default=None, ge=1)


class GoalCancel(_Body):
    reason: str | None = Field(default=None, max_length=2_000, description="Why (recorded in the log).")
    expected_version: int | None = Field(default=None, ge=1)


class ReviewConfirm(_Body):
    """Optional body of ``POST .../review/{id}/confirm``: the version the reviewer was shown, so a
    candidate another reviewer reworded meanwhile is not confirmed unseen (409 instead)."""

    expected_version: int | None = Field(default=None, ge=1)


class TurnObserve(_Body):
    """One conversational turn, as ``Intently.extraction.observe`` takes it."""

    text: str = Field(min_length=1, max_length=100_000, description="What was said, verbatim.")
    speaker: str | None = Field(
        default=None, max_length=200, description="Who said it; owner of first-person candidates."
    )
    time: str | None = Field(
        default=None, max_length=40, description="When it was said (RFC 3339); anchors 'by Friday'. Default: now."
    )
    channel: str = Field(default="api", max_length=200, description="Where: chat, minutes, a thread id.")
    message_id: str | None = Field(
        default=None, max_length=500, description="The source's own message id; it becomes the evidence id."
    )


class TriggerCreate(_Body):
    reminder: str = Field(min_length=1, max_length=500)
    when: list[Annotated[list[Term], Field(min_length=1, max_length=20)]] = Field(
        min_length=1, max_length=50, description="Entries (alternatives); each a list of terms that must all come up."
    )
    event: str | None = Field(default=None, max_length=1000)
    event_entries: bool = Field(
        default=True, description='Add the topics of an event like "When X or Y comes up" as entries.'
    )
    expires: str | None = Field(default=None, max_length=40)
    max_fires: int | None = Field(default=None, ge=1, le=10_000)
    cooldown: str | None = Field(default=None, max_length=40)
    # Without these an HTTP client could not narrow a reminder to one sender or channel (the
    # body refuses unknown keys, so "scope" was a 422), nor give it exclusions.
    scope: list[Annotated[str, Field(max_length=220)]] | None = Field(
        default=None, max_length=3, description="Where it may fire: `sender:ID`, `channel:ID`, `conversation:ID`."
    )
    exclude: list[Annotated[str, Field(min_length=1, max_length=120)]] | None = Field(
        default=None, max_length=50, description="Words or phrases that veto a fire when they come up."
    )
    negation_guard: bool | None = Field(default=None, description='False also fires on "no rollback needed".')


class TriggerTest(_Body):
    text: str = Field(max_length=20_000)
    channel: str | None = Field(default=None, max_length=200)
    conversation: str | None = Field(default=None, max_length=200)
    sender: str | None = Field(default=None, max_length=200)


class RequirementPreview(_Body):
    task: str = Field(max_length=20_000)
    paths: list[str] = Field(default_factory=list, max_length=500)
    budget: int | None = Field(default=None, ge=50, le=200_000)


class ObservedOutput(_Body):
    tool: str = Field(max_length=200)
    output: Any = None


class ToolDefinition(BaseModel):
    """An MCP-style tool definition; the gate infers a contract from it (annotations are hints only)."""

    name: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=10_000)
    inputSchema: dict[str, Any] = Field(default_factory=dict)
    annotations: dict[str, Any] = Field(default_factory=dict)


class GateCheck(_Body):
    user_request: str = Field(max_length=20_000, description="What the user asked for (authorises intents).")
    tool: str = Field(min_length=1, max_length=200)
    args: dict[str, Any] = Field(default_factory=dict)
    observed: list[ObservedOutput] = Field(default_factory=list, max_length=500)
    session_id: str | None = Field(
        default=None, max_length=200, description="Continue a session an earlier check opened (approvals bind to it)."
    )
    tools: list[ToolDefinition] | None = Field(
        default=None, max_length=500, description="MCP-style tool definitions (name, description, inputSchema)."
    )


class GateApprove(_Body):
    decision_id: str = Field(min_length=1, max_length=200)
