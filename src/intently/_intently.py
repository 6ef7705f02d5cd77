"""The front door: :class:`Intently` opens a home and hands out its engines."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _engines
from ._runtime import Runtime
from .access import Access, Permission
from .core.actors import Actor, default_actor
from .core.clock import Clock, SystemClock, format_time
from .core.config import HOME_DIRNAME, Home, find_home
from .core.errors import InvalidInput, NotFound, StoreError
from .core.namespaces import namespace_from_folder, validate_namespace
from .log import KeyRing, OperationLog
from .store import Migration, Store, open_store

if TYPE_CHECKING:
    from .context import ContextResult
    from .extract import Extraction
    from .gate import GateEngine
    from .goals import Goals
    from .requirements import Requirements
    from .triggers import Triggers

__all__ = ["Intently"]


class Intently:
    """One home, seen by one actor in one namespace.

    ``Intently.open()`` finds the home like git finds a repository; ``Intently.init(path)``
    creates one. Use it as a context manager (or call :meth:`close`): on exit every stream
    this process appended to gets a signed checkpoint.
    """

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._closed = False
        #: What opening did to the schema: (migrations applied, operations adopted by the upgrade).
        self._upgraded: tuple[list[Migration], int] = ([], 0)

    # -- construction ---------------------------------------------------------

    @classmethod
    def open(
        cls,
        home: str | Path | None = None,
        *,
        actor: Actor | str | None = None,
        namespace: str | None = None,
        clock: Clock | None = None,
        start: Path | None = None,
        database_url: str | None = None,
    ) -> Intently:
        found = find_home(start, home)
        return cls._from_home(found, actor=actor, namespace=namespace, clock=clock, database_url=database_url)

    @classmethod
    def upgrade(
        cls,
        home: str | Path | None = None,
        *,
        actor: Actor | str | None = None,
        clock: Clock | None = None,
        start: Path | None = None,
        database_url: str | None = None,
    ) -> tuple[list[Migration], int]:
        """Apply the home's pending schema upgrades (``intently store upgrade``, for homes with
        ``[store] auto_upgrade = false``); returns (the migrations applied, the operations adopted).

        It is the path opening a home takes when it upgrades on its own, not a second one: the
        command used to open only the store, so the upgrade that makes operations carry
        signatures loaded no key and adopted nothing, and what an older intently had left
        unsigned stayed unattributed (every later command exited 8) where the automatic upgrade
        signs it on the record (``LOG_ADOPTED``, reason ``upgrade``)."""
        ix = cls._from_home(
            find_home(start, home), actor=actor, namespace=None, clock=clock, database_url=database_url, upgrade=True
        )
        ix.close()
        return ix._upgraded

    @classmethod
    def init(
        cls,
        project: str | Path,
        *,
        actor: Actor | str | None = None,
        name: str | None = None,
        clock: Clock | None = None,
        database_url: str | None = None,
    ) -> Intently:
        """Create ``<project>/.intently`` (or ``project`` itself if it is named ``.intently``).

        Where the home already exists (a clone of a project whose ``.intently/`` is in git),
        this machine joins it instead: see :meth:`join`.
        """
        path = Path(project).expanduser().resolve()
        home = Home(path if path.name == HOME_DIRNAME else path / HOME_DIRNAME)
        if home.exists():
            return cls.join(home.path, actor=actor, clock=clock, database_url=database_url)
        owner = _actor(actor)
        ns = validate_namespace(name) if name else namespace_from_folder(home.project_root.name)
        existed = home.path.exists()
        home.create(name=ns, owner=str(owner))
        clk = clock or SystemClock()
        ring = KeyRing([])
        ring.generate(format_time(clk.now()))
        ring.save(home.keys_dir)
        ix = cls._from_home(home, actor=owner, namespace=ns, clock=clk, database_url=database_url)
        with ix.store.transaction() as tx:
            # A shared database that already holds a home is joined, never initialised again:
            # a second HOME_INIT would make a second owner of the same rows, signing with a key
            # the first home's keyring does not know (its log verify would fail).
            taken = tx.scalar("SELECT target FROM log_ops WHERE op = 'HOME_INIT' ORDER BY time LIMIT 1")
            if taken is None:
                ix.log.append(
                    tx,
                    namespace=ns,
                    actor=str(owner),
                    op="HOME_INIT",
                    target=ns,
                    payload={"owner": str(owner), "key_id": ring.current_key_id, "origin": ix.config.home.origin},
                    policy_version="intently@init",
                )
        if taken is not None:
            url = ix.store.url
            ix.close()
            if not existed:  # created above, by this call: nothing else is in it
                shutil.rmtree(home.path, ignore_errors=True)
            raise InvalidInput(
                f"the database {url} already holds the home {str(taken)!r}: clone that project and run "
                "`intently init` (or `intently join`) in the clone to join it, or give this home a database "
                "of its own",
                where="database_url",
            )
        ix.checkpoint()
        return ix

    @classmethod
    def join(
        cls,
        home: str | Path,
        *,
        actor: Actor | str | None = None,
        clock: Clock | None = None,
        database_url: str | None = None,
    ) -> Intently:
        """Join an existing home from this machine (a fresh clone): make this machine's own
        signing key (added to the tracked keyring beside the others), open or create its
        database, append HOME_JOINED and sign every unsigned operation. Ownership does not
        change. Refuses when this machine already signs for the home."""
        found = find_home(None, home)
        if not found.exists():
            raise NotFound(f"no {found.config_path.name} in {found.path}; run `intently init` to create a home")
        for folder in (found.state_dir, found.private_keys_dir, found.index_dir):
            folder.mkdir(parents=True, exist_ok=True)
        os.chmod(found.private_keys_dir, 0o700)
        joiner = _actor(actor)
        ix = cls._from_home(found, actor=joiner, namespace=None, clock=clock, database_url=database_url)
        try:
            ring = ix.log.keyring
            if ring.can_sign:
                raise InvalidInput(
                    f"a home already exists at {found.path} and this machine signs its log (key {ring.current_key_id})",
                    where=str(found.config_path),
                )
            key_id = ring.generate(format_time(ix.runtime.clock.now()))
            found.ensure_gitattributes()  # before the keyring changes: concurrent joins merge by union
            ring.save(found.keys_dir)
            ns = ix.config.home.name
            with ix.store.transaction() as tx:
                ix.log.append(
                    tx,
                    namespace=ns,
                    actor=str(joiner),
                    op="HOME_JOINED",
                    target=ns,
                    payload={"actor": str(joiner), "key_id": key_id, "owner": ix.config.home.owner},
                    policy_version="intently@init",
                )
            # Every stream: operations appended here before joining carry no signature, and
            # joining is where this machine vouches for them (recorded as LOG_ADOPTED).
            ix.log.checkpoint(adopt=str(joiner))
        except BaseException:
            ix.store.close()
            raise
        return ix

    @classmethod
    def _from_home(
        cls,
        home: Home,
        *,
        actor: Actor | str | None,
        namespace: str | None,
        clock: Clock | None,
        database_url: str | None = None,
        upgrade: bool = False,
    ) -> Intently:
        """Open ``home``'s store, upgrading its schema when ``[store] auto_upgrade`` is on or
        ``upgrade`` asks (:meth:`upgrade`), and build the handle."""
        config = home.load_config()
        store = open_store(database_url or home.database_url(config), group_commit=config.log.group_commit)
        applied: list[Migration] = []
        before_signatures: dict[str, int] = {}
        try:
            if store.current_versions() != _engines.SCHEMA_VERSIONS:
                _load_engines()  # something to create, upgrade or refuse: the full registry decides
                store.check_not_newer()
                if upgrade or config.store.auto_upgrade:
                    applied, before_signatures = _apply_upgrades(store)
                else:
                    pending = [s for s in store.schema_status() if s.pending]
                    if pending:
                        raise StoreError("the database needs a schema upgrade; run `intently store upgrade`")
        except BaseException:
            store.close()
            raise
        clk = clock or SystemClock()
        log = OperationLog(
            store,
            clock=clk,
            keyring=KeyRing.load(home.keys_dir),
            origin=config.home.origin or f"intently/{config.home.name}",
            witness_path=home.witness_path,
            keys_dir=home.keys_dir,
        )
        runtime = Runtime(
            home=home,
            config=config,
            store=store,
            log=log,
            clock=clk,
            actor=_actor(actor),
            namespace=validate_namespace(namespace or config.home.name),
        )
        adopted = 0
        if before_signatures:  # this process made operations carry signatures: sign what came before
            try:
                adopted = log.adopt_written_before_signatures(before_signatures, actor=str(runtime.actor))
            except BaseException:
                store.close()
                raise
        ix = cls(runtime)
        ix._upgraded = (applied, adopted)
        return ix

    def as_actor(self, actor: Actor | str) -> Intently:
        """The same home seen by another actor (for servers mapping tokens to actors)."""
        return type(self)(self._rt.with_actor(_actor(actor)))

    def in_namespace(self, namespace: str) -> Intently:
        return type(self)(self._rt.with_namespace(validate_namespace(namespace)))

    # -- wiring ---------------------------------------------------------------

    @property
    def runtime(self) -> Runtime:
        return self._rt

    @property
    def home(self) -> Home:
        return self._rt.home

    @property
    def store(self) -> Store:
        return self._rt.store

    @property
    def log(self) -> OperationLog:
        return self._rt.log

    @property
    def actor(self) -> Actor:
        return self._rt.actor

    @property
    def namespace(self) -> str:
        return self._rt.namespace

    @property
    def config(self) -> Any:
        return self._rt.config

    @cached_property
    def access(self) -> Access:
        return Access(self._rt)

    # -- engines (each imported on first use) ---------------------------------

    @cached_property
    def goals(self) -> Goals:
        """Goals, commitments, open questions, decisions in progress, risks, follow-ups."""
        from .goals import Goals

        if self._rt.config.goals.semantic:
            from .embed import get_embedder

            return Goals(self._rt, embedder=get_embedder(self._rt.config.embed.model))
        return Goals(self._rt)

    @cached_property
    def triggers(self) -> Triggers:
        """Standing intents: "when X comes up, remind me to Y"."""
        from .triggers import Triggers

        return Triggers(self._rt)

    @cached_property
    def requirements(self) -> Requirements:
        """Durable project rules, selected per task under a token budget."""
        from .requirements import Requirements

        return Requirements(self._rt, embedder=os.environ.get("INTENTLY_EMBEDDER") or self._rt.config.embed.model)

    @cached_property
    def gate(self) -> GateEngine:
        """The tool-call gate bound to this home's log."""
        from .gate import GateEngine

        return GateEngine(self._rt)

    @cached_property
    def extraction(self) -> Extraction:
        """Turns conversation into candidate intents for review."""
        from .extract import Extraction

        return Extraction(self._rt)

    def context(
        self,
        query: str,
        *,
        session: str | None = None,
        channel: str | None = None,
        sender: str | None = None,
        paths: str | Sequence[str] = (),
        budget: int | None = None,
        fire: bool = True,
        conversation: str | None = None,
    ) -> ContextResult:
        """The one bounded block an agent is given before a model call: the requirements for
        this step, the goals bundle with its mandatory risks, and the standing intents that fire
        on this turn, each in its own delimited section (see :mod:`intently.context`). ``channel``,
        ``conversation`` and ``sender`` place the turn for the standing intents' scopes. ``paths``
        lists the files the step touches (one bare string is one path); ``fire=False`` is a
        preview that records nothing."""
        from .context import assemble

        return assemble(
            self,
            query,
            session=session,
            channel=channel,
            conversation=conversation,
            sender=sender,
            paths=paths,
            budget=budget,
            fire=fire,
        )

    def require(self, permission: Permission, namespace: str | None = None) -> None:
        self.access.require(self._rt.actor, namespace or self._rt.namespace, permission)

    # -- lifecycle ------------------------------------------------------------

    def checkpoint(self) -> int:
        """Sign checkpoints for the streams this process appended to; returns how many."""
        return len(self._rt.log.checkpoint_dirty())

    def close(self) -> None:
        """Sign what this handle wrote, then close the store; later calls raise ``StoreError``
        (a write after close would be one no checkpoint covers). Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            self.checkpoint()
        finally:
            self._rt.store.close()

    def __enter__(self) -> Intently:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Intently(home={str(self._rt.home.path)!r}, actor={str(self._rt.actor)!r}, namespace={self.namespace!r})"
        )


def _apply_upgrades(store: Store) -> tuple[list[Migration], dict[str, int]]:
    """Apply every pending migration; returns them, and each stream's size bounding the rows
    an older intently appended unsigned when this call is the one that made operations carry
    signatures (read before it, see :func:`~intently.log._oplog.unsigned_before_upgrade`),
    else nothing: another process that upgraded first adopted them, or none were left."""
    from .log._oplog import SIGNED_OPERATIONS_SCHEMA, unsigned_before_upgrade

    before_signatures = unsigned_before_upgrade(store)
    applied = store.upgrade()
    if not any(m.component == "log" and m.version == SIGNED_OPERATIONS_SCHEMA for m in applied):
        before_signatures = {}  # another process upgraded it first: not ours to adopt
    return applied, before_signatures


def _actor(actor: Actor | str | None) -> Actor:
    if actor is None:
        return default_actor()
    return actor if isinstance(actor, Actor) else Actor.parse(actor)


def _load_engines() -> None:
    """Import every engine so its migrations and log appliers are registered."""
    _engines.load()
