"""What a requirement file and ``domains.yaml`` may contain, validated strictly.

Unknown keys and bad enum values are errors (the reference checked only the YAML syntax);
the loader turns a validation error into one naming the file, line and field.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ID_PATTERN",
    "Domain",
    "DomainsFile",
    "Frontmatter",
    "Provenance",
    "Requirement",
    "Scope",
    "new_requirement_id",
]

ID_PATTERN = re.compile(r"^req-[0-9a-f]{4,32}$")
_DOMAIN_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

#: ``proposed``: written by a scan (or an ``[llm]`` proposer) from docs, commits, transcripts
#: or decisions, and never injected until a person accepts it (RFC-0013 section 5: what a
#: machine extracted is inferred and waits for review; it is not treated as authoritative).
Status = Literal["active", "proposed", "disabled", "superseded"]
Level = Literal["project", "domain"]
Confidence = Literal["high", "medium", "low"]
ProvenanceKind = Literal["doc", "transcript", "prompt", "commit", "user", "import", "decision"]


def new_requirement_id() -> str:
    """``req-`` plus 12 hex digits (48 random bits; the reference had 16)."""
    return f"req-{secrets.token_hex(6)}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Scope(_Strict):
    level: Level = "project"
    domains: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list, description="Globs; `*` may span folders, `**` any depth.")
    languages: list[str] = Field(default_factory=list, description="e.g. [go, python]; matched by file extension.")

    @field_validator("domains")
    @classmethod
    def _domain_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _DOMAIN_NAME.match(name):
                raise ValueError(f"domain {name!r} must be lower-case letters, digits or ._-")
        return value

    @field_validator("languages")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        return [v.strip().lower() for v in value if v.strip()]


class Provenance(_Strict):
    kind: ProvenanceKind = "user"
    ref: str = ""
    extracted_at: datetime | None = None
    extracted_by: str = ""


class Frontmatter(_Strict):
    id: str
    status: Status = "active"
    superseded_by: str = ""
    #: On a ``proposed`` rule: the active rule it would replace. Accepting it supersedes that
    #: rule; until then the rule in force stays in force.
    replaces: str = ""
    scope: Scope = Field(default_factory=Scope)
    hints: list[str] = Field(default_factory=list, description="Retrieval-only phrasings; never injected.")
    confidence: Confidence = "medium"
    user_edited: bool = False
    provenance: Provenance = Field(default_factory=Provenance)
    evidence: list[str] = Field(default_factory=list, description="Further sources that restate it.")
    created: datetime
    updated: datetime

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not ID_PATTERN.match(value):
            raise ValueError(f"id {value!r} must be req- followed by 4-32 lower-case hex digits")
        return value

    @field_validator("superseded_by", "replaces")
    @classmethod
    def _sup(cls, value: str) -> str:
        if value and not ID_PATTERN.match(value):
            raise ValueError(f"{value!r} is not a requirement id")
        return value


@dataclass(frozen=True)
class Requirement:
    """A loaded requirement: its frontmatter, its body split into statement and rationale."""

    meta: Frontmatter
    statement: str
    rationale: str
    path: Path
    content_hash: str
    order: int = 0  # position in file order (sorted by created, then id)
    extra: dict[str, object] = field(default_factory=dict, compare=False)

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def status(self) -> str:
        return self.meta.status

    @property
    def scope(self) -> Scope:
        return self.meta.scope

    @property
    def body(self) -> str:
        return f"{self.statement}\n\n**Why:** {self.rationale}" if self.rationale else self.statement

    def to_json(self) -> dict[str, object]:
        data = self.meta.model_dump(mode="json")
        data["statement"] = self.statement
        data["rationale"] = self.rationale
        data["file"] = self.path.name
        data["content_hash"] = self.content_hash
        return data


class Domain(_Strict):
    name: str
    description: str = ""
    paths: list[str] = Field(default_factory=list)
    user_edited: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _DOMAIN_NAME.match(value):
            raise ValueError(f"domain {value!r} must be lower-case letters, digits or ._-")
        return value


class DomainsFile(_Strict):
    version: Literal[1] = 1
    domains: list[Domain] = Field(default_factory=list)
