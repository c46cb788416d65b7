"""Run a tournament: its schedule and SPRT over the series layer, into its store.

The tournament is a scope of the store (its name and config hash) whose plan and schedule
``arena.series.coordinator.run_series`` plays: on this machine's workers (``workers``,
default fitted to it), on ``arena worker`` processes elsewhere (``workers = 0``), or both.
Two ways to seat the bots, the same schedule and the same records:

* ``process`` (default): each worker serves its own arena; each bot with a spec is
  launched beside it as processes that connect with a token made for them; a bot without a
  spec is remote and connects itself with the token from the config (to the one worker in
  this process, on ``host:port``). Time limits and the fault policy apply: a bot that
  stalls or crashes loses its games and the tournament goes on; a bot process that keeps
  exiting forfeits its remaining matches.
* ``in_process``: Python bots called directly by each worker (no network; trusted bots).

Matches already in the store are skipped, so running the same command again after a crash
or a kill resumes where it stopped. A match no bot came to is not recorded and is played
by the next run. A match voided by the arena's own fault is recorded but neither counted
nor rated. An SPRT stops the scope once it has decided; results that arrive after are kept,
marked as after the verdict, and left out of the test.

A tournament without a seed gets a fresh 128-bit one, stored with the scope and printed;
running the same command again (same name, no seed) reuses the stored seed, so it resumes.
Deal seeds and match ids are keyed with the scope's secret (``arena.series.schedule``).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import structlog
import trio

from arena.botspec import SpecError, is_python_spec
from arena.groups import first_leaf
from arena.match.driver import new_seed
from arena.match.spec import MatchSpec
from arena.processes import LaunchError, check_spec, spec_fingerprint
from arena.series.commit import CommitError
from arena.series.coordinator import SeriesError, SeriesOutcome, run_series
from arena.series.plan import Entrant, Plan
from arena.server.bridge import check_bindable
from arena.store import open_store
from arena.store.base import MatchRow, Store
from arena.tournament.config import ConfigError, Format, Mode, TournamentConfig
from arena.tournament.formats import tournament_schedule
from arena.tournament.sprt import SprtTracker, SprtVerdict

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
    played: int = 0  # recorded while this run followed the tournament
    voided: int = 0  # of those, voided (arena's fault)
    unplayed: int = 0  # neither bot came: not recorded, a rerun plays them
    after_verdict: int = 0  # recorded after the SPRT decided
    hands: int = 0  # hands in the matches of this run
    seconds: float = 0.0
    workers: int = 0  # local workers
    sprt: SprtVerdict | None = None
    forfeits: dict[str, int] = field(default_factory=dict)

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else 0.0


def plan_of(cfg: TournamentConfig) -> Plan:
    """What a worker needs to play this tournament's matches."""
    return Plan(rules=cfg.rules, time_control=cfg.time_control,
                bots=tuple(Entrant(b.name, b.spec, b.token, b.sessions) for b in cfg.bots),
                in_process=cfg.mode is Mode.IN_PROCESS, show_up_s=cfg.show_up_s, rated=True,
                host=cfg.host, port=cfg.port,
                replays=str(cfg.replays) if cfg.replays is not None else "")


