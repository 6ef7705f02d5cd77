"""The deterministic extractor: durable, prescriptive statements out of Markdown and text.

It keeps list items and sentences that tell someone what to do or not do ("Never edit
generated files", "Run `just lint` before committing", "PRs must include benchmarks") and
drops headings, code, questions, links and descriptions. Each candidate remembers the
heading it sits under (which becomes its domain) and the text it came from. No model is
involved: same input, same candidates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Candidate", "extract_file", "extract_text", "slug"]

_MODAL = re.compile(
    r"\b(must|mustn't|should|shouldn't|never|always|do not|don't|does not need|is required|are required|"
    r"required to|need to|needs to|make sure|ensure|avoid|prefer|only|not allowed|not accepted|please|"
    r"instead of|rather than|at most|at least|forbidden|mandatory)\b",
    re.IGNORECASE,
)
_IMPERATIVE = frozenset(
    [
        "add",
        "adhere",
        "align",
        "answer",
        "apply",
        "ask",
        "avoid",
        "be",
        "bump",
        "call",
        "check",
        "choose",
        "chain",
        "clean",
        "combine",
        "commit",
        "compose",
        "confirm",
        "consider",
        "create",
        "declare",
        "default",
        "define",
        "delete",
        "describe",
        "disclose",
        "discuss",
        "document",
        "don't",
        "do",
        "edit",
        "end",
        "ensure",
        "explain",
        "favor",
        "favour",
        "file",
        "fill",
        "fix",
        "follow",
        "format",
        "generate",
        "give",
        "handle",
        "ignore",
        "implement",
        "include",
        "indent",
        "inline",
        "install",
        "keep",
        "leave",
        "limit",
        "link",
        "lint",
        "list",
        "make",
        "mark",
        "match",
        "mention",
        "merge",
        "move",
        "name",
        "never",
        "note",
        "open",
        "pad",
        "place",
        "point",
        "prefer",
        "prefix",
        "put",
        "raise",
        "read",
        "rebase",
        "redact",
        "refer",
        "refine",
        "regenerate",
        "remember",
        "remove",
        "rename",
        "reply",
        "report",
        "request",
        "require",
        "respect",
        "restructure",
        "return",
        "reuse",
        "review",
        "run",
        "search",
        "separate",
        "set",
        "ship",
        "sign",
        "split",
        "squash",
        "start",
        "state",
        "stay",
        "stick",
        "structure",
        "submit",
        "surface",
        "target",
        "test",
        "throw",
        "treat",
        "try",
        "update",
        "upgrade",
        "use",
        "verify",
        "wait",
        "work",
        "wrap",
        "write",
    ]
)
_STRONG = re.compile(
    r"\b(must|mustn't|never|always|do not|don't|from now on|going forward|is required|are required|"
    r"not allowed|forbidden|mandatory|we decided|decision:)\b",
    re.IGNORECASE,
)
_SKIP_LINE = re.compile(r"^\s*(\||<!--|!\[|\[!|>\s*$|[-=*_]{3,}\s*$)")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*_\"'(\[])")
_REASON = re.compile(r"\s*(?:[,;(—–-]\s*)?\b(because|since|as otherwise|so that|otherwise)\b\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """A statement a scan proposes, before reconciliation."""

    statement: str
    rationale: str
    ref: str  # path#heading
    heading: str
    source_text: str
    top: bool = False  # under the document's title (or no heading): applies project-wide
    hints: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:40].strip("-") or "general"


def _clean(text: str) -> str:
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)  # links keep their words
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])[*_](?!\s)(.+?)(?<!\s)[*_](?![\w*])", r"\1", text)
    return " ".join(text.split()).strip()


def _is_prescriptive(text: str) -> bool:
    words = text.split()
    if len(words) < 3 or len(words) > 70 or text.endswith("?") or text.endswith(":"):
        return False
    first = re.sub(r"[^a-z']", "", words[0].lower())
    if first in _IMPERATIVE:
        return True
    return bool(_MODAL.search(text))


#: Words of section headings that say what kind of text follows, not which part of the project it
#: is about: a section made only of them ("## Rules", "## Code style", "## General guidelines",
#: an ADR's "## Decision" or "## Consequences") holds project-wide rules.
_GENERIC_HEADING_WORDS = frozenset(
    [
        "rules",
        "rule",
        "guidelines",
        "guideline",
        "conventions",
        "convention",
        "code",
        "coding",
        "style",
        "styles",
        "standards",
        "standard",
        "general",
        "important",
        "key",
        "core",
        "principles",
        "principle",
        "practices",
        "practice",
        "best",
        "instructions",
        "instruction",
        "requirements",
        "requirement",
        "notes",
        "note",
        "overview",
        "policy",
        "policies",
        "dos",
        "don'ts",
        "do",
        "don't",
        "must",
        "always",
        "never",
        "agents",
        "agent",
        "ai",
        "assistant",
        "assistants",
        "llm",
        "workflow",
        "workflows",
        "guide",
        "guidance",
        "expectations",
        "basics",
        "essentials",
        "project",
        "repository",
        "repo",
        "and",
        "for",
        "the",
        "of",
        "to",
        "a",
        "our",
        "your",
        "when",
        "working",
        "with",
        "in",
        "on",
        "this",
        "these",
        "things",
        # The sections of an architecture decision record (Nygard, MADR, Y-statements): they
        # say which part of the record follows, and the decision holds for the whole project.
        "adr",
        "decision",
        "decisions",
        "context",
        "consequence",
        "consequences",
        "status",
        "outcome",
        "considered",
        "options",
        "option",
        "alternatives",
        "alternative",
        "drivers",
        "driver",
        "rationale",
        "motivation",
        "background",
        "problem",
        "statement",
        "summary",
        "details",
        "discussion",
        "proposal",
        "proposed",
        "solution",
        "pros",
        "cons",
        "positive",
        "negative",
        "neutral",
        "implications",
        "compliance",
        "references",
        "links",
        "related",
        "notes",
    ]
)


def _generic_heading(heading: str) -> bool:
    words = re.findall(r"[a-z']+", heading.lower())
    return bool(words) and all(w in _GENERIC_HEADING_WORDS for w in words)


def _units(text: str) -> list[tuple[str, bool, str]]:
    """``(heading, is the title, unit)`` for each list item and paragraph outside code fences."""
    units: list[tuple[str, bool, str]] = []
    headings: list[tuple[int, str]] = []
    current: list[str] = []
    fence = False

    def flush() -> None:
        if current:
            heading = headings[-1][1] if headings else ""
            sections = headings[1:] if headings and headings[0][0] == 1 else headings
            # Under the title, or only under headings that name no area of the project ("Rules",
            # "Code style", "Guidelines"): the rule applies project-wide, not to a made-up domain.
            top = all(_generic_heading(h) for _, h in sections)
            units.append((heading, top, " ".join(current)))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            fence = not fence
            continue
        if fence:
            continue
        h = _HEADING.match(stripped)
        if h:
            flush()
            level = len(h.group(1))
            headings = [x for x in headings if x[0] < level] + [(level, _clean(h.group(2)))]
            continue
        if not stripped or _SKIP_LINE.match(line):
            flush()
            continue
        b = _BULLET.match(line)
        if b:
            flush()
            current.append(b.group(2).strip())
            continue
        if line.startswith("    ") and not current:
            continue  # indented code
        current.append(stripped.lstrip("> "))
    flush()
    return units


def extract_text(ref: str, text: str, *, strict: bool = False) -> list[Candidate]:
    """Candidates from one Markdown/plain-text source, in document order, without duplicates.

    ``strict`` (commit messages, transcripts) needs an explicit modal ("must", "never",
    "always", ...): an imperative alone is how commit subjects are written, not a rule.
    """
    out: list[Candidate] = []
    seen: set[str] = set()
    for heading, top, unit in _units(text):
        cleaned = _clean(unit)
        guarded = re.sub(r"\b(e\.g|i\.e|etc|vs|cf)\.", lambda m: m.group(0).replace(".", "\x00"), cleaned)
        sentences = [s.strip().replace("\x00", ".") for s in _SENTENCE.split(guarded) if s.strip()]
        i = 0
        while i < len(sentences):
            sentence = sentences[i]
            i += 1
            if not _is_prescriptive(sentence) or (strict and not _STRONG.search(sentence)):
                continue
            rationale = ""
            parts = _REASON.split(sentence, maxsplit=1)
            statement = sentence
            if len(parts) == 3 and len(parts[0].split()) >= 4:
                statement = parts[0].rstrip(" ,;(") + "."
                rationale = (parts[1] + " " + parts[2]).strip().rstrip(")")
                rationale = rationale[0].upper() + rationale[1:]
            elif (
                i < len(sentences)
                and re.match(r"^(This|That|It|Otherwise)\b", sentences[i])
                and not _is_prescriptive(sentences[i])
            ):
                rationale = sentences[i]
                i += 1
            key = statement.lower()
            if key in seen:
                continue
            seen.add(key)
            anchor = f"{ref}#{heading}" if heading else ref
            out.append(Candidate(statement, rationale, anchor, heading, sentence, top=top))
    return out


_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def extract_file(ref: str, text: str, *, strict: bool = False) -> list[Candidate]:
    """Like :func:`extract_text`, skipping a leading YAML frontmatter block."""
    m = _FRONTMATTER.match(text)
    return extract_text(ref, text[m.end() :] if m else text, strict=strict)
