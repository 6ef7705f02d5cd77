"""Pytest plugin: run store-facing tests on SQLite and on a throwaway PostgreSQL cluster.

``INTENTLY_TEST_BACKENDS`` (comma separated, default ``sqlite``; CI sets
``sqlite,postgresql``) parametrizes the ``backend`` and ``database_url`` fixtures.
``database_url`` is ``None`` on SQLite (the home's own file) and a fresh, already migrated
PostgreSQL database per test otherwise.

The cluster is started once per session from the preinstalled binaries (``initdb`` +
``pg_ctl``) in a temp dir on a free port, and stopped at the end whatever the outcome:
fixture finalizer, and an ``atexit`` hook for Ctrl-C and crashes. When it cannot start, the
tests that need it fail with the reason; they are never skipped.
``INTENTLY_TEST_PG_URL`` points the tests at an existing server instead (the role needs
CREATEDB); ``INTENTLY_PG_BIN`` names the folder holding ``initdb`` and ``pg_ctl``.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BACKENDS_ENV = "INTENTLY_TEST_BACKENDS"
KNOWN_BACKENDS = ("sqlite", "postgresql")
TEMPLATE_DB = "intently_template"


def selected_backends() -> list[str]:
    """The backends ``INTENTLY_TEST_BACKENDS`` asks for (default: sqlite only)."""
    raw = os.environ.get(BACKENDS_ENV, "sqlite")
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in KNOWN_BACKENDS]
    if unknown or not names:
        raise pytest.UsageError(f"{BACKENDS_ENV}={raw!r}: choose from {', '.join(KNOWN_BACKENDS)}")
    return names


def _pg_bin() -> Path:
    explicit = os.environ.get("INTENTLY_PG_BIN")
    installed = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_major_version, reverse=True)
    candidates = [explicit] if explicit else installed
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise RuntimeError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found; install postgresql, set INTENTLY_PG_BIN, "
        f"or run with {BACKENDS_ENV}=sqlite"
    )


def _major_version(bindir: str) -> int:
    """``/usr/lib/postgresql/15/bin`` -> 15 (so 15 sorts after 9.6)."""
    version = Path(bindir).parent.name.split(".")[0]
    return int(version) if version.isdigit() else 0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PgCluster:
    """A running PostgreSQL server the tests may create databases in."""

    admin_url: str
    host: str
    port: int
    user: str
    stop: Callable[[], None] = field(repr=False)
    _counter: Iterator[int] = field(default_factory=itertools.count, repr=False)

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        """Run one statement outside a transaction (CREATE/DROP DATABASE)."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.encode())

    def create_database(self, *, template: str | None = TEMPLATE_DB) -> str:
        """A fresh database (a copy of the migrated template by default); returns its URL."""
        name = f"t{os.getpid()}_{next(self._counter)}"
        # FILE_COPY (PostgreSQL 15+) copies the template's files: about twice as fast as
        # WAL-logging every page of it, and durability does not matter here.
        source = f"TEMPLATE {template} STRATEGY FILE_COPY" if template else "TEMPLATE template0"
        self.admin(f"CREATE DATABASE {name} {source} ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _as_postgres(argv: list[str]) -> list[str]:
    """initdb refuses to run as root: run the server as the ``postgres`` OS user then."""
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


def start_cluster(*, durable: bool = False) -> PgCluster:
    """initdb + pg_ctl start in a temp dir on a free port; raises RuntimeError with the reason.

    Tests run without fsync (nothing here must survive a crash); ``durable=True`` keeps
    PostgreSQL's defaults, for measurements fair to SQLite's ``synchronous=FULL``.
    """
    external = os.environ.get("INTENTLY_TEST_PG_URL")
    if external:
        import psycopg.conninfo

        info = psycopg.conninfo.conninfo_to_dict(external)
        return PgCluster(
            external,
            str(info.get("host", "localhost")),
            int(info.get("port", 5432) or 5432),
            str(info.get("user", "postgres")),
            stop=lambda: None,
        )
    bindir = _pg_bin()
    root = Path(tempfile.mkdtemp(prefix="intently-pg-"))
    data, log = root / "data", root / "server.log"
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    stopped = False

    def run(argv: list[str], what: str) -> None:
        proc = subprocess.run(_as_postgres(argv), capture_output=True, text=True, timeout=120, check=False)
        if proc.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{what} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}\n{tail}"
            )

    def stop() -> None:
        nonlocal stopped
        if stopped:
            return
        stopped = True
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                capture_output=True,
                timeout=60,
                check=False,
            )
        shutil.rmtree(root, ignore_errors=True)

    atexit.register(stop)
    try:
        run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            "initdb",
        )
        options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root} -c max_connections=200"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start"],
            "pg_ctl start",
        )
    except BaseException:
        stop()
        raise
    admin = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    return PgCluster(admin, "127.0.0.1", port, "postgres", stop=stop)