class _Follower:
    """What the tournament makes of each batch of newly recorded matches: the summary, the
    SPRT (whose verdict stops the scope) and the progress bar."""

    def __init__(self, cfg: TournamentConfig, summary: RunSummary, store: Store,
                 progress: bool, on_recorded: Callable[[MatchRow], None] | None) -> None:
        self.cfg = cfg
        self.summary = summary
        self.on_recorded = on_recorded
        self.tracker: SprtTracker | None = None
        self._deals: dict[int, dict[int, float | None]] = {}
        self.seen = store.finished_ids(cfg.scope)
        if cfg.format is Format.SPRT:
            s = cfg.sprt
            self.tracker = SprtTracker(elo0=s.elo0, elo1=s.elo1, alpha=s.alpha, beta=s.beta,
                                       max_deals=s.max_deals)
            for row in store.matches(cfg.scope):
                self._feed(row)
        total = None if self.tracker else summary.scheduled - summary.already
        self._tick, self._close = _progress(total, progress)

    def _feed(self, row: MatchRow) -> None:
        if self.tracker is None or row.after_verdict or set(row.bots) != set(self.cfg.names):
            return
        got = self._deals.setdefault(row.deal, {})
        got[row.order] = row.score_of(self.cfg.names[0])
        if len(got) == 2:
            s0, s1 = got[0], got[1]
            self.tracker.add(row.deal, None if s0 is None or s1 is None else (s0 + s1) / 2)

    def __call__(self, rows: Sequence[MatchRow]) -> str | None:
        s = self.summary
        for row in rows:
            if row.match_id in self.seen:
                continue
            decided = self.tracker is not None and self.tracker.status != "running"
            self.seen.add(row.match_id)
            s.played += 1
            s.voided += row.voided
            s.after_verdict += row.after_verdict or decided  # stopping marks it in the store
            s.hands += row.hands
            if row.blamed is not None:
                bot = row.bots[row.blamed]
                s.forfeits[bot] = s.forfeits.get(bot, 0) + 1
            self._feed(row)
            self._tick()
            if self.on_recorded is not None:
                self.on_recorded(row)
        if self.tracker is not None and self.tracker.status != "running":
            return str(self.tracker.status)
        return None

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
                   on_recorded: Callable[[MatchRow], None] | None = None) -> RunSummary:
    """Play what is left of ``cfg``'s schedule and record it; returns what this run did.

    ``store`` defaults to the config's database. ``ConfigError`` for bot specs that do
    not load; ``RunError`` if the run cannot go on. Interrupting it (Ctrl-C, kill) loses no
    finished match.
    """
    check_runnable(cfg)
    own = store is None
    db: Store = store if store is not None else open_store(cfg.database)
    try:
        cfg, source = resolve_seed(cfg, db)
        plan = plan_of(cfg)
        config = {**cfg.to_dict(), "plan": plan.to_dict()}
        bots = _check_same_bots(cfg, db)  # before the plan workers read is replaced
        secret = db.open_scope(cfg.scope, "tournament", cfg.name,
                               json.dumps(config, sort_keys=True), cfg.secret)
        db.add_bots((b.name, b.spec) for b in cfg.bots)
        db.set_scope_bots(cfg.scope, bots)
        schedule = list(tournament_schedule(cfg, secret))
        done = db.finished_ids(cfg.scope)
        summary = RunSummary(cfg.scope, cfg.seed, source, scheduled=len(schedule),
                             already=sum(s.match_id in done for s in schedule),
                             workers=cfg.local_workers)
        follower = _Follower(cfg, summary, db, progress, on_recorded)
        started = time.perf_counter()
        try:
            if follower.tracker is not None and follower.tracker.status != "running":
                return summary  # decided by an earlier run
            outcome = trio.run(_run, db, cfg, plan, schedule, follower)
            summary.unplayed = outcome.skipped
        except BaseExceptionGroup as group:
            if group.subgroup(KeyboardInterrupt) is not None:
                raise KeyboardInterrupt from None
            failed = group.subgroup(
                lambda e: isinstance(e, RunError | CommitError | LaunchError | SeriesError))
            if failed is None:
                raise
            raise RunError(_why(first_leaf(failed), cfg)) from None
        except (CommitError, SeriesError) as e:
            raise RunError(_why(e, cfg)) from None
        finally:
            summary.seconds = time.perf_counter() - started
            follower.close()
        return summary
    finally:
        if own:
            db.close()


def _why(error: BaseException, cfg: TournamentConfig) -> str:
    text = str(error)
    if cfg.mode is Mode.IN_PROCESS and "exited with code" in text:
        return (f"an in-process worker died ({text}); did a bot end its process? The "
                "finished matches are saved: rerun to resume, or use mode = \"process\" for "
                "untrusted bots")
    return text


async def _run(store: Store, cfg: TournamentConfig, plan: Plan, schedule: list[MatchSpec],
               follower: _Follower) -> SeriesOutcome:
    return await run_series(store, cfg.scope, plan, schedule, db=cfg.database,
                            workers=cfg.local_workers, slots=cfg.slots,
                            replays=cfg.replays, watch=follower)


def check_runnable(cfg: TournamentConfig) -> None:
    """``ConfigError`` (one line) if a bot spec does not load or the port cannot be bound."""
    _check_specs(cfg)
    if cfg.mode is not Mode.IN_PROCESS and cfg.local_workers:
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


def _check_same_bots(cfg: TournamentConfig, store: Store) -> list[tuple[str, str, str]]:
    """``ConfigError`` if a bot with matches in this tournament is not the bot that played
    them (another spec, or its main file changed); else what each bot is now (bot, spec,
    fingerprint), to record."""
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
    return [(n, s, f) for n, (s, f) in now.items()]


def _check_specs(cfg: TournamentConfig) -> None:
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


__all__ = ["RunError", "RunSummary", "check_runnable", "plan_of", "resolve_seed",
           "run_tournament"]
