"""Benchmarks, run by hand: ``python -m intently.bench NAME [options] [--json]``.

Each prints our figure beside a baseline measured in the same run. Every benchmark module
``intently.bench.<name>`` exposes ``main(argv: list[str]) -> int``.
"""

BENCHMARKS: tuple[str, ...] = ("log", "cycles", "triggers", "serve", "hook", "requirements", "decide")
