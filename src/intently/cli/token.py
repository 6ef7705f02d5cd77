"""``intently token create|list|revoke``: bearer tokens for the HTTP API, mapped to actors."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..core.actors import Actor
from ..server import TokenStore  # light: registers the token operations' appliers for every CLI process
from ._common import JsonOpt, emit, err, open_home, out, table

token_app = typer.Typer(help="Bearer tokens for `intently serve` (stored hashed; creation is logged).")


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.add_typer(token_app, name="token", no_args_is_help=True)


@token_app.command("create")
def create(
    ctx: typer.Context,
    actor: Annotated[str, typer.Option("--actor", help="Who the token acts as: name or kind:name.")],
    label: Annotated[str, typer.Option(help="A note to recognise the token by.")] = "",
    expires: Annotated[
        str | None, typer.Option(help="Refuse the token after this long (8h, 30d); default: until revoked.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a token for ACTOR (needs admin; for an actor other than yourself, the home's owner).
    The token is printed once and never stored."""
    with open_home(ctx) as ix:
        issued = TokenStore(ix).create(actor, label=label, expires=expires)
        data = issued.to_json()
        # A token carries its actor's grants and nothing else: for an actor granted nothing yet
        # (a new agent, a teammate) every request answers 404, worded as "not found" so as not
        # to leak which namespaces exist. Said here, where the fix is one command away.
        holder = Actor.parse(str(data["actor"]))
        readable = ix.access.readable_namespaces(holder)
        namespace = ix.namespace
    if not readable:
        err.print(
            f"warning: {holder} holds no permission in any namespace, so this token reads nothing "
            f"(every request answers 404) until you grant one: `intently grant {holder} read` "
            f"(or write) in namespace {namespace}",
            markup=False,
            highlight=False,
        )

    def render(d: Any) -> None:
        out.print(d["token"], markup=False, highlight=False)
        until = f", valid until {d['expires_at']}" if d.get("expires_at") else ""
        err.print(f"token {d['id']} for {d['actor']}{until}: shown once; keep it secret")

    emit(data, as_json, render)


@token_app.command("list")
def list_tokens(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List the namespace's tokens (ids and actors; never the tokens)."""
    with open_home(ctx) as ix:
        rows = [t.to_json() for t in TokenStore(ix).list()]

    def render(d: list[dict[str, Any]]) -> None:
        table(
            "Tokens",
            ["id", "actor", "label", "created by", "created", "expires", "revoked"],
            [
                [
                    t["id"],
                    t["actor"],
                    t["label"],
                    t["created_by"],
                    t["created_at"],
                    t["expires_at"] or "",
                    t["revoked_at"] or ("refused" if t.get("refused") else ""),
                ]
                for t in d
            ],
        )
        # A token an older intently let an admin make for someone else looks live but is
        # refused (see TokenStore._created_by_rightful): say so, and what to do.
        for t in d:
            if t.get("refused"):
                err.print(f"token {t['id']}: {t['refused']}", markup=False, highlight=False)

    emit(rows, as_json, render)


@token_app.command("revoke")
def revoke(
    ctx: typer.Context,
    token_id: Annotated[str, typer.Argument(help="The token's id (from `intently token list`).")],
    as_json: JsonOpt = False,
) -> None:
    """Revoke a token; requests with it get 401 from then on."""
    with open_home(ctx) as ix:
        info = TokenStore(ix).revoke(token_id)
    emit(info.to_json(), as_json, lambda d: out.print(f"Revoked {d['id']} ({d['actor']})"))
