"""Requirements engine: durable project rules as reviewable Markdown files.

Files under ``.intently/requirements/`` are the source of truth; :class:`Requirements`
loads them (logging outside edits), edits them in place, selects the ones a task should
see under a token budget with an explanation for each, and scans a project's guidance,
docs and history for new ones.
"""

from __future__ import annotations

from ._conflicts import Conflict, RequirementConflictWarning
from ._engine import Requirements
from ._files import FileError
from ._load import LoadResult, RequirementFileWarning
from ._model import Domain, Frontmatter, Provenance, Requirement, Scope
from ._render import place
from ._select import Decision, Omission, Policy, Selection, requirement_text

__all__ = [
    "Conflict",
    "Decision",
    "Domain",
    "FileError",
    "Frontmatter",
    "LoadResult",
    "Omission",
    "Policy",
    "Provenance",
    "Requirement",
    "RequirementConflictWarning",
    "RequirementFileWarning",
    "Requirements",
    "Scope",
    "Selection",
    "place",
    "requirement_text",
]
