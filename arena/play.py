"""Local play: ``arena play A B --games N``.

Starts an embedded arena on a free loopback port, launches each bot as its own process
(Python bots through ``sdk.launch``; any other command is run as given with ARENA_ADDRESS,
ARENA_TOKEN and ARENA_NAME in its environment, so bots in other languages work), plays the
games ``concurrency`` at a time with fair seating (each deal is played twice, seats
swapped), writes a replay per match and prints a result table. ``in_process=True`` calls
Python bots directly instead (no network, same bot code).
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import os
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import trio

from arena import texttable
from arena.botspec import SpecError, bot_name, is_python_spec
from arena.groups import first_leaf
from arena.match.driver import MatchDriver, derive_seed, new_seed
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.processes import (
    BotPool,
    BotProcess,
    LaunchError,
    check_spec,
    launched,
    play_seated,
)
from arena.rules import RulesConfig
from arena.server.arena import Arena, start_arena, write_replay
from arena.tournament.formats import MatchSpec as TaskSpec
from arena.tournament.inproc import InProcessPlayer, init_worker, play_batch_in_worker

log = structlog.get_logger("arena.play")


@dataclass(frozen=True)
class Entrant:
    spec: str
    name: str
    token: str

    @property
    def is_python(self) -> bool:
        return is_python_spec(self.spec)


def make_entrants(specs: Sequence[str]) -> list[Entrant]:
    """Entrants with unique names; ``SpecError`` for a spec that names no bot."""
    out: list[Entrant] = []
    seen: dict[str, int] = {}
    for spec in specs:
        check_spec(spec)  # read, not run: fail early, with the reason
        base = bot_name(spec)
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}-{seen[base]}"
        out.append(Entrant(spec, name, secrets.token_hex(8)))
    return out


@dataclass(frozen=True)
class MatchSpec:
    match_id: str
    seats: tuple[int, int]  # entrant index in seat 0 and seat 1
    seed: str
    deal: int = 0  # the two matches of a deal share its seed, seats swapped


def schedule(pairs: Sequence[tuple[int, int]], games: int, seed: str) -> list[MatchSpec]:
    """``games`` matches per pair; each deal is played twice with the seats swapped, and
    every pair gets the same deals. The seed alone gives the deals (``--seed`` reproduces a
    run on a laptop); tournaments and the ladder also key them with a secret."""
    out = []
    for a, b in pairs:
        for g in range(games):
            seats = (a, b) if g % 2 == 0 else (b, a)
            out.append(MatchSpec(f"{a}v{b}-{g:04d}", seats, derive_seed(seed, f"deal:{g // 2}"),
                                 g // 2))
    return out


# ---------------------------------------------------------------- tallies


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Tally:
    name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    voids: int = 0
    points: int = 0
    hands: int = 0
    hands_won: int = 0
    gins: int = 0
    undercuts: int = 0
    timeouts: int = 0
    illegal: int = 0
    errors: int = 0  # bot errors: its code raised, or answered with something not a move
    first_error: str = ""
    forfeits: int = 0
    draws: int = 0  # games played out with no winner (level scores, or the hand cap)

    def add(self, result: MatchResult, seat: int) -> None:
        self.games += 1
        if result.winner is None and result.termination in (Termination.COMPLETED,
                                                            Termination.CAPPED):
            self.draws += 1
        elif result.winner is None:
            self.voids += 1
        elif result.winner == seat:
            self.wins += 1
        else:
            self.losses += 1
        if result.blamed == seat:
            self.forfeits += 1
        self.points += result.scores[seat]
        for h in result.hands:
            self.hands += 1
            if h.winner == seat:
                self.hands_won += 1
                self.gins += h.kind in ("gin", "big_gin")
                self.undercuts += h.kind == "undercut"
        stats = result.stats[seat]
        self.timeouts += stats.timeouts
        self.illegal += stats.rejections
        self.errors += stats.errors
        if stats.first_error and not self.first_error:
            self.first_error = stats.first_error

    def win_interval(self) -> tuple[float, float, float]:
        decided = self.wins + self.losses
        rate = self.wins / decided if decided else 0.0
        lo, hi = wilson(self.wins, decided)
        return rate, lo, hi


def tally(results: Sequence[tuple[MatchSpec, MatchResult]], names: Sequence[str]) -> list[Tally]:
    out = [Tally(n) for n in names]
    for spec, result in results:
        for seat in (0, 1):
            out[spec.seats[seat]].add(result, seat)
    return out


def format_table(tallies: Sequence[Tally], width: int | None = None) -> str:
    head = ("bot", "games", "W-D-L", "win rate [95% CI]", "points", "pts/hand", "hands won",
            "gins", "undercuts", "timeouts", "illegal", "errors", "forfeits")
    rows = []
    for t in tallies:
        rate, lo, hi = t.win_interval()
        rows.append((t.name, str(t.games), f"{t.wins}-{t.draws}-{t.losses}",
                     f"{rate:.1%} [{lo:.1%}, {hi:.1%}]",
                     str(t.points), f"{t.points / t.hands:.2f}" if t.hands else "-",
                     f"{t.hands_won}/{t.hands}", str(t.gins), str(t.undercuts),
                     str(t.timeouts), str(t.illegal), str(t.errors), str(t.forfeits)))
    return texttable.render(head, rows, left={0}, keep=1, width=width)


def format_problems(tallies: Sequence[Tally], logs_dir: Path | None) -> str:
    """What went wrong with each bot's code, after the table ("" if nothing did): how many
    bot errors, the first one with the line it came from, and where the bot's log is."""
    lines = []
    for t in tallies:
        if not t.errors:
            continue
        log = (f"; its log: {logs_dir / t.name}-*.log" if logs_dir is not None
               else "; in-process: the bot's output went to this terminal")
        lines.append(f"  {t.name}: {t.errors} bot error{'s' if t.errors != 1 else ''}; "
                     f"first: {t.first_error}{log}")
    if not lines:
        return ""
    return "\n".join(["problems (docs/protocol.md, \"The bot contract\"):", *lines])


