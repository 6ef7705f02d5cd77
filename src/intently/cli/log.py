"""``intently log show|verify|proof|consistency|replay|checkpoint|rotate-key|repair|quarantine``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..access import Permission
from ..core.errors import InvalidInput, LogIntegrityError, NotFound, RootMismatch
from ..store import open_store
from ._common import JsonOpt, emit, open_home, out, progress_bar, table

if TYPE_CHECKING:  # the log (and its cryptography) loads in the commands, not for `intently --help`
    from ..log import KeyRing, RepairReport

log_app = typer.Typer(help="The tamper-evident operation log.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(log_app, name="log")


@log_app.command("show")
def show(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=0, help="How many operations, newest first.")] = 20,
    op: Annotated[str | None, typer.Option(help="Only this op type.")] = None,
    target: Annotated[str | None, typer.Option(help="Only operations on this target id.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show recent operations of the namespace's stream."""
    with open_home(ctx) as ix:
        ix.require(Permission.READ)
        ops = ix.log.read(ix.namespace, limit=limit, op=op, target=target, newest_first=True)
    data = [o.to_json() for o in ops]
    emit(
        data,
        as_json,
        lambda d: table(
            f"Operations in {ix.namespace}",
            ["seq", "time", "actor", "op", "target", "payload"],
            [[o["seq"], o["time"], o["actor"], o["op"], o["target"], json.dumps(o["payload"])[:80]] for o in d],
        ),
    )


