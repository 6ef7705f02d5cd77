"""Whether a folder's file system tells names apart by case: decided by looking, per folder.

A protected path and a path differing from it only in case are one file on Windows and macOS,
a Windows drive under WSL, a FAT or exFAT stick and an ext4 folder with casefolding on, and two
files on a Linux file system otherwise. Which one a project is on cannot be told from a path,
so the gate looks: in the folder a protected path lies in (or its nearest folder that exists),
it stats a name it holds with its case swapped. The same file: the file system folds case. No
such file, or another one: it does not. Nothing the probe can read (no folder, no name with a
letter, an error) fails closed: case is folded, so a case variant of a protected path stays
protected. The answer is kept per folder (ext4 decides casefolding per folder).
"""

from __future__ import annotations

import functools
import os

__all__ = ["folds_case"]

# How many names of a folder are tried for one with letters before the probe gives up.
_NAMES_TRIED = 64


def folds_case(root: str | None, path: str) -> bool:
    """Whether case may not tell ``path`` (relative to ``root``, the folder the agent works in,
    or absolute) from a path differing only in case: ``True`` unless the file system of the
    folder it lies in (its nearest existing one) is seen to tell case apart. ``root`` ``None``
    (no folder known): ``True``."""
    if root is None:
        return True
    text = path.strip().strip("`'\"").replace("\\", "/")
    full = os.path.normpath(text if os.path.isabs(text) else os.path.join(root, text))
    folder = os.path.dirname(full)
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return True
        folder = parent
    return _folder_folds(os.path.realpath(folder))


@functools.lru_cache(maxsize=1024)
def _folder_folds(folder: str) -> bool:
    """Whether ``folder``'s file system folds case: a name in it, case swapped, is the same file."""
    candidates = [os.path.basename(folder)]  # the folder's own name, looked up in its parent
    try:
        with os.scandir(folder) as names:
            for n, entry in enumerate(names):
                if n >= _NAMES_TRIED:
                    break
                candidates.insert(n, entry.name)
    except OSError:
        pass
    for k, name in enumerate(candidates):
        swapped = name.swapcase()
        if swapped == name:
            continue  # no letter to swap ("2024", "__init__.py" has letters: it is tried)
        own = os.path.join(folder, name) if k < len(candidates) - 1 else folder
        other = os.path.join(os.path.dirname(own), swapped)
        try:
            a = os.lstat(own)
        except OSError:
            continue  # gone since it was listed
        try:
            b = os.lstat(other)
        except FileNotFoundError:
            return False  # the swapped name is no file: case tells them apart
        except OSError:
            continue
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
    return True  # nothing to tell by: fold (fail closed)
