"""Extraction: conversation turns to candidate intents for review (RFC-0013 section 5).

Language proposes, people decide: every candidate becomes an INFERRED intent waiting in the
review queue (``intently review``), or a decision record. The default extractor is
deterministic rules over clause structure with reviewed lexicons (``lexicon.toml``), plus a small
shipped linear model (``model.json``) that adds recall and is bound by the same hard cases; an
OpenAI-compatible LLM extractor is optional and its replies are validated as untrusted input.

The LLM extractor and the scorer are the eval's and a configured endpoint's: their modules
(pydantic models of a reply and of a labelled turn) load on the first use of one of their
names (module ``__getattr__``), so a hook's process that reads a prompt with the rules does
not build them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports
from ._answers import Answered, Reply
from ._base import ExtractionRejected, Extractor
from ._dates import DueDate, find_due
from ._engine import Extraction, ExtractionSettings, ObserveResult, Proposal, owner_actor
from ._lexicon import Lexicon, load_lexicon
from ._model import SentenceModel, load_model
from ._models import Candidate, CandidateType, Turn
from ._rules import AGENT_CHANNELS, DIALOGUE_CHANNELS, RuleExtractor

if TYPE_CHECKING:
    from ._llm import REPLY_SCHEMA, LLMExtractor
    from ._scoring import EVAL_TYPES, RFC4_TYPES, LabelledTurn, Score, load_labelled, score

_WHERE: dict[str, str] = {
    **dict.fromkeys(("REPLY_SCHEMA", "LLMExtractor"), "._llm"),
    **dict.fromkeys(("EVAL_TYPES", "RFC4_TYPES", "LabelledTurn", "Score", "load_labelled", "score"), "._scoring"),
}

__all__ = [
    "AGENT_CHANNELS",
    "DIALOGUE_CHANNELS",
    "EVAL_TYPES",
    "REPLY_SCHEMA",
    "RFC4_TYPES",
    "Answered",
    "Candidate",
    "CandidateType",
    "DueDate",
    "Extraction",
    "ExtractionRejected",
    "ExtractionSettings",
    "Extractor",
    "LLMExtractor",
    "LabelledTurn",
    "Lexicon",
    "ObserveResult",
    "Proposal",
    "Reply",
    "RuleExtractor",
    "Score",
    "SentenceModel",
    "Turn",
    "find_due",
    "load_labelled",
    "load_lexicon",
    "load_model",
    "owner_actor",
    "score",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals(), __all__)
