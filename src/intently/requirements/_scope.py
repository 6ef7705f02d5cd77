"""Deterministic scope: which files a task touches, and which globs, languages and domains they hit.

Globs follow gitignore habits: ``**`` spans any number of folders, ``*`` stays inside one,
a pattern without ``/`` matches a file name at any depth, and a plain folder covers
everything below it. Languages come from file extensions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import PurePosixPath

__all__ = ["LANGUAGES", "glob_depth", "glob_matches", "language_of", "mentioned_paths", "overlaps"]

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".go": "go",
    ".rb": "ruby",
    ".rbi": "ruby",
    ".rake": "ruby",
    ".php": "php",
    ".ex": "elixir",
    ".exs": "elixir",
    ".heex": "elixir",
    ".eex": "elixir",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".swift": "swift",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".md": "markdown",
    ".rst": "rst",
    ".sql": "sql",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".css": "css",
    ".scss": "css",
    ".html": "html",
    ".vue": "vue",
    ".svelte": "svelte",
}
_ALIASES = {"golang": "go", "py": "python", "js": "javascript", "ts": "typescript", "shell": "bash", "sh": "bash"}


def language_of(path: str) -> str | None:
    return LANGUAGES.get(PurePosixPath(path).suffix.lower())


def canonical_language(name: str) -> str:
    low = name.strip().lower()
    return _ALIASES.get(low, low)


@lru_cache(maxsize=4096)
def _compile(glob: str) -> re.Pattern[str]:
    pattern = glob.strip().lstrip("./") if glob.startswith("./") else glob.strip().lstrip("/")
    if pattern.endswith("/"):
        pattern += "**"
    anchored = "/" in pattern.rstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            out.append("(?:" + "|".join(re.escape(p) for p in pattern[i + 1 : end].split(",")) + ")")
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    # A pattern naming a folder also covers what is inside it.
    return re.compile(f"^{prefix}{body}(?:/.*)?$")


def glob_matches(glob: str, path: str) -> bool:
    clean = path.strip().lstrip("./") if path.startswith("./") else path.strip().lstrip("/")
    return bool(glob.strip()) and _compile(glob).match(clean) is not None


def _literal_prefix(glob: str) -> str:
    cut = re.split(r"[*?{\[]", glob, maxsplit=1)[0]
    return cut.rsplit("/", 1)[0] if "/" in cut else ""


def overlaps(glob: str, path: str) -> bool:
    """``path`` (a file or folder the task names) meets ``glob``: a match, or a folder that
    contains the glob's literal prefix (``pkg/gui`` overlaps ``pkg/gui/**/*.go``)."""
    if glob_matches(glob, path):
        return True
    folder = path.strip().strip("/")
    prefix = _literal_prefix(glob.strip().lstrip("/"))
    return bool(folder) and bool(prefix) and (prefix == folder or prefix.startswith(folder + "/"))


def glob_depth(glob: str) -> int:
    """How many literal folders the glob pins down: 0 for ``**/*.go``, 3 for ``pkg/gui/x/**``."""
    prefix = _literal_prefix(glob.strip().lstrip("/"))
    literal = re.split(r"[*?{\[]", glob, maxsplit=1)[0]
    depth = len([p for p in prefix.split("/") if p]) if prefix else 0
    if literal == glob and "." in PurePosixPath(glob).name:
        depth += 1  # a single named file is as specific as it gets
    return depth


_MENTION = re.compile(
    r"(?<![\w/.@:-])((?:[\w.-]+/)+[\w.*-]+|[\w-]+\.(?:"
    + "|".join(sorted({s.lstrip(".") for s in LANGUAGES}, key=len, reverse=True))
    + r"))(?![\w/])"
)


def mentioned_paths(text: str) -> list[str]:
    """Paths a task's text names (``pkg/gui/foo.go``, ``CHANGELOG.md``), skipping URLs."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        token = match.group(1).strip(".")
        if not token or "//" in token or token.startswith(("http", "www.")):
            continue
        if "/" not in token and "." not in token:
            continue
        if token not in found:
            found.append(token)
    return found


def matching_globs(globs: Sequence[str], files: Iterable[str]) -> list[tuple[str, str]]:
    """Each ``(glob, file)`` pair where a task file meets one of the globs."""
    hits: list[tuple[str, str]] = []
    for glob in globs:
        for f in files:
            if overlaps(glob, f):
                hits.append((glob, f))
                break
    return hits
