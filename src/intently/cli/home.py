"""``intently init``, ``join``, ``grant``, ``revoke``, ``grants``, ``whoami``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..access import Permission
from ..core.actors import Actor
from ..core.homedir import HOME_DIRNAME
from ._common import JsonOpt, emit, err, escape, open_home, out, state, table

if TYPE_CHECKING:
    from .._intently import Intently


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("join")(join)
    app.command("grant")(grant)
    app.command("revoke")(revoke)
    app.command("grants")(grants)
    app.command("whoami")(whoami)


def init(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="Project folder to create .intently/ in.")] = Path("."),
    name: Annotated[str | None, typer.Option(help="Default namespace (default: the folder's name).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a home: config, .gitignore, signing key, requirement folders. You become its owner.

    Where PATH already holds a home (a fresh clone of a project whose .intently/ is in git),
    this machine joins it instead, as `intently join` does.
    """
    from .._intently import Intently
    from ..core.config import Home

    st = state(ctx)
    target = Path(st.home) if st.home else path
    home = Home(target if target.name == HOME_DIRNAME else target / HOME_DIRNAME)
    if home.exists():
        _join(Intently.join(home.path, actor=st.actor), as_json)
        return
    ix = Intently.init(target, actor=st.actor, name=name)
    try:
        data = {
            "joined": False,
            "home": str(ix.home.path),
            "namespace": ix.namespace,
            "owner": str(ix.actor),
            "actor": str(ix.actor),
            "key_id": ix.log.keyring.current_key_id,
            "database": ix.log.database_id(),
        }
    finally:
        ix.close()
    emit(
        data,
        as_json,
        lambda d: out.print(
            escape(
                f"Created {d['home']} (namespace {d['namespace']}, owner {d['owner']}); commit it to git "
                "(its .gitignore keeps the database and the private key out): the tracked witness and "
                "public keys let anyone verify the log, and a teammate's clone joins this home"
            )
        ),
    )


def join(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Join the existing home from this machine (after cloning the project).

    Makes this machine's signing key (added to the tracked keys/public.json beside the
    others) and its own database, records HOME_JOINED and signs what was unsigned. The
    owner stays the one in intently.toml. Commit keys/public.json and checkpoints.json.
    """
    from .._intently import Intently
    from ..core.config import find_home

    st = state(ctx)
    _join(Intently.join(find_home(None, st.home).path, actor=st.actor), as_json)


def _join(ix: Intently, as_json: bool) -> None:
    try:
        data = {
            "joined": True,
            "home": str(ix.home.path),
            "namespace": ix.namespace,
            "owner": ix.config.home.owner,
            "actor": str(ix.actor),
            "key_id": ix.log.keyring.current_key_id,
            "database": ix.log.database_id(),
        }
        held = ix.access.permissions(ix.actor, ix.namespace)
    finally:
        ix.close()
    if not held:
        # Grants live in the database, and a joining machine's database is new (unless the
        # home shares one, [store] url): a teammate who is not the owner holds nothing in it,
        # so every command and every Claude Code tool call of theirs would be refused with
        # "namespace not found". Said at the moment it becomes true, with the way out.
        err.print(
            f"warning: {data['actor']} holds no permission in namespace {data['namespace']} of this machine's "
            f"database (grants are kept per database, and only the owner {data['owner']} holds every one): "
            f"your commands and Claude Code's tool calls here are refused until the owner grants you one "
            f"here, e.g. `intently --actor {data['owner']} grant {data['actor']} write`",
            markup=False,
            highlight=False,
        )
    emit(
        data,
        as_json,
        lambda d: out.print(
            escape(
                f"Joined {d['home']} as {d['actor']} (signing key {d['key_id']}, owner stays {d['owner']}); "
                "commit keys/public.json and checkpoints.json"
            )
        ),
    )


def grant(
    ctx: typer.Context,
    actor: Annotated[str, typer.Argument(help="Who gets it: name or kind:name.")],
    permission: Annotated[Permission, typer.Argument(help="read, write, manage-reminders or admin.")],
    as_json: JsonOpt = False,
) -> None:
    """Grant a permission in the namespace (needs admin)."""
    with open_home(ctx) as ix:
        ix.access.grant(Actor.parse(actor), permission)
        data = {"namespace": ix.namespace, "actor": str(Actor.parse(actor)), "permission": permission.value}
    emit(data, as_json, lambda d: out.print(escape(f"Granted {d['permission']} to {d['actor']} in {d['namespace']}")))


def revoke(
    ctx: typer.Context,
    actor: Annotated[str, typer.Argument(help="Whose permission to revoke.")],
    permission: Annotated[Permission, typer.Argument(help="read, write, manage-reminders or admin.")],
    as_json: JsonOpt = False,
) -> None:
    """Revoke a permission in the namespace (needs admin)."""
    with open_home(ctx) as ix:
        grantee = Actor.parse(actor)
        changed = ix.access.revoke(grantee, permission)
        data = {"namespace": ix.namespace, "actor": str(grantee), "permission": permission.value, "revoked": changed}
    emit(data, as_json, lambda d: out.print("Revoked" if d["revoked"] else "Nothing to revoke"))


def grants(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List the grants of the namespace."""
    with open_home(ctx) as ix:
        rows: list[dict[str, Any]] = ix.access.grants()
        owner = str(ix.access.owner)
    emit(
        {"owner": owner, "grants": rows},
        as_json,
        lambda d: table(
            f"Grants (owner {owner} holds all)",
            ["actor", "permission", "granted by", "at"],
            [[g["actor"], g["permission"], g["granted_by"], g["granted_at"]] for g in d["grants"]],
        ),
    )


def whoami(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Show the acting actor, namespace, home and permissions, and every namespace you may read.

    A namespace begins with its first operation, so a misspelt ``--namespace`` as the owner
    starts a new, empty one; ``namespaces`` (as in the HTTP API's ``/v1/whoami``: name ->
    permissions) is where that shows.
    """
    with open_home(ctx) as ix:
        perms = sorted(p.value for p in ix.access.permissions(ix.actor, ix.namespace))
        readable = {
            ns: sorted(p.value for p in ix.access.permissions(ix.actor, ns))
            for ns in ix.access.readable_namespaces(ix.actor)
        }
        data = {
            "actor": str(ix.actor),
            "namespace": ix.namespace,
            "home": str(ix.home.path),
            "permissions": perms,
            "namespaces": readable,
        }
    emit(data, as_json)
