"""``intently eval triggers``: precision, recall and F1 of fires over (intent, turn) pairs.

Runs the engine's own :class:`~intently.triggers.Matcher` (the code ``Triggers.match``
runs, with the shipped synonyms and the negation guard on) over the entries ``Triggers.add``
would store (the intent's triggers plus the topics its description names) beside the reference
behaviour, computed in the same run: lower-cased tokens are maximal runs of Unicode
letters, digits, ``_`` and ``-``, and an entry fires when all its tokens occur in the turn.
Cooldown and fire budgets are ignored: this scores matching. Every pair not listed in
``should_fire`` is a should-not-fire pair.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..cli._common import JsonOpt, emit, out, table
from ..core.errors import InvalidInput
from ._json import read_json_object

__all__ = ["Counts", "evaluate", "load_dataset", "register"]

_BASELINE_RUN = re.compile(r"(?:[^\W]|-)+")


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def to_json(self) -> dict[str, Any]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return {
            "precision": round(p, 4),
            "recall": round(r, 4),
            "f1": round(f1, 4),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
        }


def load_dataset(path: Path) -> dict[str, Any]:
    """Read and check the file; errors name the file and the field."""
    data = read_json_object(
        path, lists=("intents", "turns", "should_fire"), wants="a JSON object with intents, turns and should_fire"
    )
    for i, intent in enumerate(data["intents"]):
        triggers = intent.get("triggers") if isinstance(intent, dict) else None
        if (
            not isinstance(intent, dict)
            or not intent.get("id")
            or not isinstance(triggers, list)
            or not all(isinstance(e, list) for e in triggers)
        ):
            raise InvalidInput(
                "each intent needs an id and triggers (a list of term lists)", where=f"{path}: intents[{i}]"
            )
    for i, turn in enumerate(data["turns"]):
        if not isinstance(turn, dict) or not turn.get("id") or not isinstance(turn.get("text"), str):
            raise InvalidInput("each turn needs an id and a text", where=f"{path}: turns[{i}]")
    for key in ("intents", "turns"):
        if not data[key]:  # no pairs to score: the figures would be all zeros, exit 0
            raise InvalidInput(f"empty list {key!r}: nothing to score", where=str(path))
    # A label naming an intent or turn the file does not hold would never be scored (neither
    # a hit nor a miss), silently raising recall; a repeated id would count its pairs twice.
    intent_ids = [str(i["id"]) for i in data["intents"]]
    turn_ids = [str(t["id"]) for t in data["turns"]]
    for kind, ids in (("intents", intent_ids), ("turns", turn_ids)):
        seen: set[str] = set()
        for i, value in enumerate(ids):
            if value in seen:
                raise InvalidInput(f"id {value!r} appears twice", where=f"{path}: {kind}[{i}]")
            seen.add(value)
    known_intents, known_turns = set(intent_ids), set(turn_ids)
    for i, pair in enumerate(data["should_fire"]):
        if not isinstance(pair, dict) or "intent" not in pair or "turn" not in pair:
            raise InvalidInput("each label needs an intent and a turn", where=f"{path}: should_fire[{i}]")
        if str(pair["intent"]) not in known_intents:
            raise InvalidInput(f"no intent {pair['intent']!r} in 'intents'", where=f"{path}: should_fire[{i}]")
        if str(pair["turn"]) not in known_turns:
            raise InvalidInput(f"no turn {pair['turn']!r} in 'turns'", where=f"{path}: should_fire[{i}]")
    return dict(data)


def _baseline_tokens(text: str) -> set[str]:
    return {m.lower() for m in _BASELINE_RUN.findall(text)}


def _baseline(data: dict[str, Any]) -> Callable[[str], set[str]]:
    entries = [
        (i["id"], [[t.lower() for term in e for t in _BASELINE_RUN.findall(term)] for e in i["triggers"]])
        for i in data["intents"]
    ]

    def fires(text: str) -> set[str]:
        tokens = _baseline_tokens(text)
        return {iid for iid, es in entries if any(e and all(t in tokens for t in e) for e in es)}

    return fires


def _intently(data: dict[str, Any], synonyms_file: Path | None) -> Callable[[str], set[str]]:
    from ..triggers import MAX_ENTRIES, Matcher, load_synonyms, with_event_entries  # not for `intently --help`

    # The file itself, not ``Matcher.for_home(parent)``: that reads ``parent/synonyms.yaml``,
    # so ``--synonyms team.yaml`` was silently ignored (or another file read in its place).
    if synonyms_file is not None and not synonyms_file.is_file():
        raise InvalidInput("no such synonyms file", where=str(synonyms_file))
    matcher = Matcher(load_synonyms(synonyms_file)) if synonyms_file is not None else Matcher()
    for intent in data["intents"]:
        # What ``Triggers.add`` stores: the user's entries plus the topics of the description.
        entries = with_event_entries(
            tuple(tuple(e) for e in intent["triggers"]),
            str(intent.get("description") or ""),
            limit=MAX_ENTRIES,
            usable=matcher.matchable,
        )
        matcher.index.upsert(matcher.compile(str(intent["id"]), entries))

    def fires(text: str) -> set[str]:
        return {h.intent.id for h in matcher.match(text)}

    return fires


def evaluate(data: dict[str, Any], *, synonyms_file: Path | None = None, errors: bool = False) -> dict[str, Any]:
    """Score intently and the reference baseline on the same pairs."""
    gold = {(str(p["intent"]), str(p["turn"])) for p in data["should_fire"]}
    systems = {"intently": _intently(data, synonyms_file), "exact_baseline": _baseline(data)}
    counts = {name: Counts() for name in systems}
    mistakes: list[dict[str, str]] = []
    intent_ids = [str(i["id"]) for i in data["intents"]]
    for turn in data["turns"]:
        tid = str(turn["id"])
        for name, fires in systems.items():
            fired = fires(turn["text"])
            for iid in intent_ids:
                want, got = (iid, tid) in gold, iid in fired
                c = counts[name]
                if want and got:
                    c.tp += 1
                elif got:
                    c.fp += 1
                elif want:
                    c.fn += 1
                if errors and name == "intently" and want != got:
                    mistakes.append(
                        {"kind": "fp" if got else "fn", "intent": iid, "turn": tid, "text": turn["text"][:160]}
                    )
    result: dict[str, Any] = {name: c.to_json() for name, c in counts.items()}
    result["pairs"] = len(intent_ids) * len(data["turns"])
    if errors:
        result["errors"] = mistakes
    return result


def _render(result: dict[str, Any]) -> None:
    rows = [
        [name, v["precision"], v["recall"], v["f1"], v["tp"], v["fp"], v["fn"]]
        for name, v in result.items()
        if isinstance(v, dict)
    ]
    table(f"Standing-intent matching ({result['pairs']} pairs)", ["system", "P", "R", "F1", "tp", "fp", "fn"], rows)
    for e in result.get("errors", []):
        out.print(f"{e['kind']} {e['intent']} {e['turn']}: {e['text']}", markup=False)


def triggers(
    data: Annotated[Path, typer.Option("--data", help="Dataset (format of shared/datasets/triggers-dev.json).")],
    synonyms: Annotated[
        Path | None, typer.Option("--synonyms", help="A home synonyms.yaml to add to the shipped one.")
    ] = None,
    errors: Annotated[bool, typer.Option("--errors", help="Also list each false positive and negative.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Precision, recall and F1 of fires, intently beside the reference exact-token matching."""
    result = evaluate(load_dataset(data), synonyms_file=synonyms, errors=errors)
    emit(result, as_json, _render)


def register(eval_app: typer.Typer) -> None:
    """Add the ``triggers`` evaluation command to ``eval_app``."""
    eval_app.command("triggers")(triggers)
