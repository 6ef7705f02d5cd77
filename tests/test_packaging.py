"""What `pip install intently` ships, read from pyproject.toml against the source tree (building a
wheel needs setuptools from the network; these checks run offline in milliseconds).

A data file no ``package-data`` pattern matches is left out of the wheel while every test still
passes from the checkout, and the installed command then fails on a user's machine (a missing
template, vocabulary or tokenizer)."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

from intently.core.extras import EXTRA_MODULES

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE = ROOT / "src" / "intently"


def _shipped(relative: str, patterns: list[str]) -> bool:
    """setuptools' package-data globs: ``**/`` spans any folders, including none."""
    for pattern in patterns:
        if fnmatch.fnmatch(relative, pattern):
            return True
        if pattern.startswith("**/") and fnmatch.fnmatch(relative.rsplit("/", 1)[-1], pattern[3:]):
            return True
    return False


def test_every_data_file_of_the_package_is_in_the_wheel() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["intently"]
    data = [
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert data, "no data files found: wrong source folder"
    assert [f for f in data if not _shipped(f, patterns)] == []


def test_each_extra_says_which_modules_it_brings() -> None:
    """A command that misses an extra names it from EXTRA_MODULES (core/extras.py), so the map
    has exactly the extras a user can install (dev is for working on intently)."""
    extras = set(PYPROJECT["project"]["optional-dependencies"]) - {"dev"}
    assert set(EXTRA_MODULES) == extras


def test_the_license_text_ships_with_the_declared_license() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"  # an SPDX expression; the TOML table form is deprecated
    for name in project["license-files"]:
        assert "Apache License" in (ROOT / name).read_text()[:200]


def _make_dry_run(tmp_path: Path, target: str) -> list[str]:
    """The commands ``make TARGET`` would run in a fresh clone (no .venv yet), without running them."""
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    done = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_make_demo_installs_the_core_only(tmp_path: Path) -> None:
    """README's first command: the demo needs no extra, and the full set (agentdojo, playwright,
    schemathesis, ...) is about three times the core's disk and download."""
    installs = [
        line for line in _make_dry_run(tmp_path, "demo") if "pip install" in line and "--upgrade pip" not in line
    ]
    assert installs == [".venv/bin/python -m pip install -q -e ."]


def test_make_test_installs_every_extra(tmp_path: Path) -> None:
    installs = " ".join(line for line in _make_dry_run(tmp_path, "test") if "pip install" in line)
    extras = set(PYPROJECT["project"]["optional-dependencies"]) - {"st", "wordllama"}  # wordllama comes with dev
    assert all(extra in installs for extra in extras), installs
