"""Deterministic source collection for a scan, and the scope each guidance format implies.

Guidance files (AGENTS.md at any depth, CLAUDE.md, ``.claude/rules``, Cursor ``.mdc`` and
``.cursorrules``, Copilot instructions), README and docs, ADRs, commit messages since the
cursor (size-capped), transcripts from ``[requirements] transcripts``, Claude Code
session transcripts handed over explicitly (the hooks' scan queue; see
:mod:`._transcripts`) and decisions the goals engine recorded. A source is yielded only
when its content hash (for a session transcript: its line cursor) differs from the scan
state's, so a quiet re-scan reads nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ._extract import Candidate
from ._transcripts import Transcript, read_plain_transcript, read_transcript, transcript_candidates

__all__ = [
    "GUIDANCE_KINDS",
    "SESSION_PREFIX",
    "Source",
    "collect",
    "commit_sources",
    "guidance_scope",
    "project_files",
    "rewritten_commits",
    "session_transcript",
]

MAX_FILE_BYTES = 256 * 1024
#: A plain-text conversation of the transcripts folder is mined up to this size (a session
#: log grows long; its rules are said anywhere in it).
MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024
MAX_COMMITS = 200
MAX_COMMIT_BYTES = 256 * 1024
# Generated output and vendored dependencies: a dependency's README or AGENTS.md states the
# rules of that dependency's project, not of this one.
_SKIP_DIRS = {
    ".git",
    ".intently",
    "node_modules",
    "bower_components",
    "vendor",
    "third_party",
    "third-party",
    "thirdparty",
    "site-packages",
    ".venv",
    "venv",
    "dist",
    "build",
    "__pycache__",
}

_CONTRIBUTOR_GUIDES = ("contributing", "conventions", "styleguide", "style-guide", "code_of_conduct")

GUIDANCE_KINDS = ("agents", "claude", "claude-rule", "cursor-rule", "cursorrules", "copilot", "copilot-instructions")


@dataclass
class Source:
    """One unit of material: a file, a commit message, a transcript or a decision."""

    kind: str  # doc | commit | transcript | decision
    ref: str
    text: str
    sha: str
    level: str = "project"
    paths: list[str] = field(default_factory=list)
    confidence: str = "medium"
    format: str = "doc"
    #: Set when the source's candidates were found by its own reader (session transcripts).
    candidates: list[Candidate] | None = None
    #: What could not be read inside the source (``file:line: ...``); the rest still counts.
    problems: list[str] = field(default_factory=list)
    #: What identifies the material across a history rewrite, when its ``ref`` does not: a
    #: commit's author, author date and message survive a rebase, its hash does not.
    identity: str = ""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def project_files(root: Path, problems: list[str] | None = None) -> list[str]:
    """Tracked and untracked-but-not-ignored files (git), else a walk; sorted, POSIX paths.

    The walk is only for a folder outside any git work tree. When ``root`` is in one and git
    fails (a corrupt index, "dubious ownership" of a checkout made by another user), a walk
    would read the ``.gitignore``d files (local notes, secrets, build output) as the
    project's rules: no file is listed then, and git's message goes to ``problems``.
    """
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        )
        # File names are bytes to git; os.fsdecode keeps a non-UTF-8 name openable.
        names = [os.fsdecode(n) for n in proc.stdout.split(b"\0") if n]
    except (OSError, subprocess.CalledProcessError) as exc:
        if _in_git_work_tree(root):
            if problems is not None:
                problems.append(f"{root}: git ls-files failed ({_git_error(exc)}); no project file was read")
            return []
        names = [
            p.relative_to(root).as_posix()
            for p in root.rglob("*")
            if p.is_file() and not (set(p.relative_to(root).parts) & _SKIP_DIRS)
        ]
    return sorted(n for n in names if not (set(PurePosixPath(n).parts[:-1]) & _SKIP_DIRS))


def _in_git_work_tree(root: Path) -> bool:
    """Whether ``root`` or a folder above it holds a ``.git`` (asked of the file system, not
    of git, which is what failed)."""
    return any((folder / ".git").exists() for folder in (root, *root.parents))


def _git_error(exc: OSError | subprocess.CalledProcessError) -> str:
    if isinstance(exc, subprocess.CalledProcessError):
        err = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else str(exc.stderr or "")
        first = next((line.strip() for line in err.splitlines() if line.strip()), "")
        return first or f"exit status {exc.returncode}"
    return exc.strerror or str(exc)


def _read_project_file(root: Path, rel: str, problems: list[str]) -> str | None:
    """The text of one project file, or ``None`` with the reason in ``problems``.

    Never read: a symlink whose target is outside the project (a link to ``~/notes.md`` or
    ``/etc/passwd`` would turn a file that is not the project's into committed rules) or in
    ``.git``/``.intently``, a link loop, a file over :data:`MAX_FILE_BYTES`. A file that is
    not UTF-8 keeps its readable lines; each line that is not is named ``file:line``. A
    UTF-8 byte-order mark (Windows editors) is dropped, or the frontmatter and first heading
    behind it would not be seen.
    """
    path = root / rel
    try:
        target = path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a symlink loop this way
        problems.append(f"{rel}: symlink loop; not read")
        return None
    except OSError as exc:
        if path.is_symlink():
            problems.append(f"{rel}: symlink to a missing file; not read")
        elif not path.exists() and not path.is_symlink():
            return None  # deleted in the work tree (still in the index): nothing to read
        else:
            problems.append(f"{rel}: cannot read ({exc.strerror or exc}); not read")
        return None
    base = root.resolve()
    if target != path.absolute() and (
        not target.is_relative_to(base) or {".git", ".intently"} & set(target.relative_to(base).parts)
    ):
        problems.append(f"{rel}: symlink to {target}, outside the project; not read")
        return None
    try:
        if not target.is_file():
            return None
        size = target.stat().st_size
        if size > MAX_FILE_BYTES:
            problems.append(f"{rel}: {size // 1024} KiB, over the {MAX_FILE_BYTES // 1024} KiB limit; not read")
            return None
        raw = target.read_bytes()
    except OSError as exc:
        problems.append(f"{rel}: cannot read ({exc.strerror or exc}); not read")
        return None
    return _decode(raw, rel, problems)


def _decode(raw: bytes, rel: str, problems: list[str]) -> str:
    """UTF-8 text of ``raw`` as ``Path.read_text`` gives it (``\r\n`` and ``\r`` read as
    ``\n``), without a byte-order mark; a line that is not UTF-8 is left out and named."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        kept: list[str] = []
        bad: list[int] = []
        for lineno, line in enumerate(raw.splitlines(keepends=True), 1):
            try:
                kept.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                bad.append(lineno)
        shown = ", ".join(str(n) for n in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        problems.append(f"{rel}:{bad[0]}: not UTF-8; line(s) {shown} skipped, the rest read")
        text = "".join(kept)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _guidance_kind(rel: str) -> str | None:
    p = PurePosixPath(rel)
    name = p.name
    if name == "AGENTS.md":
        return "agents"
    if name == "CLAUDE.md":
        return "claude"
    if p.parent.as_posix().endswith(".claude/rules") and name.endswith(".md"):
        return "claude-rule"
    if p.parent.as_posix().endswith(".cursor/rules") and name.endswith(".mdc"):
        return "cursor-rule"
    if name == ".cursorrules":
        return "cursorrules"
    if rel == ".github/copilot-instructions.md":
        return "copilot"
    if name.endswith(".instructions.md"):
        return "copilot-instructions"
    return None


def _doc_kind(rel: str) -> bool:
    p = PurePosixPath(rel)
    low = rel.lower()
    if p.suffix.lower() not in (".md", ".markdown", ".rst", ".txt"):
        return False
    if p.name.lower().startswith(("readme", "contributing", "conventions", "styleguide", "style-guide")):
        return True
    parts = [x.lower() for x in p.parts[:-1]]
    return (bool(parts) and parts[0] in ("docs", "doc")) or "adr" in parts or "adrs" in parts or "decisions" in low


_FM = re.compile(r"\A---\s*\n(.*?)\n---\s*\n?", re.DOTALL)


def _frontmatter(text: str) -> tuple[dict[str, Any], str]:
    m = _FM.match(text)
    if not m:
        return {}, text
    try:
        data = YAML(typ="safe").load(m.group(1)) or {}
    except YAMLError:
        data = {}
    return (data if isinstance(data, dict) else {}), text[m.end() :]


def _globs(value: Any) -> list[str]:
    if isinstance(value, str):
        return [g.strip() for g in value.split(",") if g.strip()]
    if isinstance(value, list):
        return [str(g).strip() for g in value if str(g).strip()]
    return []


def guidance_scope(rel: str, text: str) -> tuple[str, list[str], str]:
    """``(level, paths, body)`` a guidance file implies for what it says.

    Cursor ``.mdc``: ``globs`` become paths, ``alwaysApply: true`` the project level.
    Copilot ``*.instructions.md``: ``applyTo``. Claude ``.claude/rules``: ``paths``.
    ``AGENTS.md`` / ``CLAUDE.md`` in a folder: that folder. Everything else: project level.
    """
    kind = _guidance_kind(rel)
    meta, body = _frontmatter(text)
    folder = PurePosixPath(rel).parent.as_posix()
    if kind == "cursor-rule":
        if meta.get("alwaysApply") is True:
            return "project", [], body
        return ("domain", _globs(meta.get("globs")), body) if _globs(meta.get("globs")) else ("project", [], body)
    if kind == "copilot-instructions":
        globs = [g for g in _globs(meta.get("applyTo")) if g not in ("**", "**/*", "*")]
        return ("domain", globs, body) if globs else ("project", [], body)
    if kind == "claude-rule":
        globs = _globs(meta.get("paths") or meta.get("globs"))
        return ("domain", globs, body) if globs else ("project", [], body)
    if kind in ("agents", "claude") and folder not in ("", "."):
        return "domain", [f"{folder}/**"], body
    return "project", [], body


def collect(
    root: Path,
    state: dict[str, Any],
    *,
    full: bool,
    transcripts: str = "",
    mine_transcripts: bool = True,
    transcript_files: list[Path] | None = None,
    problems: list[str] | None = None,
) -> tuple[list[Source], dict[str, dict[str, str]]]:
    """Sources whose hash changed since ``state`` (all with ``full``), and the new hashes.

    ``transcript_files`` are Claude Code session transcripts (JSONL) to mine from their
    cursor on; ``mine_transcripts=False`` (the project opted out) reads none of them.
    Project files that could not be read, or only in part, are named in ``problems``
    (``file[:line]: why``); the scan goes on with the others.
    """
    problems = problems if problems is not None else []
    seen_docs: dict[str, str] = {} if full else dict(state.get("scanned_docs") or {})
    seen_tx: dict[str, str] = {} if full else dict(state.get("scanned_transcripts") or {})
    new_docs: dict[str, str] = {}
    new_tx: dict[str, str] = {}
    sources: list[Source] = []
    listed = len(problems)
    files = project_files(root, problems)
    if len(problems) > listed and not full:
        new_docs.update(seen_docs)  # git failed: keep what was read, so nothing is lost or re-read
    for rel in files:
        kind = _guidance_kind(rel)
        if kind is None and not _doc_kind(rel):
            continue
        text = _read_project_file(root, rel, problems)
        if text is None:
            continue
        sha = _sha(text)
        new_docs[rel] = sha
        if seen_docs.get(rel) == sha:
            continue
        if kind is not None:
            level, paths, body = guidance_scope(rel, text)
            sources.append(Source("doc", rel, body, sha, level, paths, "high", kind))
        elif PurePosixPath(rel).name.lower().startswith(_CONTRIBUTOR_GUIDES):
            sources.append(Source("doc", rel, text, sha, "project", [], "high", "guide"))
        else:
            # READMEs, docs and ADRs mostly describe and instruct users: only explicit rules count.
            sources.append(Source("doc", rel, text, sha, "project", [], "medium", "doc"))
    if transcripts and mine_transcripts:
        folder = (root / transcripts).resolve() if not Path(transcripts).is_absolute() else Path(transcripts)
        if not folder.is_dir():
            problems.append(f"{folder}: the [requirements] transcripts folder does not exist; no transcript read")
        else:
            for path in sorted(folder.rglob("*")):
                if not path.is_file() or path.suffix.lower() not in (".md", ".txt", ".log", ".jsonl"):
                    continue
                ref = path.relative_to(folder).as_posix()
                read = _read_folder_transcript(path, f"transcripts/{ref}", problems)
                if read is None:
                    continue
                text, raw = read
                first = text.lstrip().splitlines()[0] if text.strip() else ""
                if re.search(r"intently:\s*off", first, re.IGNORECASE):
                    continue  # opted-out transcript: never mined
                sha = _sha(text)
                new_tx[ref] = sha
                if seen_tx.get(ref) != sha:
                    sources.append(folder_transcript(path, f"transcripts/{ref}", text, sha, raw))
    if mine_transcripts:
        for path in transcript_files or []:
            source = session_transcript(path, seen_tx)
            if source is not None:
                if source.sha:
                    new_tx[source.ref] = source.sha
                sources.append(source)
    # Session transcripts are not a folder listing: keep the cursors of the ones not read now.
    for ref, cursor in (state.get("scanned_transcripts") or {}).items():
        if str(ref).startswith(SESSION_PREFIX) and ref not in new_tx:
            new_tx[str(ref)] = str(cursor)
    return sources, {"scanned_docs": new_docs, "scanned_transcripts": new_tx}


SESSION_PREFIX = "claude-session:"


def _read_folder_transcript(path: Path, ref: str, problems: list[str]) -> tuple[str, bytes] | None:
    """The text of a transcript of the ``[requirements] transcripts`` folder, whole, and the
    bytes it was decoded from (a ``.jsonl`` session is parsed from them: read once, and what
    is mined is exactly what was hashed, even while Claude Code appends to the file).

    Its hash decides whether it is read again, so it covers the whole file: hashing only a
    first slice made a conversation that grew past it look unchanged forever, and the rules
    said after that point were never mined. A ``.jsonl`` session is parsed from the file by
    its own reader, which names its bad lines itself; a plain-text conversation over
    :data:`MAX_TRANSCRIPT_BYTES` is read up to that size, and says so.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(f"{ref}: cannot read ({exc.strerror or exc}); not read")
        return None
    if path.suffix.lower() == ".jsonl":
        return _decode(raw, ref, []), raw
    if len(raw) > MAX_TRANSCRIPT_BYTES:
        problems.append(
            f"{ref}: {len(raw) // 1024} KiB, over the {MAX_TRANSCRIPT_BYTES // 1024} KiB limit; "
            f"only the first {MAX_TRANSCRIPT_BYTES // 1024} KiB read"
        )
        raw = raw[:MAX_TRANSCRIPT_BYTES].rsplit(b"\n", 1)[0] + b"\n"
    return _decode(raw, ref, problems), raw


def folder_transcript(path: Path, ref: str, text: str, sha: str, raw: bytes | None = None) -> Source:
    """A transcript from the ``[requirements] transcripts`` folder, mined from the user's turns only.

    A ``.jsonl`` file is a Claude Code session: it is parsed by the same reader as the hooks'
    queue (never as text, or JSON syntax and the assistant's replies would become rules).
    Any other file is a conversation in plain text, split at its speaker labels ("user:",
    "assistant:"). Lines that cannot be read are the source's problems; the rest still counts.
    ``raw``: the file's bytes, already read (else the file is read here).
    """
    if path.suffix.lower() == ".jsonl":
        return _transcript_source(ref, read_transcript(path, display=ref, data=raw), sha, "claude-jsonl")
    return _transcript_source(ref, read_plain_transcript(path, text), sha, "transcript")


def _transcript_source(ref: str, parsed: Transcript, sha: str, fmt: str) -> Source:
    """A parsed transcript as a source: the text of its user turns, and the candidates in them."""
    users = "\n\n".join(t.text for t in parsed.user_turns())
    cands = transcript_candidates(ref, parsed)
    return Source("transcript", ref, users, sha, "project", [], "low", fmt, cands, parsed.problems)


def session_transcript(path: Path, seen: dict[str, str]) -> Source | None:
    """One Claude Code transcript as a source (its new user turns), or ``None`` when nothing
    is new. A file that cannot be read at all is a source with a problem and no text, so the
    scan reports it and goes on with the others."""
    ref = SESSION_PREFIX + path.stem
    try:
        parsed = read_transcript(path, cursor=seen.get(ref))
    except OSError as exc:
        return Source(
            "transcript",
            ref,
            "",
            seen.get(ref, ""),
            "project",
            [],
            "low",
            "claude-jsonl",
            [],
            [f"{path}: cannot read the transcript: {exc.strerror or exc}"],
        )
    if parsed.cursor == seen.get(ref) and not parsed.problems:
        return None
    return _transcript_source(ref, parsed, parsed.cursor, "claude-jsonl")


def commit_sources(root: Path, last_commit: str | None, *, full: bool) -> tuple[list[Source], str | None]:
    """Commit messages since ``last_commit`` (or all), newest last; and the new head.

    The cap (:data:`MAX_COMMITS` commits, :data:`MAX_COMMIT_BYTES` of messages) keeps the
    NEWEST commits: a rule decided last week outweighs one from years ago, and reconciliation
    lets a newer rule supersede an older one, so reading the old ones instead (as a history
    walk from the root would) could only bring back what was since reverted. The older
    commits it leaves out are named in the first source's ``problems`` (the scan reports
    them), and the cursor still moves to HEAD, so a large history is not re-read every scan.
    """
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, encoding="utf-8", check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return [], last_commit
    rng = [head] if full or not last_commit else [f"{last_commit}..{head}"]
    if last_commit and not full:
        ok = subprocess.run(["git", "cat-file", "-e", f"{last_commit}^{{commit}}"], cwd=root, capture_output=True)
        if ok.returncode != 0:
            rng = [head]  # unreachable cursor (history rewritten): read everything, capped
    prefix = subprocess.run(
        ["git", "rev-parse", "--show-prefix"], cwd=root, capture_output=True, text=True, encoding="utf-8"
    )
    if prefix.returncode == 0 and prefix.stdout.strip():
        # The project is a folder of a larger repository (a monorepo package): only the
        # commits that touch it are its history; another package's policy is not its rule.
        # Its .intently/ does not count: a commit elsewhere often carries the scan state along.
        rng = [*rng, "--", ".", ":(exclude).intently"]
    proc = subprocess.run(
        ["git", "log", f"--max-count={MAX_COMMITS}", "--format=%H%x00%ae%x00%aI%x00%B%x1e", *rng],
        cwd=root,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    count = subprocess.run(
        ["git", "rev-list", "--count", *rng], cwd=root, capture_output=True, text=True, encoding="utf-8"
    )
    newest_first: list[Source] = []
    total = 0
    seen = 0
    foreign = False
    for record in proc.stdout.split("\x1e"):
        if record.count("\x00") < 3:
            continue
        sha, email, when, message = record.strip("\n").split("\x00", 3)
        message = message.strip()
        total += len(message)
        if total > MAX_COMMIT_BYTES:
            break
        seen += 1
        if message.startswith("intently scan:"):
            continue  # our own commits are not news
        foreign = True
        if not message or re.match(r"^Version \d", message):
            continue
        # A rebase (or cherry-pick) rewrites the hash but keeps author, author date and message:
        # the rewritten copy is the same material, already proposed, and must not bring back a
        # rule people reworded or disabled since.
        identity = _commit_identity(email, when, message)
        newest_first.append(
            Source(
                "commit",
                f"commit:{sha.strip()[:12]}",
                commit_text(message),
                sha.strip(),
                "project",
                [],
                "low",
                identity=identity,
            )
        )
    out = newest_first[::-1]  # oldest first, so a later commit's rule supersedes an earlier one
    available = int(count.stdout.strip()) if count.returncode == 0 and count.stdout.strip().isdigit() else seen
    if available > seen:
        note = (
            f"git log: {available - seen} older commit(s) since the cursor not read "
            f"(cap: the newest {MAX_COMMITS} commits and {MAX_COMMIT_BYTES // 1024} KiB of messages)"
        )
        if out:
            out[0].problems.append(note)
        else:
            out.append(Source("commit", "commit:cap", "", head, "project", [], "low", problems=[note]))
            foreign = True
    # Only scan commits since the cursor: keep the cursor, so a quiet re-scan writes nothing.
    return out, head if foreign or not last_commit else last_commit


#: The header of a Conventional Commits subject (``feat:``, ``fix(api)!:``, ``init:``: a type
#: word, an optional scope, an optional ``!``), after any of git's autosquash markers
#: (``fixup! ``, ``squash! ``, ``amend! ``).
_COMMIT_HEADER = re.compile(
    r"^(?:(?:fixup|squash|amend)! +)*(?P<type>[A-Za-z][A-Za-z0-9_-]{0,30})(?P<scope>\([^()\n]{0,60}\))?(?P<bang>!)?: +"
)
#: The Conventional Commits types (and the Angular ones): a capitalised ``Fix:`` is a header too.
_COMMIT_TYPES = frozenset(
    [
        "feat",
        "fix",
        "docs",
        "doc",
        "style",
        "refactor",
        "perf",
        "test",
        "tests",
        "build",
        "ci",
        "chore",
        "revert",
        "init",
        "wip",
        "deps",
        "security",
    ]
)
#: A Conventional Commits footer that carries prose (``BREAKING CHANGE: never ...``).
_BREAKING_FOOTER = re.compile(r"^BREAKING[ -]CHANGE: +(\S)", re.MULTILINE)


def commit_text(message: str) -> str:
    """The prose of a commit message, without the markup commit conventions put around it.

    A subject written ``feat(api)!: you must always sign commits`` states the rule after the
    header; kept, the header became the first words of a proposed rule ("init: you must
    always sign commits"), noise in every prompt it is injected into, and it kept the rule
    from matching the same rule worded in a doc. The header is cut from the subject (the
    first line) when it is one: a lowercase type (Conventional Commits' own convention), a
    known type in any case, or any word with a ``(scope)`` or ``!``. A capitalised label
    such as ``API:`` or ``Python:`` carries meaning and stays. The rest is capitalised as a
    sentence; a ``BREAKING CHANGE:`` footer loses its token the same way; a subject that is
    only a header is left as it is. Identity (:func:`_commit_identity`) is computed from the
    message as written, so a rebased commit still matches what an older scan read."""
    subject, sep, rest = message.partition("\n")
    header = _COMMIT_HEADER.match(subject)
    if header is not None and subject[header.end() :].strip():
        kind = header.group("type")
        if kind.islower() or kind.lower() in _COMMIT_TYPES or header.group("scope") or header.group("bang"):
            tail = subject[header.end() :]
            subject = tail[0].upper() + tail[1:]
    return subject + sep + _BREAKING_FOOTER.sub(lambda m: m.group(1).upper(), rest)


def _commit_identity(email: str, when: str, message: str) -> str:
    """What identifies a commit across a rebase: author, author date and (stripped) message."""
    return "commit:" + _sha(f"{email}\n{when}\n{message}")[:24]


def rewritten_commits(root: Path, last_commit: str | None) -> list[Source]:
    """The commits the scan cursor reached that HEAD no longer does (a rebase or amend left
    them behind), newest :data:`MAX_COMMITS`, as sources with their ``identity``.

    Their copies in the new history carry new hashes. A ``scan-state.yaml`` written before
    commits were keyed by identity knows their proposals only under the old hashes, which
    only these originals still carry: the scan reads them to carry those proposals over to
    the identity the copies share, so a rebase after an upgrade proposes nothing again.
    Nothing when there is no cursor, the cursor is gone (``git gc``) or git fails.
    """
    if not last_commit:
        return []
    try:
        proc = subprocess.run(
            ["git", "log", f"--max-count={MAX_COMMITS}", "--format=%H%x00%ae%x00%aI%x00%B%x1e", last_commit, "^HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
    except OSError:
        return []
    if proc.returncode != 0:
        return []
    out: list[Source] = []
    for record in proc.stdout.split("\x1e"):
        if record.count("\x00") < 3:
            continue
        sha, email, when, message = record.strip("\n").split("\x00", 3)
        message = message.strip()
        out.append(
            Source(
                "commit",
                f"commit:{sha.strip()[:12]}",
                commit_text(message),
                sha.strip(),
                "project",
                [],
                "low",
                identity=_commit_identity(email, when, message),
            )
        )
    return out
