"""``arena play A B ...``: a round robin of the given bots on the run's own store.

The bots are checked (read, never run), named by the one naming rule
(``arena.botspec.entrant_names``), and scheduled as a round robin of ``games`` matches per
pair on duplicate deals (each deal twice, seats swapped; deals keyed from the seed, so
``--seed`` reproduces a run). The series layer plays it (``arena.series.coordinator``):
``workers`` worker processes, each with its own embedded arena on a free loopback port
and each bot launched beside it as its own processes (or called in-process with
``in_process``), into a SQLite store kept in the run's folder (``results.sqlite``), from
which the table is read (``arena.playreport``).
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio
from gin_arena_core.rules import RulesConfig

from arena.botspec import SpecError, entrant_names, is_python_spec
from arena.groups import first_leaf
from arena.match.driver import new_seed
from arena.match.messages import TimeControl
from arena.match.spec import MatchSpec
from arena.processes import LaunchError, check_spec
from arena.series.coordinator import SeriesError, default_workers, per_worker, run_series
from arena.series.plan import Entrant, Plan
from arena.series.schedule import keyed, round_robin, schedule
from arena.series.tally import Tally, tally
from arena.store.base import MatchRow, ResultRow
from arena.store.sqlite import SqliteStore

SCOPE = "play"
STORE_NAME = "results.sqlite"


def make_entrants(specs: Sequence[str]) -> list[Entrant]:
    """Entrants with unique names; ``SpecError`` for a spec that names no bot."""
    for spec in specs:
        check_spec(spec)  # read, not run: fail early, with the reason
    return [Entrant(name, spec) for name, spec in zip(entrant_names(specs), specs, strict=True)]


def default_concurrency() -> int:
    """Matches at once over gRPC that fit this machine."""
    return max(1, min(8, (os.cpu_count() or 2) * 2))


@dataclass
class PlayOptions:
    specs: list[str]
    games: int = 10
    rules: RulesConfig = field(default_factory=RulesConfig)
    time_control: TimeControl = field(default_factory=TimeControl)
    concurrency: int = 0  # matches at once in all; 0: fits the machine
    workers: int = -1  # worker processes; -1: fits the machine
    seed: str = ""
    replay_dir: Path | None = None  # the run's folder: replays, bot logs, the store
    in_process: bool = False
    progress: bool = True
    show_up_s: float = 30.0

    @property
    def local_workers(self) -> int:
        if self.workers >= 0:
            return max(1, self.workers)
        if self.in_process:
            return self.concurrency or default_workers(in_process=True)
        return default_workers(in_process=False)

    @property
    def slots(self) -> int:
        if self.in_process:
            return 1
        return per_worker(self.concurrency or default_concurrency(), self.local_workers)


@dataclass
class PlayRun:
    """A run of ``arena play``, as far as it got: the entrants, the schedule, what the store
    recorded (read when the run ends or is interrupted), and whether it was cut short."""

    opts: PlayOptions
    entrants: list[Entrant]
    specs: list[MatchSpec]
    matches: list[MatchRow] = field(default_factory=list)
    results: list[ResultRow] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    elapsed: float = 0.0
    interrupted: bool = False

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entrants]

    @property
    def hands(self) -> int:
        return sum(m.hands for m in self.matches)

    def tallies(self) -> list[Tally]:
        return list(tally(self.results, self.names).values())


def prepare_play(opts: PlayOptions) -> PlayRun:
    """The entrants and schedule of a run; ``SpecError`` for a bot that cannot play."""
    entrants = make_entrants(opts.specs)
    if opts.in_process:
        not_python = [e.spec for e in entrants if not is_python_spec(e.spec)]
        if not_python:
            raise SpecError(f"--in-process runs Python bots only, not {not_python[0]!r}")
    seed = opts.seed or new_seed()
    opts = dataclasses.replace(opts, seed=seed)
    names = [e.name for e in entrants]
    specs = list(schedule(round_robin(names), math.ceil(opts.games / 2), seed=seed,
                          secret=_secret(seed), scope=SCOPE, games=opts.games))
    return PlayRun(opts, entrants, specs)


def _secret(seed: str) -> str:
    """The run's deal secret, from its seed: ``--seed`` alone reproduces every deal."""
    return keyed(seed, "play")[:32]


def run_play(run: PlayRun) -> PlayRun:
    """Play the run's schedule; afterwards ``run`` holds what was recorded. On Ctrl-C the
    results so far are read too (``interrupted``) and KeyboardInterrupt goes on up."""
    opts = run.opts
    folder = opts.replay_dir
    scratch = Path(tempfile.mkdtemp(prefix="arena-play-")) if folder is None else None
    db_path = (folder or scratch or Path(".")) / STORE_NAME
    store = SqliteStore(db_path, durable=False)
    run.started = time.perf_counter()
    try:
        plan = Plan(rules=opts.rules, time_control=opts.time_control,
                    bots=tuple(run.entrants), in_process=opts.in_process,
                    show_up_s=opts.show_up_s, rated=False,
                    replays=str(folder) if folder is not None else "")
        store.open_scope(SCOPE, "play", "play", _config(run, plan), _secret(opts.seed))
        trio.run(_run, store, db_path, run, plan)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt) or (
                isinstance(e, BaseExceptionGroup) and e.subgroup(KeyboardInterrupt)):
            run.interrupted = True
            raise
        if isinstance(e, BaseExceptionGroup):
            failed = e.subgroup(lambda x: isinstance(x, LaunchError | SeriesError))
            if failed is not None:
                raise SpecError(str(first_leaf(failed))) from None
        if isinstance(e, LaunchError | SeriesError):
            raise SpecError(str(e)) from None
        raise
    finally:
        run.elapsed = time.perf_counter() - run.started
        run.matches = store.matches(SCOPE)
        run.results = store.results(SCOPE)
        store.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return run


async def _run(store: SqliteStore, db_path: Path, run: PlayRun, plan: Plan) -> None:
    opts = run.opts
    tick, close = _progress(len(run.specs), opts.progress)

    def watch(rows: Sequence[MatchRow]) -> None:
        tick(len(rows))

    try:
        await run_series(store, SCOPE, plan, run.specs, db=str(db_path),
                         workers=opts.local_workers, slots=opts.slots,
                         replays=opts.replay_dir, watch=watch)
    finally:
        close()


def _config(run: PlayRun, plan: Plan) -> str:
    import json

    opts = run.opts
    return json.dumps({"seed": opts.seed, "games_per_pair": opts.games,
                       "bots": [{"name": e.name, "spec": e.spec} for e in run.entrants],
                       "plan": plan.to_dict()}, sort_keys=True)


def _progress(total: int, enabled: bool) -> tuple[Callable[[int], object], Callable[[], None]]:
    if not enabled:
        return (lambda n: None), (lambda: None)
    import sys

    from tqdm import tqdm

    bar = tqdm(total=total, unit="match", file=sys.stderr, dynamic_ncols=True)
    return bar.update, bar.close


__all__ = ["PlayOptions", "PlayRun", "default_concurrency", "make_entrants", "prepare_play",
           "run_play"]
