"""Run a tournament: its schedule, N matches at once, each finished match committed.

Two ways to play, the same schedule and the same records:

* ``process`` (default): an embedded arena on ``host:port``; each bot with a spec is
  launched as processes (``python -m sdk.launch SPEC`` for Python, the command itself
  otherwise) that connect with a token made for this run; a bot without a spec is remote
  and connects itself with the token from the config. Time limits and the fault policy
  apply: a bot that stalls or crashes loses its games and the tournament goes on; a bot
  process that exits is restarted a few times, then its remaining matches are forfeited.
* ``in_process``: Python bots called directly, in a pool of worker processes (no network,
  no time limits; for trusted bots and fast iteration).

Each finished match is written with the live rating update in one transaction, off the
match loop (``arena.tournament.commit``). Matches already in the store (same scope) are
skipped, so running the same command again after a crash or a kill resumes where it
stopped. A match interrupted by shutdown is not finished and is played again on the next
run. A match voided by the arena's own fault is recorded but neither counted nor rated.

A tournament without a seed gets a fresh 128-bit one, stored with the scope and printed;
running the same command again (same name, no seed) reuses the stored seed, so it resumes.
Deal seeds and match ids are keyed with the scope's secret (see formats).
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import json
import multiprocessing
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import structlog
import trio

from arena.groups import first_leaf
from arena.match.driver import MatchDriver, new_seed
from arena.match.messages import MatchResult, Termination
from arena.processes import (
    BotPool,
    BotProcess,
    LaunchError,
    check_spec,
    launched,
    play_seated,
    spec_fingerprint,
)
from arena.server.arena import Arena, start_arena
from arena.server.bridge import check_bindable
from arena.tournament.commit import CommitError, Committer, Finished
from arena.tournament.config import ConfigError, Format, Mode, TournamentConfig
from arena.tournament.formats import MatchSpec, SprtTracker, SprtVerdict, tournament_schedule
from arena.tournament.inproc import InProcessPlayer, init_worker, play_in_worker
from arena.tournament.ratings import LiveRatings
from arena.tournament.store import SqliteStore, Store, is_void

log = structlog.get_logger("arena.tournament")


class RunError(Exception):
    """The run cannot go on (one line); what finished is saved, a rerun resumes."""


@dataclass
class RunSummary:
    scope: str
    seed: str = ""
    seed_source: str = "given"  # given, new (made now), stored (read from the database)
    scheduled: int = 0  # matches in the schedule (SPRT: up to max_deals)
    already: int = 0  # finished before this run
    played: int = 0  # finished and recorded by this run
    voided: int = 0  # of those, voided (arena's fault)
    unplayed: int = 0  # handed out but not played (neither bot came): a rerun plays them
    hands: int = 0  # hands in the matches of this run
    seconds: float = 0.0
    sprt: SprtVerdict | None = None
    forfeits: dict[str, int] = field(default_factory=dict)

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else 0.0


def score_of(result: MatchResult, seats: tuple[str, str], bot: str) -> float | None:
    """1, 0.5 or 0 for ``bot``; None for a void match."""
    if is_void(result):
        return None
    if result.winner is None:
        return 0.5
    return 1.0 if seats[result.winner] == bot else 0.0


# ---------------------------------------------------------------- the run


class _Run:
    """The state of one run: what to play next, and how to commit what finished."""

    def __init__(self, cfg: TournamentConfig, store: Store, progress: bool,
                 on_commit: Callable[[MatchSpec, MatchResult], None] | None) -> None:
        self.cfg = cfg
        self.store = store
        self.scope = cfg.scope
        self.on_commit = on_commit
        self.secret = store.open_scope(self.scope, "tournament", cfg.name,
                                       json.dumps(cfg.to_dict(), sort_keys=True), cfg.secret)
        store.add_bots((b.name, b.spec) for b in cfg.bots)
        _check_same_bots(cfg, store)
        self.done = store.finished_ids(self.scope)
        self.live = LiveRatings(store.ratings(self.scope))
        self.summary = RunSummary(self.scope, cfg.seed)
        self.tracker: SprtTracker | None = None
        self._deals: dict[int, dict[int, float | None]] = {}
        if cfg.format is Format.SPRT:
            s = cfg.sprt
            self.tracker = SprtTracker(elo0=s.elo0, elo1=s.elo1, alpha=s.alpha, beta=s.beta,
                                       max_deals=s.max_deals)
            pair = set(cfg.names)
            for row in store.matches(self.scope):
                if set(row.bots) == pair:
                    self._feed(row.deal, row.order, row.score_of(cfg.names[0]))
        specs = list(tournament_schedule(cfg, self.secret))
        self.summary.scheduled = len(specs)
        self.summary.already = sum(s.match_id in self.done for s in specs)
        self._specs: Iterator[MatchSpec] = iter(specs)
        self.pending = len(specs) - self.summary.already
        self._tick, self._close = _progress(None if self.tracker else self.pending, progress)
        self.committer = Committer(store, self.scope, replays=cfg.replays,
                                   on_stored=self._stored)

    @property
    def stopped(self) -> bool:
        return self.tracker is not None and self.tracker.status != "running"

    def next(self) -> MatchSpec | None:
        """The next match to play, or None when there is nothing left (or SPRT decided)."""
        if self.stopped:
            return None
        for spec in self._specs:
            if spec.match_id not in self.done:
                self.done.add(spec.match_id)  # handed out: never twice in one run
                return spec
        return None

    def commit(self, spec: MatchSpec, result: MatchResult,
               record: list[dict[str, Any]] | None) -> None:
        """Hand a finished match to the committer (with its rating update, computed now in
        finishing order); skip an interrupted one. Never blocks."""
        if result.termination is Termination.SHUTDOWN or (
                result.termination is Termination.NO_SHOW and result.winner is None):
            # not played (the arena stopped; neither bot was there): played on the next run
            self.summary.unplayed += 1
            self._tick()
            return
        a, b = spec.pair
        score_a = score_of(result, spec.seats, a)
        new = {} if score_a is None else self.live.after(a, b, score_a)
        self.live.apply(new)
        self._feed(spec.deal, spec.order, score_of(result, spec.seats, self.cfg.names[0]))
        self.committer.submit(spec, result, new, record)

    def _stored(self, item: Finished, is_new: bool) -> None:
        if not is_new:
            return
        spec, result = item.spec, item.result
        self.summary.played += 1
        self.summary.voided += score_of(result, spec.seats, spec.pair[0]) is None
        self.summary.hands += len(result.hands)
        if result.blamed is not None:
            bot = spec.seats[result.blamed]
            self.summary.forfeits[bot] = self.summary.forfeits.get(bot, 0) + 1
        self._tick()
        if self.on_commit is not None:
            self.on_commit(spec, result)

    def _feed(self, deal: int, order: int, score: float | None) -> None:
        if self.tracker is None:
            return
        got = self._deals.setdefault(deal, {})
        got[order] = score
        if len(got) == 2:
            s0, s1 = got[0], got[1]
            self.tracker.add(deal, None if s0 is None or s1 is None else (s0 + s1) / 2)

    def close(self) -> None:
        self._close()
        if self.tracker is not None:
            self.summary.sprt = self.tracker.verdict()


def _progress(total: int | None, enabled: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    if not enabled:
        return (lambda: None), (lambda: None)
    from tqdm import tqdm

    bar = tqdm(total=total, unit="match", file=sys.stderr, dynamic_ncols=True)
    return (lambda: bar.update(1)), bar.close


def run_tournament(cfg: TournamentConfig, store: Store | None = None, *, progress: bool = False,
                   on_commit: Callable[[MatchSpec, MatchResult], None] | None = None
                   ) -> RunSummary:
    """Play what is left of ``cfg``'s schedule and record it; returns what this run did.

    ``store`` defaults to the config's SQLite file. ``ConfigError`` for bot specs that do
    not load. Interrupting it (Ctrl-C, kill) loses no finished match.
    """
    check_runnable(cfg)
    own = store is None
    db: Store = store if store is not None else SqliteStore(cfg.database)
    try:
        cfg, source = resolve_seed(cfg, db)
        run = _Run(cfg, db, progress, on_commit)
        run.summary.seed_source = source
        started = time.perf_counter()
        try:
            if run.pending and not run.stopped:
                try:
                    trio.run(_play, run)
                except BaseExceptionGroup as group:
                    if group.subgroup(KeyboardInterrupt) is not None:
                        raise KeyboardInterrupt from None
                    failed = group.subgroup(
                        lambda e: isinstance(e, RunError | CommitError | LaunchError))
                    if failed is None:
                        raise
                    leaf = first_leaf(failed)
                    raise RunError(str(leaf)) from None
                except CommitError as e:
                    raise RunError(str(e)) from None
        finally:
            run.summary.seconds = time.perf_counter() - started
            run.close()
        return run.summary
    finally:
        if own:
            db.close()


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def check_runnable(cfg: TournamentConfig) -> None:
    """``ConfigError`` (one line) if a bot spec does not load or the port cannot be bound."""
    _check_specs(cfg)
    if cfg.mode is not Mode.IN_PROCESS:
        try:
            check_bindable(cfg.host, cfg.port)
        except OSError as e:
            raise ConfigError(f"[tournament] host/port: {e}") from None


def resolve_seed(cfg: TournamentConfig, store: Store) -> tuple[TournamentConfig, str]:
    """``cfg`` with a seed, and where it came from: as given; the seed stored with the
    latest tournament of this name (same rules and time control), so running the same
    command again resumes; or a fresh 128-bit one."""
    if cfg.seed:
        return cfg, "given"
    for info in reversed(store.scopes()):
        if info.kind != "tournament" or info.name != cfg.name:
            continue
        seed = str(store.scope_config(info.scope).get("seed", ""))
        if seed and dataclasses.replace(cfg, seed=seed).scope == info.scope:
            return dataclasses.replace(cfg, seed=seed), "stored"
    return dataclasses.replace(cfg, seed=new_seed()), "new"


async def _play(run: _Run) -> None:
    """Play the run's matches with the committer writing beside them."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run.committer.run)
        try:
            if run.cfg.mode is Mode.IN_PROCESS:
                await _play_in_process(run)
            else:
                await _play_networked(run)
        finally:
            run.committer.close()


