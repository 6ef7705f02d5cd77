"""Rebuild or validate the extraction recall layer: ``python -m intently.extract.train``.

    python -m intently.extract.train --out src/intently/extract/model.json FILE...
    python -m intently.extract.train --validate NEWFILE... FILE...
    python -m intently.extract.train --threshold 0.8 --type-threshold OPEN_QUESTION=0.7 ...

``--out`` trains on every FILE and writes the model (with each file's SHA-256). ``--validate``
is the honest figure: for each NEWFILE it trains on all the other files, scores the rules alone
and the rules with the layer on NEWFILE, and prints the pooled per-(turn, type) figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._rules import RuleExtractor
from ._scoring import EVAL_TYPES, RFC4_TYPES, Score, load_labelled, score
from ._train import TrainSettings, train_files


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], 1 for off; got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m intently.extract.train", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="labelled JSONL files to train on")
    parser.add_argument("--out", type=Path, help="write the trained model here")
    parser.add_argument("--validate", nargs="+", type=Path, default=[], help="leave-one-file-out on these files")
    parser.add_argument(
        "--threshold",
        type=_probability,
        help=f"one bar for every type, replacing the per-type defaults (default: {TrainSettings.threshold}, "
        + ", ".join(f"{t} {p}" for t, p in TrainSettings.thresholds)
        + ")",
    )
    parser.add_argument(
        "--type-threshold",
        action="append",
        default=[],
        metavar="TYPE=P",
        help="the bar for one type (repeatable); applied after --threshold",
    )
    parser.add_argument(
        "--types",
        default=",".join(TrainSettings.types),
        help="comma-separated types the layer proposes (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    types = tuple(t.strip() for t in args.types.split(",") if t.strip())
    unknown = [t for t in types if t not in EVAL_TYPES]
    if unknown or not types:
        parser.error(f"--types: unknown type {unknown[0] if unknown else '(none)'}; known: {', '.join(EVAL_TYPES)}")
    bars = dict(TrainSettings.thresholds) if args.threshold is None else {}
    for item in args.type_threshold:
        name, _, value = item.partition("=")
        if name.strip() not in EVAL_TYPES:
            parser.error(f"--type-threshold {item!r}: unknown type; known: {', '.join(EVAL_TYPES)}")
        try:
            bars[name.strip()] = _probability(value)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"--type-threshold {item!r}: {exc}")
    settings = TrainSettings(
        threshold=TrainSettings.threshold if args.threshold is None else args.threshold,
        thresholds=tuple(sorted(bars.items())),
        types=types,
    )
    if args.validate:
        names = {p.resolve() for p in args.validate}
        pool = [p for p in args.files if p.resolve() not in names]
        rules_only, with_model = [], []
        for held in args.validate:
            others = pool + [p for p in args.validate if p != held]
            model = train_files(others, settings)
            rows = load_labelled(held)
            rules_only.append(score(RuleExtractor(model=False), rows))
            with_model.append(score(RuleExtractor(model=model), rows))
        pooled = {"rules": Score.pooled(rules_only), "rules+model": Score.pooled(with_model)}
        report = {
            "held_out": [p.name for p in args.validate],
            **{name: {"rfc4": one.micro(RFC4_TYPES), "all": one.micro(EVAL_TYPES)} for name, one in pooled.items()},
            "types": {t: {name: one.micro([t]) for name, one in pooled.items()} for t in EVAL_TYPES},
        }
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    if args.out:
        train_files(args.files, settings).save(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
