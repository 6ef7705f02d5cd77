"""Which optional extra provides a module, so a command that needs a missing one says what to install.

The core install (``pip install intently``) holds the four engines and the CLI; the HTTP API,
the MCP server and gateway, PostgreSQL and the research embedders are extras. Without this, a
missing extra surfaced as ``internal error: ModuleNotFoundError: No module named 'uvicorn'``
(exit 70), or, for the gateway, as an upstream MCP server that "did not answer". A command
checks its extra before it starts (:func:`require`), and the CLI maps any other missing
optional module to the same one line (:func:`missing_extra`).
"""

from __future__ import annotations

import importlib.util

from .errors import IntentlyError

__all__ = ["EXTRA_MODULES", "MissingExtra", "missing_extra", "require"]

# The top-level modules each extra of pyproject.toml brings (and the ones they pull in that
# intently imports directly), so an ImportError names the extra that cures it.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "server": (
        "fastapi",
        "starlette",
        "uvicorn",
        "jinja2",
        "multipart",
        "python_multipart",
        "httpx",
        "anyio",
        "mcp",
        "mcp_types",
    ),
    "postgres": ("psycopg", "psycopg_pool"),
    "agentdojo": ("agentdojo",),
    "st": ("sentence_transformers", "torch"),
    "wordllama": ("wordllama",),
}
_EXTRA_OF: dict[str, str] = {module: extra for extra, modules in EXTRA_MODULES.items() for module in modules}


class MissingExtra(IntentlyError):
    """A feature needs an optional extra that is not installed; says which, and how to add it."""

    exit_code = 1

    def __init__(self, what: str, extra: str, module: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(
            f"{what} needs the '{extra}' extra (module {module!r} is not installed): pip install 'intently[{extra}]'"
        )


def require(what: str, extra: str, *modules: str) -> None:
    """Raise :class:`MissingExtra` unless each of ``modules`` (default: all of ``extra``'s) can be
    imported. Checked before a server starts, so nothing half-starts and fails mid-request."""
    for module in modules or EXTRA_MODULES[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a broken or half-removed install counts as missing
            found = False
        if not found:
            raise MissingExtra(what, extra, module)


def missing_extra(exc: BaseException, what: str = "this command") -> MissingExtra | None:
    """The :class:`MissingExtra` an ``ImportError`` stands for, or ``None`` when the missing module
    belongs to no extra (a broken install of a core dependency stays an internal error)."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.partition(".")[0]
    extra = _EXTRA_OF.get(top)
    return None if extra is None else MissingExtra(what, extra, top)