def _check_same_bots(cfg: TournamentConfig, store: Store) -> None:
    """``ConfigError`` if a bot with matches in this tournament is not the bot that played
    them (another spec, or its main file changed); else record what each bot is now."""
    scope = cfg.scope
    before = store.scope_bots(scope)
    now = {b.name: (b.spec, spec_fingerprint(b.spec)) for b in cfg.bots}
    changed = [name for name, was in before.items() if name in now and now[name] != was]
    if changed:
        played = {b for m in store.matches(scope) for b in m.bots}
        for name in changed:
            if name in played:
                what = ("its spec" if now[name][0] != before[name][0]
                        else "its code")
                raise ConfigError(
                    f"bot {name!r} is not the bot that played this tournament's matches "
                    f"({what} changed since): give the tournament a new --name (or seed) to "
                    f"start afresh, or restore the bot to resume")
    store.set_scope_bots(scope, [(n, s, f) for n, (s, f) in now.items()])


def _check_specs(cfg: TournamentConfig) -> None:
    from arena.botspec import SpecError, is_python_spec

    for b in cfg.bots:
        if b.is_remote:
            continue
        if cfg.mode is Mode.IN_PROCESS and not is_python_spec(b.spec):
            raise ConfigError(f"bot {b.name!r}: mode in_process runs Python bots only, not "
                              f"{b.spec!r}")
        try:
            check_spec(b.spec)
        except SpecError as e:
            raise ConfigError(f"bot {b.name!r}: {e}") from None


