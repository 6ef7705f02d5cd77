"""Synonyms and aliases from reviewable YAML files, never from a model.

Two files are read, in this order: ``synonyms.yaml`` shipped in the package (general
software vocabulary), then ``<home>/synonyms.yaml``, which users extend. Both have the
same two sections::

    equivalents:            # every form means the same; the first is the canonical one
      - [undefined behavior, UB]
    broader:                # a narrower form in a turn also counts as the broader term
      security: [vulnerability, CVE]

Forms are normalised exactly like triggers and turns. A bad entry is reported with its
``file:line`` and skipped; the rest of the file, and the shipped file, still apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..core import yaml12
from ._normalise import Term, raw_segments

__all__ = ["SynonymTable", "load_synonyms", "shipped_synonyms_path"]

Seq = tuple[str, ...]


def _form_tokens(text: str) -> Seq:
    return tuple(p for seg in raw_segments(text) for word in seg for p in word.parts)


@dataclass
class SynonymTable:
    """Alias sequences mapped to what they also count as."""

    canonical: dict[Seq, Seq] = field(default_factory=dict)
    broader: dict[Seq, set[Seq]] = field(default_factory=dict)
    broad_terms: set[Seq] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    _by_first: dict[str, list[Seq]] = field(default_factory=dict)
    term_cache: dict[tuple[str, bool], Term | None] = field(default_factory=dict, repr=False)

    def add_equivalents(self, forms: Sequence[str], where: str) -> None:
        seqs = [s for s in (_form_tokens(f) for f in forms) if s]
        if len(seqs) < 2:
            self.problems.append(f"{where}: an equivalents entry needs at least two forms with words in them")
            return
        # Joining two groups that share a form keeps one canonical form for all of them.
        target = next((self.canonical[s] for s in seqs if s in self.canonical), seqs[0])
        for seq in seqs:
            old = self.canonical.get(seq)
            if old is not None and old != target:
                for key, value in list(self.canonical.items()):
                    if value == old:
                        self.canonical[key] = target
            self.canonical[seq] = target
            self._index(seq)

    def add_broader(self, broad: str, narrower: Iterable[str], where: str) -> None:
        broad_seq = _form_tokens(broad)
        if not broad_seq:
            self.problems.append(f"{where}: the broader term {broad!r} has no words")
            return
        for form in narrower:
            seq = _form_tokens(form)
            if not seq:
                self.problems.append(f"{where}: the narrower form {form!r} has no words")
                continue
            self.broader.setdefault(seq, set()).add(broad_seq)
            self.broad_terms.add(broad_seq)
            self._index(seq)

    def _index(self, seq: Seq) -> None:
        bucket = self._by_first.setdefault(seq[0], [])
        if seq not in bucket:
            bucket.append(seq)

    def canonical_of(self, seq: Seq) -> Seq | None:
        return self.canonical.get(seq)

    def is_known_form(self, seq: Seq) -> bool:
        """Is ``seq`` a form the table names (an alias or a broader term)? A trigger entry
        holding it gets a phrase reading, since a turn's alias yields the form only whole."""
        return seq in self.canonical or seq in self.broad_terms

    def expand(self, tokens: Sequence[str], flags: Sequence[bool]) -> list[tuple[Seq, bool]]:
        """Extra forms a segment of a turn also counts as, each with its negation flag."""
        out: list[tuple[Seq, bool]] = []
        for i, tok in enumerate(tokens):
            for seq in self._by_first.get(tok, ()):
                n = len(seq)
                if tuple(tokens[i : i + n]) != seq:
                    continue
                neg = flags[i]
                canon = self.canonical.get(seq)
                if canon is not None and canon != seq:
                    out.append((canon, neg))
                for broad in self.broader.get(seq, ()):
                    out.append((broad, neg))
                    canon_b = self.canonical.get(broad)
                    if canon_b is not None and canon_b != broad:
                        out.append((canon_b, neg))
        return out


def shipped_synonyms_path() -> Path:
    return Path(str(resources.files("intently.triggers") / "data" / "synonyms.yaml"))


def _line(node: Any, key: Any = None) -> int | None:
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if key is None:
            return int(lc.line) + 1
        if isinstance(key, int):
            return int(lc.item(key)[0]) + 1
        return int(lc.key(key)[0]) + 1
    except (KeyError, IndexError, TypeError):
        return int(lc.line) + 1


def _read_file(table: SynonymTable, path: Path) -> None:
    """Add the file at ``path`` to ``table``, or say in ``table.problems`` what is wrong, where.

    A good file is read by libyaml (:mod:`intently.core.yaml12`: the YAML 1.2 scalars ruamel.yaml
    reads, and a repeated key refused as ruamel refuses it): a prompt's hook process reads the
    shipped file and the home's, and importing ruamel.yaml and parsing with it in pure Python was
    about a tenth of a second of it. Only a file with a problem is read again by ruamel.yaml, whose
    round-trip nodes give each problem its line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        table.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        return
    try:
        data = yaml12.load(text, unique_keys=True)
    except yaml12.YamlError:
        pass  # said with its line by the careful reading below
    else:
        trial = SynonymTable()  # a problem depends on the file alone, not on what the table holds
        _add_file(trial, path, data)
        if not trial.problems:
            table.sources.append(str(path))
            _add_file(table, path, data)
            return
    _read_with_lines(table, path, text)


def _read_with_lines(table: SynonymTable, path: Path, text: str) -> None:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        table.problems.append(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}")
        return
    table.sources.append(str(path))
    _add_file(table, path, data)


def _add_file(table: SynonymTable, path: Path, data: Any) -> None:
    """Add a parsed file's entries; a problem names its line when ``data`` holds ruamel's nodes."""
    if data is None:
        return
    if not isinstance(data, dict):
        table.problems.append(f"{path}:1: expected a mapping with 'equivalents' and/or 'broader'")
        return
    for key in data:
        if key not in ("equivalents", "broader"):
            table.problems.append(f"{path}:{_line(data, key)}: unknown section {key!r} (equivalents, broader)")
    equivalents = data.get("equivalents") or []
    if not isinstance(equivalents, list):
        table.problems.append(f"{path}:{_line(data, 'equivalents')}: 'equivalents' must be a list of lists")
        equivalents = []
    for i, entry in enumerate(equivalents):
        where = f"{path}:{_line(equivalents, i)}"
        if not isinstance(entry, list) or not all(isinstance(f, str | int) for f in entry):
            table.problems.append(f"{where}: an equivalents entry must be a list of words or phrases")
            continue
        table.add_equivalents([str(f) for f in entry], where)
    broader = data.get("broader") or {}
    if not isinstance(broader, dict):
        table.problems.append(f"{path}:{_line(data, 'broader')}: 'broader' must map a term to its narrower forms")
        broader = {}
    for broad, narrower in broader.items():
        where = f"{path}:{_line(broader, broad)}"
        if not isinstance(narrower, list) or not all(isinstance(f, str | int) for f in narrower):
            table.problems.append(f"{where}: the narrower forms of {broad!r} must be a list of words or phrases")
            continue
        table.add_broader(str(broad), [str(f) for f in narrower], where)


def load_synonyms(home_file: Path | None = None, *, shipped: bool = True) -> SynonymTable:
    """The shipped table, extended by ``home_file`` when it exists."""
    table = SynonymTable()
    if shipped:
        _read_file(table, shipped_synonyms_path())
    if home_file is not None and home_file.is_file():
        _read_file(table, home_file)
    return table
