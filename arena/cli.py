"""The ``arena`` command line: each subcommand's flags, handed to its front end.

Errors in arguments, configs or bot specs are one line on stderr and exit code 2; no
tracebacks for what the user typed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from gin_arena_core.rules import RuleError, RulesConfig

from arena.groups import describe, first_leaf
from arena.match.messages import TimeControl


class UsageError(Exception):
    """A bad argument or config: printed as one line, exit code 2."""


class _DefaultsShown(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the text already names it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if ("default" in text or default is None or default is False or default == ""
                or default == [] or default == argparse.SUPPRESS or not action.option_strings):
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _DefaultsShown)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _rules(text: str, overrides: list[str]) -> RulesConfig:
    """A preset name or a JSON object (``{"preset": ..., option: value}``), plus KEY=VALUE."""
    try:
        spec: object = json.loads(text) if text.lstrip().startswith("{") else {"preset": text}
    except json.JSONDecodeError as e:
        raise UsageError(f"--rules: not valid JSON: {e.msg}") from None
    if not isinstance(spec, dict):
        raise UsageError("--rules: give a preset name or a JSON object")
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--set {item!r}: use KEY=VALUE, e.g. --set target=150")
        try:
            spec[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            spec[key.strip()] = value
    try:
        return RulesConfig.from_spec(spec)
    except RuleError as e:
        raise UsageError(f"--rules: {e.message}") from None


def _time_control(args: argparse.Namespace) -> TimeControl:
    try:
        return TimeControl(decision_ms=args.decision_ms, bank_ms=args.bank_ms,
                           hello_timeout_ms=args.hello_ms, margin_ms=args.margin_ms,
                           max_strikes=args.max_strikes, max_rejections=args.max_rejections,
                           on_illegal=args.on_illegal, reconnect_grace_ms=args.reconnect_ms)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _add_match_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="standard",
                   help="rules preset (standard, oklahoma, hollywood, ...) or a JSON object")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one rules option, e.g. --set target=150 (repeatable)")
    p.add_argument("--decision-ms", type=int, default=1000, help="limit per decision (ms)")
    p.add_argument("--bank-ms", type=int, default=0, help="match time bank (ms); 0 = none")
    p.add_argument("--hello-ms", type=int, default=10000, help="time to say Hello (ms)")
    p.add_argument("--margin-ms", type=int, default=50,
                   help="jitter allowance added to every deadline (ms)")
    p.add_argument("--max-strikes", type=int, default=3, help="missed decisions allowed")
    p.add_argument("--max-rejections", type=int, default=3,
                   help="refused answers per decision before --on-illegal applies")
    p.add_argument("--on-illegal", choices=("default", "forfeit"), default="default",
                   help="after too many refused answers: play the default move, or forfeit")
    p.add_argument("--reconnect-ms", type=int, default=5000, help="reconnect grace (ms)")


def _add_capacity_options(p: argparse.ArgumentParser) -> None:
    from arena.server.arena import DEFAULT_MAX_LAG_MS
    from arena.server.bridge import StreamLimits

    d = StreamLimits()
    p.add_argument("--max-matches", type=int, default=0,
                   help="matches at once; more sessions wait in the lobby (default 0: as many "
                   "as the measured loop lag allows)")
    p.add_argument("--max-lag-ms", type=float, default=DEFAULT_MAX_LAG_MS,
                   help="start no match while a loop of the arena lags more than this "
                   f"(default {DEFAULT_MAX_LAG_MS:g}; 0: never wait for lag)")
    p.add_argument("--max-sessions", type=int, default=d.max_streams,
                   help=f"Play streams open at once (default {d.max_streams}; 0: no limit)")
    p.add_argument("--max-sessions-per-address", type=int,
                   default=d.max_streams_per_address,
                   help="streams from one client address; loopback is not limited "
                   f"(default {d.max_streams_per_address}; 0: no limit)")


def _limits(args: argparse.Namespace) -> Any:
    from arena.server.bridge import StreamLimits

    for name in ("max_matches", "max_sessions", "max_sessions_per_address"):
        if getattr(args, name) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 0, not "
                             f"{getattr(args, name)}")
    if args.max_lag_ms < 0:
        raise UsageError(f"--max-lag-ms must be >= 0, not {args.max_lag_ms:g}")
    return StreamLimits(max_streams=args.max_sessions,
                        max_streams_per_address=args.max_sessions_per_address)


def _version() -> str:
    """``arena (gin-arena) VERSION, protocol N, Python X.Y.Z``: what a bug report needs."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from gin_arena_core.protocol import PROTOCOL_VERSION

    try:
        mine = version("gin-arena")
    except PackageNotFoundError:  # run from a checkout that was never installed
        mine = "unknown (not installed)"
    return (f"arena (gin-arena) {mine}, protocol {PROTOCOL_VERSION}, "
            f"Python {platform.python_version()}")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="arena", description="gin-arena: Gin Rummy bots play each other.")
    ap.add_argument("--log-format", choices=("text", "json"), default="text",
                    help="log lines as readable text, or as JSON lines for a log collector")
    ap.add_argument("--log-json", action="store_true", help=argparse.SUPPRESS)  # older spelling
    ap.add_argument("--version", action="version", version=_version())
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("play", help="play bots against each other on an embedded arena")
    p.add_argument("bots", nargs="+", metavar="BOT",
                   help="random|greedy|strong, module:Class, file.py[:Class], or a command")
    p.add_argument("--games", type=int, default=10, help="games per pair (default 10)")
    p.add_argument("--concurrency", type=int, default=0,
                   help="matches at once in all (0: fits the machine)")
    p.add_argument("--workers", type=int, default=-1,
                   help="arena worker processes, each serving its own matches (default: "
                   "fitted to the machine: one per CPU in process, one per two CPUs over "
                   "gRPC)")
    p.add_argument("--seed", default="", help="deal seed (default: random, printed)")
    p.add_argument("--replays", default=None, metavar="DIR",
                   help="directory for replays and bot logs (default: a new runs/RUN-ID/, "
                   "linked as runs/latest; '' for none)")
    p.add_argument("--in-process", action="store_true",
                   help="call trusted Python bots directly, in this process: no network; "
                   "time judged after the fact (docs/protocol.md, \"The bot contract\")")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true",
                   help="log every session and match (default: warnings only)")
    _add_match_options(p)

    p = sub.add_parser("serve", help="run an arena server that pairs connecting bots")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=port_number, default=50051, help="0: any free port")
    p.add_argument("--replays", default="runs/serve", help="directory for replays")
    p.add_argument("--seed", default="", help="deal seed (default: random)")
    _add_match_options(p)
    _add_capacity_options(p)

    p = sub.add_parser("status", help="ask a running arena or ladder for its load "
                       "(matches running, sessions waiting, loop lag)")
    p.add_argument("address", metavar="HOST:PORT")
    p.add_argument("--tls-ca", type=Path, help="over TLS: the CA certificate (PEM)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("replay", help="re-simulate replay files and confirm their results")
    p.add_argument("files", nargs="+", type=Path)

    p = sub.add_parser("show", help="print a replay hand by hand, both hands visible")
    p.add_argument("file", type=Path)
    _add_tournament_parsers(sub)
    return ap


def _add_tournament_parsers(sub: Any) -> None:
    """tournament, standings, ladder, register (docs/tournaments.md)."""
    p = sub.add_parser("tournament", help="run a tournament from a TOML config (or flags); "
                       "run the same command again to resume after a crash")
    p.add_argument("config", nargs="?", type=Path, help="the TOML config (optional with --bots)")
    p.add_argument("--bots", nargs="+", metavar="BOT", help="the bots, replacing [[bots]]")
    p.add_argument("--format", choices=("round_robin", "gauntlet", "sprt"),
                   help="default: from the config, else round_robin")
    p.add_argument("--challenger", help="gauntlet: the bot that meets the field")
    p.add_argument("--deals", type=int, help="duplicate deals per pairing (2 matches each; "
                   "default: from the config, else 10)")
    p.add_argument("--seed", help="deal seed (part of the config: a new seed is a new run; "
                   "default: from the config, else random)")
    p.add_argument("--name", help="tournament name (default: from the config, else the "
                   "config file's name)")
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: from the config, "
                   "else NAME.sqlite)")
    p.add_argument("--concurrency", type=int,
                   help="matches at once in all (0: fits the machine; default: from the "
                   "config, else 0)")
    p.add_argument("--workers", type=int,
                   help="local arena worker processes (0: none, `arena worker` processes on "
                   "any host play the matches; default: from the config, else fitted to the "
                   "machine)")
    p.add_argument("--in-process", action="store_true",
                   help="call trusted Python bots directly, in this process: no network; "
                   "time judged after the fact (docs/protocol.md, \"The bot contract\")")
    p.add_argument("--replays", type=Path,
                   help="directory for replays (default: from the config, else none)")
    p.add_argument("--rules", help="rules preset or JSON object, replacing [rules] "
                   "(default: from the config, else standard)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one rules option (repeatable)")
    p.add_argument("--decision-ms", type=int, help="limit per decision (ms; default: from "
                   "the config, else 1000)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true", help="log every match")

    p = sub.add_parser("standings", help="standings of a tournament or the ladder: table, "
                       "CSV, JSON, pairwise matrix")
    p.add_argument("db", nargs="?", help="the SQLite file or postgresql:// URL")
    p.add_argument("--scope", help="tournament name or scope (default: the latest)")
    p.add_argument("--csv", type=Path, help="write the standings as CSV")
    p.add_argument("--json", type=Path, help="write standings and matrix as JSON")
    p.add_argument("--matrix", action="store_true", help="print the pairwise results")
    p.add_argument("--remote", metavar="HOST:PORT",
                   help="instead: ask a running ladder's Leaderboard over gRPC")
    p.add_argument("--limit", type=int, default=0, help="--remote: at most this many bots")
    p.add_argument("--tls-ca", type=Path, help="--remote over TLS: the CA certificate (PEM)")

    p = sub.add_parser("ladder", help="run the ladder: registered bots connect with their "
                       "token and are paired continuously (also: ladder revoke|rotate NAME)")
    tokens = p.add_subparsers(dest="ladder_command", parser_class=_Parser)
    for verb, what in (("revoke", "revoke a ladder bot's token: it connects no more"),
                       ("rotate", "give a ladder bot a new token (printed once); the old one "
                        "stops working")):
        q = tokens.add_parser(verb, help=what + " (a running ladder notices within a second)")
        q.add_argument("name", help="the bot's registered name")
        q.add_argument("--db", default="ladder.sqlite",
                       help="SQLite file or postgresql:// URL")
        if verb == "rotate":
            q.add_argument("--token", help="use this token (at least 16 characters)")
    p.add_argument("--db", default="ladder.sqlite",
                   help="SQLite file or postgresql:// URL (several front ends may share one)")
    p.add_argument("--public-address", default="", metavar="HOST:PORT",
                   help="where bots reach this front end, for redirects from other front "
                   "ends of the same ladder (default: the address it listens on)")
    p.add_argument("--season", default="",
                   help="rate in a new scope of the same database (other rules, time control "
                   "or seed need one)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=port_number, default=50051, help="0: any free port")
    p.add_argument("--seed", default="", help="deal seed (default: made once, kept in the db)")
    p.add_argument("--replays", type=Path,
                   help="directory for replays (default: from the config, else none)")
    p.add_argument("--settle-ms", type=int, default=250,
                   help="after a bot arrives, wait this long for others before pairing")
    p.add_argument("--tls-cert", type=Path, help="serve TLS: certificate chain (PEM)")
    p.add_argument("--tls-key", type=Path, help="serve TLS: private key (PEM)")
    _add_match_options(p)
    _add_capacity_options(p)

    p = sub.add_parser("export", help="every match of a tournament or the ladder, one row "
                       "each (CSV and/or JSON)")
    p.add_argument("db", help="the SQLite file or postgresql:// URL")
    p.add_argument("--scope", help="tournament name or scope (default: the latest)")
    p.add_argument("--csv", type=Path, help="write the matches as CSV")
    p.add_argument("--json", type=Path, help="write the matches as JSON")

    p = sub.add_parser("worker", help="play the queued matches of tournaments in a store (on "
                       "any host that reaches it): claims a match, launches its bots here, "
                       "plays, commits")
    p.add_argument("--db", required=True, help="SQLite file or postgresql:// URL")
    p.add_argument("--scope", action="append",
                   help="only this tournament (scope or name; repeatable; default: any)")
    p.add_argument("--slots", type=int, default=4, help="matches at once")
    p.add_argument("--replays", type=Path,
                   help="directory for replays and bot logs (default: the tournament's)")
    p.add_argument("--forever", action="store_true",
                   help="wait for new work instead of exiting when none is left")

    p = sub.add_parser("backup", help="copy a results database to one consistent file, even "
                       "while a tournament or the ladder writes to it")
    p.add_argument("db", help="the SQLite file")
    p.add_argument("out", type=Path, help="the copy to write (must not exist)")

    p = sub.add_parser("register", help="register a ladder bot and print its secret token")
    p.add_argument("db", help="the ladder's SQLite file or postgresql:// URL")
    p.add_argument("name", help="the bot's name on the ladder")
    p.add_argument("--token", help="use this token (at least 16 characters) instead of a new one")


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BaseException as e:  # every exit path goes through _exit_code
        code = _exit_code(e)
        if code is None:
            raise
        return code


def _exit_code(e: BaseException) -> int | None:
    """The exit code for what ended the command, printing its one line; None: a bug (the
    traceback is shown). trio raises from inside nurseries, so what the user caused (a bad
    argument, Ctrl-C) may arrive wrapped in exception groups."""
    from arena.tournament.commands import CommandError

    if isinstance(e, BaseExceptionGroup):
        if e.subgroup(KeyboardInterrupt) is not None:
            return 130
        user, rest = e.split((UsageError, CommandError))
        if user is None or rest is not None:
            return None  # anything else in the group is a bug: show it all
        e = first_leaf(user)
    if isinstance(e, KeyboardInterrupt):
        return 130
    if isinstance(e, BrokenPipeError):  # e.g. `arena show FILE | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    if isinstance(e, UsageError | CommandError):
        print(f"arena: error: {e}", file=sys.stderr)
        return 2
    return None


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0..65535 (0: any free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0..65535)")
    return port


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    from arena.logs import configure

    configure(json=args.log_json or args.log_format == "json")
    if args.command == "play":
        return _cmd_play(args)
    if args.command == "serve":
        return _cmd_serve(args)
    if args.command == "replay":
        return _cmd_replay(args)
    if args.command == "worker":
        return _cmd_worker(args)
    if args.command in ("tournament", "standings", "ladder", "register", "export", "backup"):
        return _cmd_tournaments(args)
    if args.command == "status":
        return _cmd_status(args)
    return _cmd_show(args)


def _cmd_tournaments(args: argparse.Namespace) -> int:
    from arena.tournament import commands

    if args.command == "tournament":
        from arena.logs import configure

        configure(json=args.log_json or args.log_format == "json",
                  level="info" if args.verbose else "warning")
        if args.config is None and not args.bots:
            raise UsageError("tournament: give a CONFIG.toml or --bots")
        rules: dict[str, Any] = {}
        if args.rules is not None or args.set:
            rules = _rules(args.rules or "standard", args.set).to_dict()
        here = Path.cwd()
        return commands.tournament(
            args.config,
            tournament={"format": args.format, "deals": args.deals, "seed": args.seed,
                        "name": args.name, "concurrency": args.concurrency,
                        "workers": args.workers,
                        "mode": "in_process" if args.in_process else None,
                        "database": _database(args.db, here),
                        "replays": str(here / args.replays) if args.replays else None},
            rules=rules, time_control={"decision_ms": args.decision_ms}, bots=args.bots,
            challenger=args.challenger,
            progress=not args.no_progress and sys.stderr.isatty())
    if args.command == "standings":
        if args.remote:
            return commands.remote_leaderboard(args.remote, limit=args.limit,
                                               tls_ca=args.tls_ca)
        if args.db is None:
            raise UsageError("standings: give the database file (or --remote HOST:PORT)")
        return commands.show_standings(args.db, scope=args.scope, csv_path=args.csv,
                                       json_path=args.json, matrix=args.matrix)
    if args.command == "register":
        return commands.register(args.db, args.name, args.token)
    if args.command == "export":
        if args.csv is None and args.json is None:
            raise UsageError("export: give --csv FILE and/or --json FILE")
        return commands.export(args.db, scope=args.scope, csv_path=args.csv,
                               json_path=args.json)
    if args.command == "backup":
        return commands.backup(args.db, args.out)
    if args.ladder_command == "revoke":
        return commands.revoke(args.db, args.name)
    if args.ladder_command == "rotate":
        return commands.rotate(args.db, args.name, args.token)
    from arena.tournament.ladder import LadderOptions

    limits = _limits(args)
    _check_bindable(args.host, args.port)
    opts = LadderOptions(rules=_rules(args.rules, args.set), time_control=_time_control(args),
                         seed=args.seed, settle_s=max(0, args.settle_ms) / 1000,
                         replay_dir=args.replays, season=args.season,
                         max_matches=args.max_matches, max_lag_ms=args.max_lag_ms,
                         limits=limits, public_address=args.public_address)
    return commands.ladder(args.db, host=args.host, port=args.port, options=opts,
                           tls_cert=args.tls_cert, tls_key=args.tls_key)


def _database(db: str | None, here: Path) -> str | None:
    """``--db`` as the config takes it: a URL as given, a file relative to ``here``."""
    from arena.store import is_url

    if not db:
        return None
    return db if is_url(db) else str(here / db)


def _run_dir(option: str | None, seed: str) -> Path | None:
    """Where a play run writes: ``--replays DIR`` as given ('' for nowhere), else a new
    ``runs/RUN-ID/`` (so runs never mix), which ``runs/latest`` points to once it played."""
    if option is not None:
        return Path(option) if option else None
    import time

    root = Path("runs")
    root.mkdir(parents=True, exist_ok=True)
    base = f"{time.strftime('%Y%m%d-%H%M%S')}-{seed[:8]}"
    for n in range(1, 1000):  # two runs in the same second get two directories
        run = root / (base if n == 1 else f"{base}-{n}")
        try:
            run.mkdir()
            break
        except FileExistsError:
            continue
    else:
        raise UsageError(f"cannot make a new run directory under {root}/")
    return run


def _link_latest(run: Path) -> None:
    """Point ``runs/latest`` at ``run`` (a run that played: one that failed to start leaves
    it where it was)."""
    root = run.parent
    link = root / "latest"
    tmp = root / f".latest-{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(run.name, target_is_directory=True)
        tmp.replace(link)
    except OSError:  # no symlinks here, or runs/latest is a real directory: the run's own
        tmp.unlink(missing_ok=True)  # directory is printed anyway


def _check_bindable(host: str, port: int) -> None:
    from arena.server.bridge import check_bindable

    try:
        check_bindable(host, port)
    except OSError as e:
        raise UsageError(str(e)) from None


def _positive(name: str, value: int) -> None:
    if value < 1:
        raise UsageError(f"{name} must be at least 1, not {value}")


def _cmd_play(args: argparse.Namespace) -> int:
    from arena.botspec import SpecError
    from arena.play import PlayOptions, prepare_play, run_play
    from arena.playreport import odd_games_note

    _positive("--games", args.games)
    if args.concurrency < 0:
        raise UsageError(f"--concurrency must be >= 0, not {args.concurrency}")
    if args.workers < -1 or args.workers == 0:
        raise UsageError(f"--workers must be at least 1, not {args.workers}")
    if len(args.bots) < 2:
        raise UsageError("play needs at least two bots")
    from arena.match.driver import new_seed

    seed = args.seed or new_seed()
    progress = not args.no_progress and sys.stderr.isatty()
    if not args.verbose:  # the table is the output; log lines only for what went wrong
        from arena.logs import configure

        configure(json=args.log_json or args.log_format == "json", level="warning")
    rules, tc = _rules(args.rules, args.set), _time_control(args)
    opts = PlayOptions(
        specs=args.bots, games=args.games, rules=rules, time_control=tc,
        concurrency=args.concurrency, workers=args.workers, seed=seed, replay_dir=None,
        in_process=args.in_process, progress=progress,
    )
    try:
        run = prepare_play(opts)
    except SpecError as e:
        raise UsageError(str(e)) from None
    run.opts.replay_dir = _run_dir(args.replays, seed)  # made once the bots check out
    note = odd_games_note(run)
    if note:
        print(note, file=sys.stderr)
    try:
        run_play(run)
    except SpecError as e:
        raise UsageError(str(e)) from None
    except BaseException:
        if run.interrupted:
            _report_play(run, args.replays is None)
            print(f"interrupted: {len(run.matches)} of {len(run.specs)} games played "
                  "(the table above counts those)", file=sys.stderr)
        raise
    _report_play(run, args.replays is None)
    return 0


def _report_play(run: Any, link_latest: bool) -> None:
    """Print the run's table (and crosstable, problems) and keep it in its folder with a
    ``summary.json``; ``runs/latest`` then points at it."""
    from arena.playreport import format_crosstable, format_problems, format_table, summary

    opts = run.opts
    tallies = run.tallies()
    hands = run.hands
    elapsed = max(run.elapsed, 1e-9)
    lines = [f"{len(run.matches)} games, {hands} hands in {run.elapsed:.1f} s "
             f"({hands / elapsed:.0f} hands/s); rules {opts.rules.preset}; seed {opts.seed}"
             + (f"; replays in {opts.replay_dir}/" if opts.replay_dir else ""),
             format_table(tallies)]
    if len(run.entrants) >= 3:
        lines += ["", format_crosstable(run)]
    logs = opts.replay_dir / "bot-logs" if opts.replay_dir and not opts.in_process else None
    problems = format_problems(tallies, logs)
    if problems:
        lines.append(problems)
    text = "\n".join(lines)
    print(text, flush=True)
    if opts.replay_dir is not None:
        opts.replay_dir.mkdir(parents=True, exist_ok=True)
        (opts.replay_dir / "table.txt").write_text(text + "\n", encoding="utf-8")
        (opts.replay_dir / "summary.json").write_text(
            json.dumps(summary(run), indent=2) + "\n", encoding="utf-8")
        if link_latest and run.matches:
            _link_latest(opts.replay_dir)

def _cmd_serve(args: argparse.Namespace) -> int:
    import signal
    from functools import partial

    import structlog
    import trio

    from arena.serve import serve_open
    from arena.server.arena import Arena, start_arena
    from arena.server.bridge import format_address

    rules = _rules(args.rules, args.set)
    tc = _time_control(args)
    limits = _limits(args)
    _check_bindable(args.host, args.port)
    # Python's default GIL switch interval (5 ms) is kept: a shorter one (0.5 ms was tried)
    # forces switches between the trio and grpc threads under load, for 15-25% less
    # throughput at 64 matches and no better latency (bench/arena_speed.py, docs/benchmarks).
    arena = Arena(hello_timeout_s=tc.hello_timeout_ms / 1000, limits=limits,
                  max_matches=args.max_matches, max_lag_ms=args.max_lag_ms)
    log = structlog.get_logger("arena")

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            try:
                port = await start_arena(nursery, arena, host=args.host, port=args.port)
            except Exception as e:  # the bind failed after all: say so in one line
                raise UsageError(f"cannot serve on {args.host}:{args.port}: "
                                 f"{describe(e)}") from None
            address = format_address(args.host, port)
            log.info("arena_ready", address=address, rules=rules.preset)
            print(f"arena listening on {address} (rules {rules.preset})", flush=True)
            nursery.start_soon(partial(serve_open, arena, rules, tc, args.seed or None,
                                       replays=Path(args.replays) if args.replays else None))
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    log.info("shutdown", signal=signal.Signals(signum).name)
                    break
            nursery.cancel_scope.cancel()

    trio.run(serve)
    return 0


def _cmd_worker(args: argparse.Namespace) -> int:
    from arena.series.worker import main as worker_main

    _positive("--slots", args.slots)
    argv = ["--db", args.db, "--slots", str(args.slots)]
    for scope in args.scope or ():
        argv += ["--scope", scope]
    if args.replays is not None:
        argv += ["--replays", str(args.replays)]
    if args.forever:
        argv.append("--forever")
    return worker_main(argv)


def _cmd_status(args: argparse.Namespace) -> int:
    import grpc
    from gin_arena_core.protocol import pb, pb_grpc
    from google.protobuf import json_format  # type: ignore[import-untyped]

    if args.tls_ca is not None:
        try:
            creds = grpc.ssl_channel_credentials(args.tls_ca.read_bytes())
        except OSError as e:
            raise UsageError(f"--tls-ca: {e.strerror or e}") from None
        channel = grpc.secure_channel(args.address, creds)
    else:
        channel = grpc.insecure_channel(args.address)
    with channel:
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        try:
            reply = stub.Status(pb.StatusRequest(), timeout=10)
        except grpc.RpcError as e:
            code = e.code() if hasattr(e, "code") else None
            detail = e.details() if hasattr(e, "details") else str(e)
            raise UsageError(f"{args.address}: {code.name if code else 'error'}: {detail}") \
                from None
    if args.json:
        print(json_format.MessageToJson(reply, always_print_fields_with_no_presence=True,
                                        preserving_proto_field_name=True))
        return 0
    cap = reply.max_matches or "as the lag allows"
    window = f", window {reply.admission_window}" if reply.admission_window else ""
    print(f"{args.address}: {reply.matches_running} matches running (max {cap}{window}), "
          f"{reply.sessions_waiting} sessions waiting, {reply.sessions_open} streams open, "
          f"{reply.matches_finished} matches finished, {reply.sessions_refused} streams "
          f"refused; loop lag {reply.loop_lag_ms:.0f} ms (gRPC loop "
          f"{reply.grpc_loop_lag_ms:.0f} ms, limit {reply.max_lag_ms:g}); "
          f"{'admitting' if reply.admitting else 'at capacity'}; up {reply.uptime_s:.0f} s")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from arena.match.replay import ReplayError, load_record, verify

    bad = 0
    for path in args.files:
        try:
            report = verify(load_record(path))
        except ReplayError as e:
            raise UsageError(str(e)) from None
        if report.ok:
            print(f"{path}: OK ({report.hands} hands, {report.actions} actions replayed "
                  "to the recorded results)")
        else:
            bad += 1
            print(f"{path}: MISMATCH")
            for m in report.mismatches:
                print(f"  {m}")
    return 1 if bad else 0


def _cmd_show(args: argparse.Namespace) -> int:
    from arena.match.replay import ReplayError, load_record
    from arena.match.show import show

    try:
        print(show(load_record(args.file)))
    except ReplayError as e:
        raise UsageError(str(e)) from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
