"""Dispatch ``python -m intently.bench NAME ...`` to ``intently.bench.NAME.main``."""

from __future__ import annotations

import importlib
import sys

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
    except ModuleNotFoundError:
        print(f"benchmark {name!r} is not built yet", file=sys.stderr)
        return 2
    result: int = module.main(rest)
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
