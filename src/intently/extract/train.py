"""Rebuild or validate the extraction recall layer: ``python -m intently.extract.train``.

    python -m intently.extract.train --out src/intently/extract/model.json FILE...
    python -m intently.extract.train --validate NEWFILE... FILE...

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


def _pooled(scores: list[Score]) -> Score:
    total = Score()
    for one in scores:
        total.turns += one.turns
        for name in EVAL_TYPES:
            mine, theirs = total.counts[name], one.counts[name]
            mine.tp, mine.fp, mine.fn = mine.tp + theirs.tp, mine.fp + theirs.fp, mine.fn + theirs.fn
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m intently.extract.train", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="labelled JSONL files to train on")
    parser.add_argument("--out", type=Path, help="write the trained model here")
    parser.add_argument("--validate", nargs="+", type=Path, default=[], help="leave-one-file-out on these files")
    parser.add_argument("--threshold", type=float, default=TrainSettings.threshold)
    args = parser.parse_args(argv)
    settings = TrainSettings(threshold=args.threshold)
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
        report = {
            "held_out": [p.name for p in args.validate],
            "rules": {k: _pooled(rules_only).micro(t) for k, t in (("rfc4", RFC4_TYPES), ("all", EVAL_TYPES))},
            "rules+model": {k: _pooled(with_model).micro(t) for k, t in (("rfc4", RFC4_TYPES), ("all", EVAL_TYPES))},
            "types": {
                name: {"rules": _pooled(rules_only).micro([name]), "rules+model": _pooled(with_model).micro([name])}
                for name in EVAL_TYPES
            },
        }
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    if args.out:
        train_files(args.files, settings).save(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
