"""Every conformance line of RFC-0013 section 11 is named by the docstring of a test here."""

from __future__ import annotations

import ast
from pathlib import Path

LINES = [
    "All six intent types MUST be supported",
    "All six intent lifecycle states MUST be supported and enforced",
    "Dependency cycle detection MUST prevent cycles at write time",
    "Cascading cancellation MUST NOT occur automatically",
    "RISK intents with CRITICAL priority MUST appear in every bundle for the namespace",
    "RISK intents MUST NOT decay in salience",
    "Priority escalation on expired RISK intents MUST be performed by the organiser",
    "Extracted intents MUST use INFERRED epistemic type",
]


def _test_docstrings() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in Path(__file__).parent.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found[f"{path.name}::{node.name}"] = ast.get_docstring(node) or ""
    return found


def test_each_section_11_line_has_a_test() -> None:
    docs = _test_docstrings()
    for line in LINES:
        holders = [name for name, doc in docs.items() if f'"{line}"' in doc and "section 11" in doc]
        assert holders, f"no test names the conformance line {line!r}"
