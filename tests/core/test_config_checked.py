"""``intently.toml`` is checked by pydantic once per text, and read back by the processes after.

Every hook process opens the home; importing pydantic and building its validators cost it more
than the gate's decision. So the values pydantic gave for a text are kept in ``state/`` under a
digest of that text and of the checking code, and a later process reads them back without
pydantic. These tests drive real homes on disk and real child processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from intently import Intently, InvalidInput
from intently.core.config import CHECKED_CONFIG

OPEN_IN_A_NEW_PROCESS = """
import json, sys
from pathlib import Path
from intently.core.config import Home
config = Home(Path(sys.argv[1])).load_config()
print(json.dumps({"pydantic": "pydantic" in sys.modules, "budget": config.context.budget,
                  "group_commit": config.log.group_commit, "hooks": config.extra.get("hooks")}))
"""


def _open_elsewhere(home: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_IN_A_NEW_PROCESS, str(home)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_checked_config_opens_in_a_new_process_without_pydantic(ix: Intently) -> None:
    """The values come back as pydantic gave them (text read as a number or a boolean), and the
    engine tables, which their engines check, are read from the file itself."""
    _edit(ix.home.config_path, "budget = 4000", 'budget = "4200"')
    _edit(ix.home.config_path, "group_commit = false", 'group_commit = "yes"')
    _edit(ix.home.config_path, "server = false", "server = true")
    ix.home.load_config()  # checks the edited text (with pydantic), as any command would
    seen = _open_elsewhere(ix.home.path)
    assert seen["pydantic"] is False
    assert (seen["budget"], seen["group_commit"]) == (4200, True)
    assert seen["hooks"] is not None and seen["hooks"]["server"] is True  # type: ignore[index]


def test_an_edit_after_a_check_is_checked_again(ix: Intently) -> None:
    """A value kept for the old text never stands for a new one: a bad edit is refused at its
    line, a good one is read, in this process and in the next."""
    ix.home.load_config()
    assert (ix.home.state_dir / CHECKED_CONFIG).is_file()
    _edit(ix.home.config_path, "budget = 4000", "budget = 10")
    with pytest.raises(InvalidInput, match=r"intently\.toml:\d+: context\.budget: Input should be greater"):
        ix.home.load_config()
    done = subprocess.run(
        [sys.executable, "-c", OPEN_IN_A_NEW_PROCESS, str(ix.home.path)], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "context.budget" in done.stderr
    _edit(ix.home.config_path, "budget = 10", "budget = 5000")
    assert ix.home.load_config().context.budget == 5000
    assert _open_elsewhere(ix.home.path)["budget"] == 5000


@pytest.mark.parametrize(
    "kept",
    [
        "not json at all",
        json.dumps({"key": "0" * 64, "tables": {"context": {"budget": 9999}}}),  # another text's values
        json.dumps({"key": None}),
        "[]",
    ],
)
def test_a_kept_check_that_does_not_fit_is_checked_again(ix: Intently, kept: str) -> None:
    ix.home.load_config()
    cache = ix.home.state_dir / CHECKED_CONFIG
    key = json.loads(cache.read_text(encoding="utf-8"))["key"]
    cache.write_text(kept.replace("0" * 64, "f" * 64 if key == "0" * 64 else "0" * 64), encoding="utf-8")
    assert ix.home.load_config().context.budget == 4000
    assert json.loads(cache.read_text(encoding="utf-8"))["key"] == key  # and kept again


def test_a_kept_check_with_the_right_key_but_the_wrong_fields_is_checked_again(ix: Intently) -> None:
    ix.home.load_config()
    cache = ix.home.state_dir / CHECKED_CONFIG
    kept = json.loads(cache.read_text(encoding="utf-8"))
    kept["tables"]["context"] = {"budgte": 1}
    cache.write_text(json.dumps(kept), encoding="utf-8")
    assert ix.home.load_config().context.budget == 4000


def test_a_home_whose_state_cannot_be_written_still_opens(ix: Intently, tmp_path: Path) -> None:
    """The kept check is a speed-up only: a state folder that is a file costs the next
    process the check, not its config."""
    ix.home.load_config()
    (ix.home.state_dir / CHECKED_CONFIG).unlink()
    _edit(ix.home.config_path, "budget = 4000", "budget = 4100")
    blocked = ix.home.state_dir / CHECKED_CONFIG
    blocked.mkdir()  # a folder in the way of the file
    assert ix.home.load_config().context.budget == 4100
    assert blocked.is_dir()


def test_an_unknown_key_in_a_core_table_names_the_known_ones(ix: Intently) -> None:
    """Said as the engine tables say it (pydantic's own words for a dataclass were 'Unexpected
    keyword argument'), so a typo shows what was meant."""
    _edit(ix.home.config_path, "[triggers]\n", "[triggers]\nmax_show = 5\n")
    with pytest.raises(InvalidInput) as info:
        ix.home.load_config()
    text = ix.home.config_path.read_text(encoding="utf-8")
    line = text.splitlines().index("max_show = 5") + 1
    assert str(info.value) == (
        f"{ix.home.config_path}:{line}: triggers.max_show: unknown key (known: max_shown, max_chars)"
    )


def test_a_core_table_written_as_a_value_is_refused_as_not_a_table(ix: Intently) -> None:
    path = ix.home.config_path
    text = path.read_text(encoding="utf-8")
    path.write_text('log = "fast"\n' + text[: text.index("[log]")] + text[text.index("[context]") :], encoding="utf-8")
    with pytest.raises(InvalidInput) as info:
        ix.home.load_config()
    assert str(info.value) == f"{path}: log: must be a table"