# ---------------------------------------------------------------- in process


async def _play_in_process(run: _Run) -> None:
    cfg = run.cfg
    specs = {b.name: b.spec for b in cfg.bots}
    want_record = cfg.replays is not None
    workers = min(cfg.workers, run.pending)
    if workers <= 1:
        player = InProcessPlayer(specs, cfg.rules, cfg.time_control, want_record)
        while (spec := run.next()) is not None:
            # on a thread, so the committer and Ctrl-C are served while a match plays
            result, record = await trio.to_thread.run_sync(player.play, spec)
            run.commit(spec, result, record)
        return
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=init_worker,
        initargs=(specs, cfg.rules, cfg.time_control, want_record, os.getpid(), sys.path))
    try:
        async with trio.open_nursery() as nursery:

            async def worker() -> None:
                while (spec := run.next()) is not None:
                    future = pool.submit(play_in_worker, spec)
                    try:
                        result, record = await trio.to_thread.run_sync(
                            future.result, abandon_on_cancel=True)
                    except BrokenProcessPool:
                        raise RunError(
                            "an in-process worker died (did a bot end its process?); the "
                            "finished matches are saved: rerun to resume, or use "
                            "mode = \"process\" for untrusted bots") from None
                    run.commit(spec, result, record)

            for _ in range(workers):
                nursery.start_soon(worker)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------- over gRPC