@log_app.command("verify")
def verify(
    ctx: typer.Context,
    strict: Annotated[bool, typer.Option(help="Also fail on operations no checkpoint covers yet.")] = False,
    witness: Annotated[
        Path | None,
        typer.Option(
            help="Check against this copy of checkpoints.json instead of the home's (e.g. the pushed one, "
            "from `git show origin/main:.intently/checkpoints.json`)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Recompute every leaf, tree and signature; exit 0 only when all check.

    The owner verifies every stream; anyone else the streams they may read.
    """
    from ..log import NO_KEY_HINT

    with open_home(ctx) as ix:
        streams = None if ix.access.is_owner(ix.actor) else ix.access.readable_namespaces(ix.actor)
        if streams is not None and not streams:
            # Checking nothing is not a pass: a CI job running as a misspelt or ungranted
            # actor would otherwise be told the log verifies (exit 0) without one leaf read.
            raise NotFound(f"{ix.actor} may read no namespace, so there is no stream to verify")
        total = sum(ix.log.size(s) for s in (streams or ix.log.streams()))
        with progress_bar("verifying", total) as bar:
            report = ix.log.verify(streams, progress=bar.advance, witness_file=witness)
    data = report.to_json()
    failed = [s for s in report.streams if not s.ok or (strict and s.unsigned_tail)]

    def render(_: object) -> None:
        table(
            f"Log verification (database {report.database or 'without id: never signed'})",
            ["stream", "ok", "size", "checkpoints", "witnessed", "unsigned", "unattributed", "error"],
            [
                [
                    s.stream,
                    "yes" if s.ok else "NO",
                    s.size,
                    s.checkpoints,
                    s.witnessed_size,
                    s.unsigned_tail,
                    s.unattributed,
                    s.error,
                ]
                for s in report.streams
            ],
        )
        for s in report.streams:
            if s.repairs:
                out.print(
                    f"stream {s.stream}: {s.repairs} repair(s) of its unsigned tail recorded "
                    "(`intently log show --op LOG_REPAIRED`)"
                )
        if report.other_databases:
            table(
                "Witnessed checkpoints of other databases (other clones: signature checked, tree not checkable here)",
                ["database", "stream", "size", "key", "signature", "error"],
                [[o.database, o.stream, o.size, o.key_id, o.signature, o.error] for o in report.other_databases],
            )

    emit(data, as_json, render)
    broken: list[tuple[str | None, str]] = [(s.error_type, s.error) for s in failed if s.error is not None]
    broken += [(o.error_type, o.error) for o in report.other_databases if o.error is not None]
    # Raised, not typer.Exit: the one error handler prints it as one line and exits 8.
    if broken:
        raise LogIntegrityError(f"log does not verify ({broken[0][0]}): {broken[0][1]}")
    if failed:
        first = failed[0]
        hint = "" if ix.log.keyring.can_sign else f"; {NO_KEY_HINT}"
        raise LogIntegrityError(
            f"stream {first.stream!r}: {first.unsigned_tail} operation(s) after seq "
            f"{first.size - first.unsigned_tail} no checkpoint covers{hint}"
        )


@log_app.command("proof")
def proof(
    ctx: typer.Context,
    seq: Annotated[int, typer.Argument(help="Sequence number of the operation.")],
    size: Annotated[int | None, typer.Option(help="Tree size (default: the latest checkpoint).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Inclusion proof of one operation in the signed tree; checked before it is printed."""
    from ..log import verify_inclusion_proof

    with open_home(ctx) as ix:
        ix.require(Permission.READ)
        data = ix.log.inclusion_proof(ix.namespace, seq, size)
        cp = ix.log.latest_checkpoints().get(ix.namespace)
    verify_inclusion_proof(data)
    if cp is not None and cp.size == data["tree_size"] and cp.root.hex() != data["root"]:
        raise RootMismatch("the signed checkpoint's root is not the proof's root", stream=cp.stream, seq=cp.size)
    data["verified"] = True
    data["checkpoint"] = cp.to_json() if cp and cp.size == data["tree_size"] else None
    emit(data, as_json)


@log_app.command("consistency")
def consistency(
    ctx: typer.Context,
    old_size: Annotated[int, typer.Argument(help="The older tree size.")],
    new_size: Annotated[int | None, typer.Argument(help="The newer tree size (default: current).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Consistency proof that the tree at OLD_SIZE is a prefix of the tree at NEW_SIZE.

    Carries the signed checkpoints of both sizes where they exist, so that `intently log
    verify-proof` can check it with the public keyring alone."""
    from ..log import verify_consistency_proof

    with open_home(ctx) as ix:
        ix.require(Permission.READ)
        data = ix.log.consistency_proof(ix.namespace, old_size, new_size)
        old_cp = ix.log.checkpoint_at(ix.namespace, data["old_size"])
        new_cp = ix.log.checkpoint_at(ix.namespace, data["new_size"])
    verify_consistency_proof(data)
    data["verified"] = True
    data["old_checkpoint"] = old_cp.to_json() if old_cp else None
    data["new_checkpoint"] = new_cp.to_json() if new_cp else None
    emit(data, as_json)


@log_app.command("checkpoint")
def checkpoint(
    ctx: typer.Context,
    adopt: Annotated[
        bool,
        typer.Option(
            help="Also sign operations that carry no signature of their own (appended where no key was loaded, "
            "or behind the log's back): you vouch for them, recorded as a LOG_ADOPTED operation. Check them "
            "with `intently log show` first. A signature that fails is never adopted."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Sign a checkpoint for every stream that grew (commands do this on their own)."""
    with open_home(ctx) as ix:
        ix.require(Permission.ADMIN)
        made = ix.log.checkpoint(adopt=str(ix.actor) if adopt else None)
    emit([c.to_json() for c in made], as_json, lambda d: out.print(f"{len(d)} checkpoint(s) signed"))


@log_app.command("repair")
def repair(
    ctx: typer.Context,
    stream: Annotated[
        str | None,
        typer.Option(help="Only this stream (default: every stream you own, or the namespace you administer)."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be set aside; change nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Set aside operations after the last checkpoint that no key vouches for (missing,
    edited or written behind the log's back), so checkpoints resume.

    Nothing is deleted or hidden: each such row moves to the log_quarantine table, a signed
    LOG_QUARANTINED operation takes its sequence number, and a LOG_REPAIRED operation records
    the repair. Signed history is never touched: damage there is refused (exit 8). To vouch
    for operations that carry no signature instead, run `intently log checkpoint --adopt` first.
    """
    from ..log import repair_log

    with open_home(ctx) as ix:
        if stream is not None:
            ix.require(Permission.ADMIN, stream)
            streams: list[str] | None = [stream]
        elif ix.access.is_owner(ix.actor):
            streams = None
        else:
            ix.require(Permission.ADMIN)
            streams = [ix.namespace]
        done = repair_log(ix.log, actor=str(ix.actor), streams=streams, dry_run=dry_run)
    emit([r.to_json() for r in done], as_json, lambda _: _print_repairs(done, dry_run))


def _print_repairs(done: list[RepairReport], dry_run: bool) -> None:
    if not done:
        out.print("Nothing to repair: every stream's operations after its last checkpoint are vouched for")
        return
    for rep in done:
        table(
            f"Stream {rep.stream}: {'would set aside' if dry_run else 'set aside'} after checkpoint {rep.checkpoint}",
            ["seq", "id", "reason"],
            [[v.seq, v.to_json()["id"] or "(missing)", v.reason] for v in rep.voided],
        )
        if dry_run:
            out.print(f"{rep.kept} operation(s) after the checkpoint would be kept; nothing was changed")
        else:
            out.print(
                f"{rep.kept} operation(s) kept; recorded as {rep.repair_id} (seq {rep.repair_seq}); "
                f"checkpoint signed at size {rep.signed_size}"
            )


@log_app.command("quarantine")
def quarantine(
    ctx: typer.Context,
    stream: Annotated[
        str | None, typer.Option(help="Only this stream (default: every stream you may read; the owner, all).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the rows `intently log repair` set aside: what each was, where it stood, when,
    by whom and why.

    They are kept in the log_quarantine table, never deleted; each names its signed
    LOG_QUARANTINED placeholder and the LOG_REPAIRED record of its repair. `--json` has every
    stored field, the payload included.
    """
    from ..log import quarantined

    with open_home(ctx) as ix:
        if stream is not None:
            ix.require(Permission.READ, stream)
            streams: list[str] | None = [stream]
        elif ix.access.is_owner(ix.actor):
            streams = None
        else:
            streams = ix.access.readable_namespaces(ix.actor)
        entries = quarantined(ix.log, streams)
    emit([e.to_json() for e in entries], as_json, _print_quarantine)


def _print_quarantine(data: list[dict[str, Any]]) -> None:
    if not data:
        out.print("Nothing quarantined: no `intently log repair` has set an operation aside")
        return
    table(
        "Operations set aside by `intently log repair` (kept in log_quarantine; `--json` for every field)",
        ["stream", "seq", "id", "op", "actor", "target", "set aside", "by", "reason"],
        [
            [
                e["stream"],
                e["seq"] if e["placeholder_seq"] is not None else f"{e['seq']} (no place)",
                e["id"],
                e["op"],
                e["actor"],
                e["target"],
                e["set_aside_at"] or "(no record of the repair)",
                e["set_aside_by"],
                e["reason"],
            ]
            for e in data
        ],
    )


@log_app.command("rotate-key")
def rotate_key(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Retire the signing key and make a new one; old checkpoints stay verifiable."""
    with open_home(ctx) as ix:
        ix.require(Permission.ADMIN)
        old, new = ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
    emit({"retired": old, "key_id": new}, as_json, lambda d: out.print(f"New signing key {d['key_id']}"))


@log_app.command("replay")
def replay(
    ctx: typer.Context,
    to: Annotated[str, typer.Option("--to", help="Fresh database URL or SQLite file path to rebuild into.")],
    as_json: JsonOpt = False,
) -> None:
    """Rebuild state from the log into a fresh store, verifying the log first."""
    from .._intently import _load_engines
    from ..log import OperationLog
    from ..log import replay as replay_log

    with open_home(ctx) as ix:
        ix.require(Permission.ADMIN)
        url = to if "://" in to else f"sqlite:///{Path(to).resolve()}"
        _load_engines()  # every component's tables and every operation's applier
        target_store = open_store(url)
        try:
            target_store.upgrade()
            target = OperationLog(
                target_store, clock=ix.runtime.clock, keyring=ix.log.keyring, origin=ix.log.origin, witness_path=None
            )
            total = 2 * sum(ix.log.size(s) for s in ix.log.streams())  # verified, then applied
            with progress_bar("replaying", total) as bar:
                count = replay_log(ix.log, target, progress=bar.advance)
            shown = target_store.url  # the store's own rendering: a password is never echoed
        finally:
            target_store.close()
    emit(
        {"replayed": count, "to": shown},
        as_json,
        lambda d: out.print(f"Replayed {d['replayed']} operations into {d['to']}"),
    )


@log_app.command("verify-proof")
def verify_proof(
    proof_file: Annotated[
        Path, typer.Argument(help="A proof as `log proof --json` or `log consistency --json` print it.")
    ],
    keys: Annotated[Path, typer.Option(help="The public keyring (keys/public.json).")],
    checkpoint: Annotated[
        list[Path] | None,
        typer.Option(help="A signed checkpoint you hold (JSON), e.g. from the witness file's history; repeatable."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check an inclusion or consistency proof with only the public keyring (no home needed):
    the proof itself, and that a valid signed checkpoint states every tree head it relates."""
    from ..log import Checkpoint, verify_anchored_proof

    doc = _read_json_file(proof_file, "proof")
    held = []
    for path in checkpoint or []:
        try:
            held.append(Checkpoint.from_json(_read_json_file(path, "checkpoint")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"not a checkpoint: {exc}", where=str(path)) from exc
    ring = _public_ring(keys)
    if not isinstance(doc, dict):
        raise InvalidInput("not a JSON object", where=str(proof_file))
    result = verify_anchored_proof(doc, ring, held)
    emit(
        result,
        as_json,
        lambda d: out.print(
            f"{d['kind'].capitalize()} proof of stream {d['stream']!r} verifies, signed at size(s) "
            + ", ".join(f"{c['size']} (key {c['key_id']})" for c in d["checkpoints"])
        ),
    )


def _read_json_file(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc.strerror}", where=str(path)) from exc
    except ValueError as exc:
        raise InvalidInput(f"not a {what}: {exc}", where=str(path)) from exc


def _public_ring(keys: Path) -> KeyRing:
    from ..log import KeyRing

    if not keys.is_file():  # else an empty keyring, reported as "no public keys": a typo'd path would not show
        raise InvalidInput("no such keyring file", where=str(keys))
    ring = KeyRing.load_public(keys)
    if not ring.entries:
        raise InvalidInput("no public keys", where=str(keys))
    return ring


@log_app.command("verify-checkpoint")
def verify_checkpoint(
    checkpoint_file: Annotated[Path, typer.Argument(help="A checkpoint JSON file.")],
    keys: Annotated[Path, typer.Option(help="The public keyring (keys/public.json).")],
    as_json: JsonOpt = False,
) -> None:
    """Check a checkpoint's signature with only the public keyring (no home needed)."""
    from ..log import Checkpoint

    try:
        cp = Checkpoint.from_json(json.loads(checkpoint_file.read_text(encoding="utf-8")))
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc.strerror}", where=str(checkpoint_file)) from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidInput(f"not a checkpoint: {exc}", where=str(checkpoint_file)) from exc
    ring = _public_ring(keys)
    ring.verify(cp.key_id, cp.signed_body(), cp.signature, stream=cp.stream, seq=cp.size)
    ring.check_retirement(cp.key_id, cp.stream, cp.size, cp.time, cp.root)
    emit({"ok": True, "stream": cp.stream, "size": cp.size, "key_id": cp.key_id}, as_json)
