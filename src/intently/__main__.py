"""``python -m intently``: the CLI, for an environment whose scripts folder is not on PATH."""

from __future__ import annotations

from intently.cli import main

if __name__ == "__main__":
    main()
