"""Reading and writing requirement files and ``domains.yaml``.

Round-trip YAML (ruamel) keeps the user's comments and key order when we change a field. It
is imported by the functions that parse or write, not by this module: a prompt's hook process
whose rules all come from the parse cache (or that has none) never loads it, about a tenth of a
second of its start-up. Validation errors name ``file:line`` and the dotted field. Writes are
atomic (temp file in the same folder, then ``os.replace``), so a reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..core.clock import format_time
from ..core.errors import InvalidInput
from ..core.files import atomic_write
from ._model import Domain, DomainsFile, Frontmatter, Requirement

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

__all__ = [
    "FileError",
    "ParsedFile",
    "atomic_write",
    "file_hash",
    "parse_domains",
    "parse_requirement",
    "render_domains",
    "render_new_requirement",
    "rewrite_requirement",
    "yaml_time",
]

_WHY = "**Why:**"
_FIELD_ORDER = (
    "id",
    "status",
    "superseded_by",
    "replaces",
    "scope",
    "hints",
    "confidence",
    "user_edited",
    "provenance",
    "evidence",
    "created",
    "updated",
)


@dataclass(frozen=True)
class FileError:
    """One file that could not be loaded, and where."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        return f"{where}: {self.field + ': ' if self.field else ''}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}


@dataclass
class ParsedFile:
    """A requirement file split into its round-trip frontmatter and its body."""

    data: CommentedMap
    body: str
    body_line: int


def _yaml() -> YAML:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def yaml_time(when: datetime) -> str:
    """Second-precision UTC, as people write it: ``2026-03-02T09:00:00Z``."""
    return format_time(when)[:19] + "Z"


def _line_of(data: Any, loc: Iterable[Any], offset: int) -> int | None:
    """1-based line of the deepest key in ``loc`` that the YAML records a position for."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    line: int | None = None
    node = data
    for key in loc:
        try:
            if isinstance(node, CommentedMap) and key in node:
                line = node.lc.key(key)[0] + offset
                node = node[key]
            elif isinstance(node, CommentedSeq) and isinstance(key, int) and key < len(node):
                line = node.lc.item(key)[0] + offset
                node = node[key]
            else:
                break
        except (KeyError, IndexError, AttributeError, TypeError):
            break
    return line


def split_frontmatter(text: str, name: str) -> tuple[str, str, int]:
    """``(yaml, body, body_line)``; raises :class:`InvalidInput` naming the file if malformed."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise InvalidInput("must start with a '---' line opening the YAML frontmatter", where=f"{name}:1")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :]), i + 2
    raise InvalidInput("the frontmatter has no closing '---' line", where=f"{name}:1")


def _split_body(body: str) -> tuple[str, str]:
    text = body.strip()
    if _WHY in text:
        statement, rationale = text.split(_WHY, 1)
        return statement.strip(), " ".join(rationale.split())
    return text, ""


#: Parsed files kept by content (see :func:`parse_requirement`); above a home's rule count,
#: every load would evict what the next one needs.
PARSE_CACHE_SIZE = 4096


def parse_requirement(path: Path, raw: bytes, *, display: str | None = None) -> Requirement | FileError:
    """Parse and validate one file; a problem comes back as a :class:`FileError`, never raised.

    Every select (so every context block, every prompt in Claude Code) loads every rule file,
    and round-trip YAML costs milliseconds a file: with 1,000 rules a block took seconds to
    assemble, nearly all of it re-parsing files that had not changed. A parse is therefore
    kept for the exact bytes it read (with the path and the name it reports): an edit, even
    one that keeps the size and the mtime, is new content and is parsed again. The caller
    gets its own copy of the frontmatter model, so assigning a field never reaches the kept one.
    """
    parsed = _parse(path, raw, display or path.name)
    if isinstance(parsed, FileError):
        return parsed
    return replace(parsed, meta=parsed.meta.model_copy())


@lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse(path: Path, raw: bytes, name: str) -> Requirement | FileError:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    try:
        text = raw.decode("utf-8")
        head, body, body_line = split_frontmatter(text, name)
    except UnicodeDecodeError as exc:
        return FileError(name, None, None, f"not UTF-8: {exc}")
    except InvalidInput as exc:
        line = int(exc.where.rsplit(":", 1)[1]) if exc.where and ":" in exc.where else None
        return FileError(name, line, None, str(exc).split(": ", 1)[-1])
    try:
        data = _yaml().load(head)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None
        return FileError(name, line, None, f"invalid YAML: {getattr(exc, 'problem', None) or exc}")
    if not isinstance(data, CommentedMap):
        return FileError(name, 2, None, "the frontmatter must be a YAML mapping")
    try:
        meta = Frontmatter.model_validate(_plain(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [p for p in first["loc"]]
        field = ".".join(str(p) for p in loc)
        line = _line_of(data, loc, 2)
        return FileError(name, line, field, first["msg"])
    if path.stem != meta.id:
        return FileError(name, _line_of(data, ["id"], 2), "id", f"id {meta.id!r} does not match the file name")
    statement, rationale = _split_body(body)
    if not statement:
        return FileError(name, body_line, "statement", "the body has no statement")
    return Requirement(meta=meta, statement=statement, rationale=rationale, path=path, content_hash=file_hash(raw))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _body_text(statement: str, rationale: str) -> str:
    body = statement.strip() + "\n"
    if rationale.strip():
        body += f"\n{_WHY} {rationale.strip()}\n"
    return body


def _dump(data: CommentedMap) -> str:
    buf = io.StringIO()
    _yaml().dump(data, buf)
    return buf.getvalue()


def _to_yaml_value(value: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, datetime):
        return yaml_time(value)
    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _to_yaml_value(v)
        return out
    if isinstance(value, list):
        seq = CommentedSeq([_to_yaml_value(v) for v in value])
        if all(isinstance(v, str) for v in value) and len(value) <= 6 and sum(len(v) for v in value) < 60:
            seq.fa.set_flow_style()
        return seq
    return value


def render_new_requirement(meta: Frontmatter, statement: str, rationale: str) -> str:
    from ruamel.yaml.comments import CommentedMap

    dumped = meta.model_dump(mode="python")
    data = CommentedMap()
    for key in _FIELD_ORDER:
        if key in ("evidence", "replaces") and not dumped.get(key):
            continue
        data[key] = _to_yaml_value(dumped[key])
    return f"---\n{_dump(data)}---\n\n{_body_text(statement, rationale)}"


def rewrite_requirement(raw: str, name: str, changes: dict[str, Any], body: tuple[str, str] | None) -> str:
    """Apply ``changes`` (dotted keys, e.g. ``scope.paths``) to the frontmatter in place,
    keeping every comment and the key order; replace the body only when ``body`` is given."""
    from ruamel.yaml.comments import CommentedMap

    head, old_body, _ = split_frontmatter(raw, name)
    data = _yaml().load(head)
    for dotted, value in changes.items():
        node = data
        parts = dotted.split(".")
        for part in parts[:-1]:
            if part not in node or not isinstance(node[part], CommentedMap):
                node[part] = CommentedMap()
            node = node[part]
        node[parts[-1]] = _to_yaml_value(value)
    text_body = _body_text(*body) if body is not None else old_body.lstrip("\n")
    return f"---\n{_dump(data)}---\n\n{text_body}"


def parse_domains(path: Path, raw: bytes) -> tuple[list[Domain], CommentedMap | None, FileError | None]:
    """Domains from ``domains.yaml``; a bad file gives no domains and an error (never raises)."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    name = path.name
    try:
        data = _yaml().load(raw.decode("utf-8")) or CommentedMap()
    except (YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        return [], None, FileError(name, mark.line + 1 if mark else None, None, f"invalid YAML: {exc}")
    if not isinstance(data, CommentedMap):
        return [], None, FileError(name, 1, None, "must be a mapping with 'version' and 'domains'")
    try:
        parsed = DomainsFile.model_validate(_plain(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        return [], data, FileError(name, _line_of(data, loc, 1), ".".join(map(str, loc)), first["msg"])
    names = [d.name for d in parsed.domains]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        return [], data, FileError(name, None, "domains", f"duplicate domain names: {', '.join(dup)}")
    return parsed.domains, data, None


def render_domains(domains: list[Domain], data: CommentedMap | None) -> str:
    """Write ``domains`` back, keeping comments on the top level and on unchanged entries."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if data is None:
        data = CommentedMap()
        data["version"] = 1
    existing = {str(d.get("name")): d for d in data.get("domains", []) or [] if isinstance(d, CommentedMap)}
    seq = CommentedSeq()
    for dom in domains:
        entry = existing.get(dom.name, CommentedMap())
        for key, value in dom.model_dump().items():
            if key == "user_edited" and not value and key not in entry:
                continue
            if entry.get(key) != value:
                entry[key] = _to_yaml_value(value)
        seq.append(entry)
    data["domains"] = seq
    return _dump(data)