# ---------------------------------------------------------------- running


@dataclass
class PlayOptions:
    specs: list[str]
    games: int = 10
    rules: RulesConfig = field(default_factory=RulesConfig)
    time_control: TimeControl = field(default_factory=TimeControl)
    concurrency: int = 0  # 0: fits the machine
    seed: str = ""
    replay_dir: Path | None = None
    in_process: bool = False
    progress: bool = True
    show_up_s: float = 30.0


def default_concurrency() -> int:
    return max(1, min(8, (os.cpu_count() or 2) * 2))


def _progress(total: int, enabled: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    if not enabled:
        return (lambda: None), (lambda: None)
    from tqdm import tqdm

    bar = tqdm(total=total, unit="match", file=sys.stderr, dynamic_ncols=True)
    return (lambda: bar.update(1)), bar.close


def play_in_process(opts: PlayOptions, entrants: list[Entrant], specs: list[MatchSpec],
                    out: list[tuple[MatchSpec, MatchResult]]) -> None:
    """Call the Python bots directly: in this process, or with ``concurrency`` > 1 (default:
    one per CPU) in a pool of worker processes, as in-process tournaments do. Each result
    is appended to ``out`` as it comes (so an interrupted run keeps what it played)."""
    bots = {e.name: e.spec for e in entrants}
    want_record = opts.replay_dir is not None
    workers = min(opts.concurrency or os.cpu_count() or 1, len(specs))
    tick, close = _progress(len(specs), opts.progress)

    def as_task(spec: MatchSpec) -> TaskSpec:
        a, b = spec.seats
        return TaskSpec(spec.match_id, (entrants[a].name, entrants[b].name), spec.deal, 0,
                        spec.seed)

    def finished(spec: MatchSpec, result: MatchResult, record: list[Any] | None) -> None:
        if record is not None and opts.replay_dir is not None:
            write_replay(opts.replay_dir / f"{spec.match_id}.jsonl", record)
        out.append((spec, result))
        tick()

    try:
        if workers <= 1:
            player = InProcessPlayer(bots, opts.rules, opts.time_control, want_record)
            for spec in specs:
                finished(spec, *player.play(as_task(spec)))
        else:
            context = multiprocessing.get_context("spawn")
            pool = ProcessPoolExecutor(workers, mp_context=context, initializer=init_worker,
                                       initargs=(bots, opts.rules, opts.time_control,
                                                 want_record, os.getpid(), sys.path))
            try:
                # a few matches per task: fewer round trips, still even across workers
                size = max(1, min(16, len(specs) // (workers * 8)))
                batches = [specs[i:i + size] for i in range(0, len(specs), size)]
                futures = {pool.submit(play_batch_in_worker, [as_task(s) for s in batch]):
                           batch for batch in batches}
                for future in as_completed(futures):
                    try:
                        played = future.result()
                    except BrokenProcessPool:
                        raise SpecError("an in-process worker died (did a bot end its "
                                        "process?); play without --in-process to run bots "
                                        "as processes") from None
                    for spec, (result, record) in zip(futures[future], played, strict=True):
                        finished(spec, result, record)
            finally:  # on Ctrl-C too: what has not started is dropped, not waited for
                pool.shutdown(wait=True, cancel_futures=True)
    finally:
        close()


async def play_networked(opts: PlayOptions, entrants: list[Entrant], specs: list[MatchSpec],
                         out: list[tuple[MatchSpec, MatchResult]]) -> None:
    """Run ``specs`` on an embedded arena with every bot in its own processes (as many per
    bot as its matches can run at once; a process that exits is restarted a few times,
    then that bot's remaining matches are forfeited at once). Each result is appended to
    ``out`` as it comes."""
    tc = opts.time_control
    tokens: dict[str, str] = {}  # token -> bot name: only the launched processes may play
    arena = Arena(tokens=tokens, replay_dir=opts.replay_dir,
                  hello_timeout_s=tc.hello_timeout_ms / 1000)
    concurrency = opts.concurrency or default_concurrency()
    per_bot = min(concurrency, len(specs))
    logs_dir = opts.replay_dir / "bot-logs" if opts.replay_dir is not None else None
    tick, close = _progress(len(specs), opts.progress)
    try:
        async with trio.open_nursery() as nursery:
            port = await start_arena(nursery, arena)
            address = f"127.0.0.1:{port}"
            pools: list[BotPool] = []
            for e in entrants:
                pools.append(BotPool([
                    BotProcess(e.name, i, secrets.token_hex(16), e.spec, address,
                               logs_dir / f"{e.name}-{i}.log" if logs_dir is not None else None)
                    for i in range(per_bot)]))
            for pool in pools:
                tokens.update((p.token, p.bot) for p in pool.all)
            async with launched(arena, pools, opts.show_up_s, strict_tokens=True):
                send, receive = trio.open_memory_channel[MatchSpec](math.inf)
                for spec in specs:
                    send.send_nowait(spec)
                send.close()

                async def worker() -> None:
                    async for spec in receive:
                        a, b = spec.seats
                        driver = MatchDriver(spec.match_id, opts.rules,
                                             (entrants[a].name, entrants[b].name),
                                             seed=spec.seed, time_control=tc)
                        result = await play_seated(arena, driver, (pools[a], pools[b]),
                                                   opts.show_up_s)
                        out.append((spec, result))
                        tick()

                async with trio.open_nursery() as workers:
                    for _ in range(min(concurrency, len(specs))):
                        workers.start_soon(worker)
            nursery.cancel_scope.cancel()
    finally:
        close()


@dataclass
class PlayRun:
    """A run of ``arena play``, as far as it got: the entrants, the schedule, the results
    played (in schedule order), and whether it was cut short (Ctrl-C)."""

    opts: PlayOptions
    entrants: list[Entrant]
    specs: list[MatchSpec]
    results: list[tuple[MatchSpec, MatchResult]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    elapsed: float = 0.0
    interrupted: bool = False

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entrants]

    def tallies(self) -> list[Tally]:
        return tally(self.results, self.names)


def prepare_play(opts: PlayOptions) -> PlayRun:
    """The entrants and schedule of a run; ``SpecError`` for a bot that cannot play."""
    entrants = make_entrants(opts.specs)
    seed = opts.seed or new_seed()
    opts = dataclasses.replace(opts, seed=seed)
    pairs = [(i, j) for i in range(len(entrants)) for j in range(i + 1, len(entrants))]
    if opts.in_process:
        not_python = [e.spec for e in entrants if not e.is_python]
        if not_python:
            raise SpecError(f"--in-process runs Python bots only, not {not_python[0]!r}")
    return PlayRun(opts, entrants, schedule(pairs, opts.games, seed))


def run_play(run: PlayRun) -> PlayRun:
    """Play the run's schedule into ``run.results``. On Ctrl-C the results so far stay in
    ``run`` (``interrupted``) and KeyboardInterrupt goes on up."""
    opts, out = run.opts, run.results
    run.started = time.perf_counter()
    try:
        if opts.in_process:
            play_in_process(opts, run.entrants, run.specs, out)
        else:
            try:
                trio.run(play_networked, opts, run.entrants, run.specs, out)
            except BaseExceptionGroup as group:
                failed = group.subgroup(LaunchError)
                if failed is None:
                    raise
                raise SpecError(str(first_leaf(failed))) from None
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt) or (
                isinstance(e, BaseExceptionGroup) and e.subgroup(KeyboardInterrupt)):
            run.interrupted = True
        raise
    finally:
        run.elapsed = time.perf_counter() - run.started
        out.sort(key=lambda item: item[0].match_id)
    return run


def format_crosstable(run: PlayRun, width: int | None = None) -> str:
    """Each bot's results against each other bot (row against column), as W-D-L."""
    names = run.names
    cells = {(a, b): [0, 0, 0] for a in range(len(names)) for b in range(len(names))}
    for spec, result in run.results:
        for seat in (0, 1):
            me, them = spec.seats[seat], spec.seats[1 - seat]
            if result.winner is None:
                if result.termination in (Termination.COMPLETED, Termination.CAPPED):
                    cells[(me, them)][1] += 1
            else:
                cells[(me, them)][0 if result.winner == seat else 2] += 1
    rows = [[names[a], *("-" if a == b else "{}-{}-{}".format(*cells[(a, b)])
                         for b in range(len(names)))] for a in range(len(names))]
    table = texttable.render(["vs", *names], rows, left={0}, keep=1, width=width)
    return table + "\ncell: the row bot's wins-draws-losses against the column bot"


def odd_games_note(run: PlayRun) -> str:
    """What an odd ``--games`` means for fairness ("" if it is even)."""
    games = run.opts.games
    if games % 2 == 0:
        return ""
    firsts = sorted({run.names[s.seats[0]] for s in run.specs
                     if s.match_id.endswith(f"-{games - 1:04d}")})
    return (f"note: --games {games} is odd, so the last deal of each pairing is played once "
            f"instead of twice with the seats swapped; in it seat 0 (the first dealer) went "
            f"to {', '.join(firsts)}. Use an even --games for duplicate fairness.")


def summary(run: PlayRun) -> dict[str, Any]:
    """The run as JSON: what was asked, how far it got, each bot's tally."""
    opts = run.opts
    return {
        "seed": opts.seed, "rules": opts.rules.to_dict(),
        "time_control": {k: getattr(opts.time_control, k)
                         for k in opts.time_control.__dataclass_fields__},
        "in_process": opts.in_process, "games_per_pair": opts.games,
        "bots": [{"name": e.name, "spec": e.spec} for e in run.entrants],
        "scheduled": len(run.specs), "played": len(run.results),
        "complete": len(run.results) == len(run.specs) and not run.interrupted,
        "interrupted": run.interrupted, "seconds": round(run.elapsed, 3),
        "hands": sum(len(r.hands) for _, r in run.results),
        "tallies": [dataclasses.asdict(t) for t in run.tallies()],
    }


__all__ = ["PlayOptions", "PlayRun", "Tally", "Termination", "format_crosstable",
           "format_problems", "format_table", "odd_games_note", "prepare_play", "run_play",
           "schedule", "summary", "wilson"]
