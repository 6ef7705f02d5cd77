"""``intently eval extraction``: precision, recall and F1 per type on a labelled JSONL file.

Runs the extractor directly (no home or store needed). Scoring is per (turn, type); see
:mod:`intently.extract._scoring`. The RFC-0013 bar is precision >= 0.70 and recall >= 0.60 on
``rfc4`` (COMMITMENT, GOAL, OPEN_QUESTION, RISK).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..cli._common import JsonOpt, emit, out, table
from ..core.errors import InvalidInput

if TYPE_CHECKING:  # the engine loads when the evaluation runs, not for `intently --help`
    from ..extract import Extractor


def register(eval_app: typer.Typer) -> None:
    """Add the ``extraction`` evaluation command to ``eval_app``."""
    eval_app.command("extraction")(extraction)


def _extractor(name: str, base_url: str | None, model: str | None) -> Extractor:
    from ..extract import LLMExtractor, RuleExtractor

    if name in ("rules", "rules-only"):
        return RuleExtractor(model=name == "rules")
    if name == "llm" and base_url and model:
        return LLMExtractor(base_url=base_url, model=model, api_key=os.environ.get("INTENTLY_LLM_KEY") or None)
    raise typer.BadParameter("use --extractor rules or rules-only, or --extractor llm with --base-url and --model")


def _render(data: dict[str, Any]) -> None:
    rows = [
        [name, v["precision"], v["recall"], v["f1"], v["tp"], v["fp"], v["fn"]] for name, v in data["types"].items()
    ]
    for name in ("rfc4", "all"):
        v = data[name]
        rows.append([name, v["precision"], v["recall"], v["f1"], "", "", ""])
    table(f"Extraction ({data['extractor']}, {data['turns']} turns)", ["type", "P", "R", "F1", "tp", "fp", "fn"], rows)
    out.print(f"turns proposing a type the labels lack: {data['turns_with_wrong_type']} of {data['turns']}")
    out.print(f"turns per second: {data['turns_per_second']}")
    for err in data.get("errors", []):
        out.print(f"{err['kind']} {err['type']} {err['id']}: {err['spans']}", markup=False)


def extraction(
    data: Annotated[
        Path, typer.Option("--data", help="Labelled JSONL (format of shared/datasets/extraction-dev.jsonl).")
    ],
    extractor: Annotated[
        str, typer.Option(help="rules (default: rules with their recall model), rules-only, or llm.")
    ] = "rules",
    base_url: Annotated[str | None, typer.Option(help="LLM endpoint (with --extractor llm).")] = None,
    model: Annotated[str | None, typer.Option(help="LLM model (with --extractor llm).")] = None,
    repeat: Annotated[int, typer.Option(min=1, help="Extraction passes to time (speed only).")] = 1,
    errors: Annotated[bool, typer.Option("--errors", help="Also list each false positive and negative.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Score an extractor per (turn, type) on a labelled file; print P/R/F1 and turns per second."""
    from ..extract import EVAL_TYPES, load_labelled, score

    if data.exists() and not data.is_file():
        # load_labelled names a missing file; a folder (an easy slip for a data set that is
        # a folder elsewhere) raised IsADirectoryError, shown as an internal error.
        raise InvalidInput("not a file (want a labelled JSONL file)", where=str(data))
    rows = load_labelled(data)
    if not rows:
        # An empty file (a failed download, a wrong glob) printed all-zero figures and exit 0.
        raise InvalidInput("no labelled turns in the file", where=str(data))
    result = score(_extractor(extractor, base_url, model), rows, repeat=repeat)
    payload: dict[str, Any] = {"extractor": extractor, **result.to_json()}
    payload["types"] = {name: payload["types"][name] for name in EVAL_TYPES}
    if errors:
        payload["errors"] = result.errors
    emit(payload, as_json, _render)
