"""What ``arena tournament | standings | ladder | register`` do (arena.cli parses the flags).

Every user-facing problem (a bad config, an unusable database, a taken name) is raised as
``CommandError`` with one line; the CLI prints it and exits 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from arena import texttable
from arena.groups import describe
from arena.store.base import Store, StoreError

T = TypeVar("T")


class CommandError(Exception):
    """A problem with what the user asked for: one line, exit code 2."""


def tournament(config: Path | None, *, tournament: dict[str, Any], rules: dict[str, Any],
               time_control: dict[str, Any], bots: list[str] | None, challenger: str | None,
               progress: bool) -> int:
    """Run (or resume) a tournament, then print its standings."""
    from arena.tournament.config import ConfigError, load_config, weak_seed
    from arena.tournament.report import format_table, pick_scope, standings
    from arena.tournament.runner import RunError, check_runnable, run_tournament

    try:
        cfg = load_config(config, tournament=tournament, rules=rules,
                          time_control=time_control, bots=bots, challenger=challenger)
        check_runnable(cfg)
        weak = weak_seed(cfg.seed) if cfg.seed else ""
        if weak:
            print(f"arena: warning: the seed {cfg.seed!r} is easy to guess ({weak}). The deals "
                  "stay secret from bots (they are keyed with this tournament's secret, kept "
                  "in the database), but leave --seed out for a random one, or use 16+ "
                  "random characters", file=sys.stderr)
        store = open_db(cfg.database, existing=False)
        try:
            summary = run_tournament(cfg, store, progress=progress)
            where = {"new": " (new: made now and stored)",
                     "stored": " (read from the database)"}.get(summary.seed_source, "")
            print(f"{cfg.name}: {summary.played} matches played now ({summary.already} "
                  f"already recorded, {summary.scheduled} scheduled), {summary.hands} hands "
                  f"in {summary.seconds:.1f} s ({summary.hands_per_second:.0f} hands/s); "
                  f"seed {summary.seed}{where}; results in {store.label}")
            if summary.voided:
                print(f"{summary.voided} matches voided (no winner, not by the game: not "
                      "counted or rated)")
            if summary.unplayed:
                print(f"{summary.unplayed} matches not played (neither bot connected): run "
                      "the same command again to play them")
            if summary.after_verdict:
                print(f"{summary.after_verdict} matches finished after the SPRT's verdict: "
                      "kept, marked, and left out of the test")
            st = standings(store, pick_scope(store, summary.scope))
            print(format_table(st))
        finally:
            store.close()
    except (ConfigError, StoreError, RunError) as e:
        raise CommandError(str(e)) from None
    return 0


def open_db(db: str, *, existing: bool = True) -> Store:
    """The store ``db`` names (a SQLite file or a postgresql:// URL); ``CommandError``
    (one line) if it cannot be opened, or (``existing``) a file that does not exist."""
    from arena.store import is_url, open_store

    if existing and not is_url(db) and not Path(db).is_file():
        raise CommandError(f"{db}: no such database")
    try:
        return open_store(db)
    except StoreError as e:
        raise CommandError(str(e)) from None


def show_standings(db: str, *, scope: str | None, csv_path: Path | None,
                   json_path: Path | None, matrix: bool) -> int:
    from arena.tournament.report import (
        format_matrix,
        format_table,
        pick_scope,
        standings,
        to_csv,
        to_json,
    )

    store = open_db(db)
    try:
        st = standings(store, pick_scope(store, scope))
    except StoreError as e:
        raise CommandError(str(e)) from None
    finally:
        store.close()
    print(format_table(st))
    if matrix:
        print()
        print(format_matrix(st))
    try:
        if csv_path is not None:
            csv_path.write_text(to_csv(st), encoding="utf-8")
        if json_path is not None:
            json_path.write_text(json.dumps(to_json(st), indent=2) + "\n", encoding="utf-8")
    except OSError as e:
        raise CommandError(f"cannot write: {e}") from None
    return 0


def remote_leaderboard(address: str, *, limit: int, tls_ca: Path | None,
                       timeout_s: float = 10.0) -> int:
    """Print a running ladder's leaderboard, asked over gRPC."""
    import grpc
    from gin_arena_core.protocol import pb, pb_grpc

    if tls_ca is not None:
        try:
            creds = grpc.ssl_channel_credentials(tls_ca.read_bytes())
        except OSError as e:
            raise CommandError(f"--tls-ca: {e.strerror or e}") from None
        channel = grpc.secure_channel(address, creds)
    else:
        channel = grpc.insecure_channel(address)
    with channel:
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        try:
            reply = stub.Leaderboard(pb.LeaderboardRequest(limit=limit), timeout=timeout_s)
        except grpc.RpcError as e:
            code = e.code() if hasattr(e, "code") else None
            detail = e.details() if hasattr(e, "details") else str(e)
            raise CommandError(f"{address}: {code.name if code else 'error'}: {detail}") \
                from None
    print(format_leaderboard(reply.entries))
    return 0


def format_leaderboard(entries: Any) -> str:
    head = ("#", "bot", "rating (mu)", "sigma", "mu-3sigma", "games", "wins")
    rows = [(str(i), e.bot, f"{e.rating:.2f}", f"{e.sigma:.2f}",
             f"{e.rating - 3 * e.sigma:.2f}", str(e.games), str(e.wins))
            for i, e in enumerate(entries, 1)]
    return texttable.render(head, rows, left={1}, keep=2)


def register(db: str, name: str, token: str | None) -> int:
    from arena.tournament.registry import RegistrationError
    from arena.tournament.registry import register as do_register

    store = open_db(db, existing=False)
    try:
        secret = do_register(store, name, token)
    except (RegistrationError, StoreError) as e:
        raise CommandError(str(e)) from None
    finally:
        store.close()
    print(f"registered {name!r} in {db}")
    print(f"token: {secret}")
    print("keep the token secret: only its hash is stored, it cannot be shown again",
          file=sys.stderr)
    return 0


def _on_ladder_store(db: str, act: Callable[[Any], T]) -> T:
    """``act(store)`` on an existing database; its problems as one ``CommandError``."""
    from arena.tournament.registry import RegistrationError

    store = open_db(db)
    try:
        return act(store)
    except (RegistrationError, StoreError) as e:
        raise CommandError(str(e)) from None
    finally:
        store.close()


def revoke(db: str, name: str) -> int:
    from arena.tournament.registry import revoke as do_revoke

    _on_ladder_store(db, lambda store: do_revoke(store, name))
    print(f"revoked the token of {name!r} in {db}: it cannot connect (waiting sessions of a "
          "running ladder end within a second; a match in play finishes)")
    return 0


def rotate(db: str, name: str, token: str | None) -> int:
    from arena.tournament.registry import rotate as do_rotate

    secret = _on_ladder_store(db, lambda store: do_rotate(store, name, token))
    print(f"new token for {name!r} in {db} (the old one no longer works)")
    print(f"token: {secret}")
    print("keep the token secret: only its hash is stored, it cannot be shown again",
          file=sys.stderr)
    return 0


def export(db: str, *, scope: str | None, csv_path: Path | None,
           json_path: Path | None) -> int:
    """Write every match of a scope, one row each."""
    from arena.tournament.export import matches_csv, matches_json
    from arena.tournament.report import pick_scope

    store = open_db(db)
    try:
        info = pick_scope(store, scope)
        rows = store.matches(info.scope)
    except StoreError as e:
        raise CommandError(str(e)) from None
    finally:
        store.close()
    try:
        if csv_path is not None:
            csv_path.write_text(matches_csv(info.scope, rows), encoding="utf-8")
        if json_path is not None:
            json_path.write_text(json.dumps(matches_json(info.scope, rows), indent=1) + "\n",
                                 encoding="utf-8")
    except OSError as e:
        raise CommandError(f"cannot write: {e}") from None
    print(f"{len(rows)} matches of {info.scope} exported"
          + "".join(f" to {p}" for p in (csv_path, json_path) if p is not None))
    return 0


def backup(db: str, out: Path) -> int:
    """Copy ``db`` to ``out`` as one consistent snapshot (SQLite's online backup)."""
    from arena.store import is_url
    from arena.store.sqlite import SqliteStore

    if is_url(db):
        raise CommandError("backup copies a SQLite file; back a PostgreSQL database up with "
                           "its own tools (pg_dump)")
    if not Path(db).is_file():
        raise CommandError(f"{db}: no such database")
    if out.exists():
        raise CommandError(f"{out}: already exists; give a new file")
    try:
        with SqliteStore(db) as store:
            store.backup(out)
    except StoreError as e:
        raise CommandError(str(e)) from None
    except OSError as e:
        raise CommandError(f"{out}: {e.strerror or e}") from None
    print(f"backed up {db} to {out}")
    return 0


def ladder(db: str, *, host: str, port: int, options: Any, tls_cert: Path | None,
           tls_key: Path | None) -> int:
    """Serve the ladder until SIGINT or SIGTERM."""
    import signal

    import structlog
    import trio

    from arena.server.bridge import format_address
    from arena.tournament.ladder import Ladder, LadderError

    tls: tuple[bytes, bytes] | None = None
    if (tls_cert is None) != (tls_key is None):
        raise CommandError("TLS needs both --tls-cert and --tls-key")
    if tls_cert is not None and tls_key is not None:
        try:
            tls = (tls_key.read_bytes(), tls_cert.read_bytes())
        except OSError as e:
            raise CommandError(f"TLS: {e.filename}: {e.strerror}") from None
    log = structlog.get_logger("arena.ladder")
    if host.strip("[]") in ("0.0.0.0", "::") and not options.public_address:
        print("arena: warning: listening on every interface without --public-address: other "
              "front ends of this ladder cannot send bots here (pairs across front ends are "
              "hosted elsewhere)", file=sys.stderr)
    store = open_db(db, existing=False)
    try:
        try:
            lad = Ladder(store, options)
        except (LadderError, StoreError) as e:
            raise CommandError(f"{db}: {e}") from None

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                try:
                    bound: int = await nursery.start(
                        lambda task_status: lad.serve(host=host, port=port, tls=tls,
                                                      task_status=task_status))
                except Exception as e:  # the bind failed
                    raise CommandError(f"cannot serve on {host}:{port}: {describe(e)}") from None
                season = f"season {options.season}; " if options.season else ""
                print(f"ladder listening on {format_address(host, bound)} "
                      f"({'TLS' if tls else 'plaintext'}; rules {options.rules.preset}; "
                      f"{season}{store.label}; front end {lad.frontend})", flush=True)
                with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        log.info("shutdown", signal=signal.Signals(signum).name)
                        break
                nursery.cancel_scope.cancel()

        trio.run(main)  # a CommandError arrives in an exception group: arena.cli unwraps it
    finally:
        store.close()
    return 0


__all__ = ["CommandError", "backup", "export", "ladder", "register", "remote_leaderboard",
           "revoke", "rotate", "show_standings", "tournament"]
