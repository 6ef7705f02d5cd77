"""One bad entry in ``requirements/`` never disables the feature: a folder, a dangling or
looping symlink, or a symlink out of the home where a rule file belongs is one error naming
it, and every other rule still loads and is injected."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from intently import Intently
from intently.requirements import RequirementFileWarning

from .conftest import run_main


@pytest.fixture
def rix(backend_rix: Intently) -> Intently:
    """This module's tests run on each backend under test (``INTENTLY_TEST_BACKENDS``)."""
    return backend_rix


def test_folders_and_symlinks_in_the_requirements_folder_are_named_and_skipped(rix: Intently, tmp_path: Path) -> None:
    good = rix.requirements.add("Never edit generated manpages.", paths=["man/**"])
    folder = rix.home.requirements_dir
    (folder / "req-dddddddddddd.md").mkdir()  # e.g. left by a bad merge or a mistaken mkdir
    (folder / "req-eeeeeeeeeeee.md").symlink_to("req-eeeeeeeeeeee.md")  # a loop
    (folder / "req-999999999999.md").symlink_to("gone.md")  # dangling
    outside = tmp_path / "shared" / "req-ffffffffffff.md"
    outside.parent.mkdir()
    outside.write_text(good.path.read_text().replace(good.id, "req-ffffffffffff"))
    (folder / "req-ffffffffffff.md").symlink_to(outside)  # out of the home: no home-relative name

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RequirementFileWarning)
        sel = rix.requirements.select("Regenerate the manpages", paths=["man/intently.1"], record=False)
    assert sel.ids == [good.id]
    skipped = sorted(str(w.message) for w in caught if issubclass(w.category, RequirementFileWarning))
    assert skipped == [
        "skipped requirements/req-999999999999.md: a symlink; it must be a plain file inside the home",
        "skipped requirements/req-dddddddddddd.md: not a regular file; it must be a plain file inside the home",
        "skipped requirements/req-eeeeeeeeeeee.md: a symlink; it must be a plain file inside the home",
        "skipped requirements/req-ffffffffffff.md: a symlink; it must be a plain file inside the home",
    ]
    assert sorted(e.file for e in rix.requirements.validate()) == [
        "requirements/req-999999999999.md",
        "requirements/req-dddddddddddd.md",
        "requirements/req-eeeeeeeeeeee.md",
        "requirements/req-ffffffffffff.md",
    ]
    code, out, err = run_main(
        rix.home.path, "req", "preview", "--task", "Regenerate the manpages", "--paths", "man/x.1"
    )
    assert code == 0, err  # was 70, "internal error: IsADirectoryError"
    assert good.id in out and "warning: skipped requirements/req-dddddddddddd.md" in err
    code, _, err = run_main(rix.home.path, "req", "validate")
    assert code == 2 and "requirements/req-eeeeeeeeeeee.md: a symlink" in err


def test_a_folder_where_domains_yaml_belongs_is_an_error_not_a_crash(rix: Intently) -> None:
    good = rix.requirements.add("Keep the changelog in Keep a Changelog format.")
    (rix.home.path / "domains.yaml").mkdir()
    errors = rix.requirements.validate()
    assert [(e.file, e.message) for e in errors] == [
        ("domains.yaml", "not a regular file; it must be a plain file inside the home")
    ]
    assert rix.requirements.select("Update the changelog", record=False).ids == [good.id]