async def _play_networked(run: _Run) -> None:
    cfg = run.cfg
    tc = cfg.time_control
    workers = min(cfg.workers, run.pending)
    tokens: dict[str, str] = {}  # token -> bot name
    remote: dict[str, str] = {}  # bot name -> its token
    for b in cfg.bots:
        if b.is_remote:
            tokens[b.token] = b.name
            remote[b.name] = b.token
    arena = Arena(tokens=tokens, hello_timeout_s=tc.hello_timeout_ms / 1000)
    logs_dir = cfg.replays / "bot-logs" if cfg.replays is not None else None
    async with trio.open_nursery() as root:
        port = await start_arena(root, arena, host=cfg.host, port=cfg.port)
        address = f"{cfg.host}:{port}"
        log.info("tournament_arena", address=address, scope=run.scope)
        seats: dict[str, BotPool | str] = dict(remote)
        for b in cfg.bots:
            if b.is_remote:
                continue
            processes = []
            for i in range(workers):
                token = secrets.token_hex(16)
                tokens[token] = b.name
                log_path = logs_dir / f"{b.name}-{i}.log" if logs_dir is not None else None
                processes.append(BotProcess(b.name, i, token, b.spec, address, log_path))
            seats[b.name] = BotPool(processes)
        # a remote bot plays as many matches at once as it has sessions (default one)
        limits = {b.name: trio.Semaphore(b.sessions) for b in cfg.bots if b.is_remote}
        pools = [pool for pool in seats.values() if isinstance(pool, BotPool)]
        # with no remote bot, a session refused for its token is a launched bot without it
        strict = not remote and _is_loopback(cfg.host)
        async with launched(arena, pools, cfg.show_up_s, strict_tokens=strict):

            async def worker(scope: trio.CancelScope) -> None:
                while (spec := run.next()) is not None:
                    driver = MatchDriver(spec.match_id, cfg.rules, spec.seats, seed=spec.seed,
                                         time_control=tc,
                                         meta={"deal": spec.deal, "seat_order": spec.order})
                    async with contextlib.AsyncExitStack() as held:
                        for name in sorted(set(spec.seats) & set(limits)):  # one order: no
                            await held.enter_async_context(limits[name])  # deadlock
                        result = await play_seated(arena, driver, (seats[spec.seats[0]],
                                                                   seats[spec.seats[1]]),
                                                   cfg.show_up_s)
                    run.commit(spec, result, driver.record)
                    if run.stopped:
                        scope.cancel()  # SPRT decided: the matches in flight are moot

            async with trio.open_nursery() as matches:
                for _ in range(workers):
                    matches.start_soon(worker, matches.cancel_scope)
        root.cancel_scope.cancel()


__all__ = ["RunError", "RunSummary", "check_runnable", "resolve_seed", "run_tournament",
           "score_of"]
