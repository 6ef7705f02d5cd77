"""Dispatch ``python -m intently.bench NAME ...`` to ``intently.bench.NAME.main``."""

from __future__ import annotations

import importlib
import sys

from ..core.extras import missing_extra
from . import BENCHMARKS


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"}:
        print("usage: python -m intently.bench {" + ",".join(BENCHMARKS) + "} [options] [--json]")
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in BENCHMARKS:
        print(f"unknown benchmark {name!r}; one of {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(f"intently.bench.{name}")
    except ModuleNotFoundError as exc:
        # A module the benchmark imports (httpx for `serve`) is an extra to install, not a
        # benchmark that is "not built yet", which is all a missing intently.bench.NAME means.
        missing = missing_extra(exc, f"benchmark {name!r}")
        if missing is None and exc.name != f"intently.bench.{name}":
            raise
        print(missing or f"benchmark {name!r} is not built yet", file=sys.stderr)
        return 2
    result: int = module.main(rest)
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