def build_template(cluster: PgCluster) -> None:
    """Create the template database and apply every registered migration to it once."""
    from intently._intently import _load_engines
    from intently.store import open_store

    _load_engines()
    cluster.admin(f"DROP DATABASE IF EXISTS {TEMPLATE_DB}")
    cluster.admin(f"CREATE DATABASE {TEMPLATE_DB} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
    store = open_store(cluster.url(TEMPLATE_DB))
    try:
        store.upgrade()
    finally:
        store.close()


def _stop_on_sigterm() -> None:
    """Treat SIGTERM (CI timeouts, ``kill``) like Ctrl-C, so fixture teardown stops the server."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, signal.default_int_handler)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """The session's PostgreSQL server, with a migrated template database."""
    _stop_on_sigterm()
    try:
        cluster = start_cluster()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"cannot start the throwaway PostgreSQL cluster: {exc}", pytrace=False)
    try:
        build_template(cluster)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_database(pg_cluster: PgCluster) -> Iterator[str]:
    """URL of a fresh, migrated PostgreSQL database, dropped after the test."""
    url = pg_cluster.create_database()
    yield url
    pg_cluster.drop_database(url)


def use_database(home: Path, url: str) -> None:
    """Write ``url`` into the home's ``[store] url``, so every process that opens the home
    (CLI subprocesses with a scrubbed environment included) uses that database."""
    from intently.core.config import Home

    config = Home(home).config_path
    text = config.read_text(encoding="utf-8")
    line = re.compile(r'^url = ""$', re.MULTILINE).search(text, text.index("[store]"))
    if line is not None:
        config.write_text(text[: line.start()] + f'url = "{url}"' + text[line.end() :], encoding="utf-8")
    if Home(home).load_config().store.url != url:
        raise RuntimeError(f"could not point {config} at {url}")


@pytest.fixture(params=selected_backends())
def backend(request: pytest.FixtureRequest) -> str:
    """The backend under test: ``sqlite`` or ``postgresql`` (see ``INTENTLY_TEST_BACKENDS``)."""
    return str(request.param)


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """``None`` on SQLite (the home's own file), else a fresh migrated PostgreSQL database."""
    if backend == "sqlite":
        return None
    return str(request.getfixturevalue("pg_database"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only: the test works on the SQLite file itself (tampering, file copies); "
        "its PostgreSQL variant is not generated",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the PostgreSQL variant of tests marked ``sqlite_only`` (they edit the SQLite file
    as an attacker would, which has no PostgreSQL equivalent), and say how many."""
    kept: list[pytest.Item] = []
    dropped = 0
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_pg = callspec is not None and callspec.params.get("backend") == "postgresql"
        if on_pg and item.get_closest_marker("sqlite_only") is not None:
            dropped += 1
            continue
        kept.append(item)
    if dropped:
        items[:] = kept
        config.stash[_DROPPED] = dropped


_DROPPED = pytest.StashKey[int]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    dropped = config.stash.get(_DROPPED, 0)
    if dropped:
        terminalreporter.write_line(f"{dropped} SQLite-file tests have no PostgreSQL variant (marked sqlite_only)")
