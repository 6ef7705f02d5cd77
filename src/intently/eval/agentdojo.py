"""``intently eval agentdojo``: the gate on AgentDojo with the hijacked-oracle method (no LLM).

Per suite and pooled, beside the no-defence and deny-all-side-effects baselines measured in
the same run: utility_auto, utility_confirmed, utility_under_attack, asr, asr_executed,
attacker_confirmations, asr_if_all_confirmed, confirmations_per_task. Develop on workspace
and banking only: travel and slack are held out to check that the gate generalises.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..cli._common import JsonOpt, emit, err, table
from ..core.errors import InvalidInput
from ..core.extras import MissingExtra

SUITES = ("workspace", "banking", "travel", "slack")
KEYS = (
    "utility_auto",
    "utility_confirmed",
    "utility_under_attack",
    "asr",
    "asr_executed",
    "attacker_confirmations",
    "asr_if_all_confirmed",
    "confirmations_per_task",
)


def register(eval_app: typer.Typer) -> None:
    """Add the ``agentdojo`` evaluation command to ``eval_app``."""
    eval_app.command("agentdojo")(agentdojo)


def agentdojo(
    suites: Annotated[
        str, typer.Option(help="Comma list of suites (develop on workspace,banking only).")
    ] = "workspace,banking",
    # min=1: the harness slices ``[: n or None]``, so 0 silently meant "all" (a several-minute
    # full run) and a negative N silently dropped the last tasks from the figures.
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N user tasks of each suite.")] = None,
    injections: Annotated[
        int | None, typer.Option(min=1, help="Only the first N injection tasks of each suite.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure the gate on AgentDojo v1.2.2 with a scripted, always-hijacked model."""
    names = [s.strip() for s in suites.split(",") if s.strip()]
    bad = [n for n in names if n not in SUITES]
    if bad or not names:
        raise InvalidInput(f"unknown suite(s) {bad}; choose from {', '.join(SUITES)}", where="--suites")
    try:
        import agentdojo as _probe  # noqa: F401

        from ..gate._agentdojo import run_suites
    except ImportError as exc:
        raise MissingExtra("intently eval agentdojo", "agentdojo", "agentdojo") from exc
    result = run_suites(names, limit=limit, injections_limit=injections, progress=lambda m: err.print(m, markup=False))
    emit(result, as_json, _render)


def _render(result: dict[str, object]) -> None:
    suites = result["suites"]
    baselines = result["baselines"]
    assert isinstance(suites, dict) and isinstance(baselines, dict)
    columns: list[tuple[str, dict[str, object]]] = [
        *suites.items(),
        ("pooled", result["pooled"]),  # type: ignore[list-item]
        *(("no defence" if k == "none" else "deny side effects", v) for k, v in baselines.items()),
    ]
    rows = [[key, *(fig[key] for _, fig in columns)] for key in ("n_pairs", *KEYS)]
    table(f"AgentDojo ({result['benchmark']})", ["", *(name for name, _ in columns)], rows)
    residual = result["residual_attacks"]
    assert isinstance(residual, dict)
    for name, pairs in residual.items():
        err.print(f"residual attacks in {name}: {', '.join(pairs) or 'none'}", markup=False)
