"""The ladder: a long-running arena where registered bots are paired continuously.

A bot is registered once (``arena register DB NAME``): it gets a secret token, and only
the token's SHA-256 is stored. A bot connects with its token (the Hello's name is
ignored: the registered name is used); an unknown token is refused with UNAUTHENTICATED.
Bots waiting in the lobby are paired after a short settle delay:

* new bots first: waiting bots are taken in order of fewest rated games, so a newcomer
  is always paired and, with an odd number waiting, the most experienced bot sits out;
* similar ratings: its opponent is the waiting bot with the nearest openskill mu ...
* a spread of opponents: ... plus a penalty for each recent meeting of the two.

Each time two bots meet they play the next match of their own duplicate series: the
2k-th and (2k+1)-th meetings share a deal seed with the seats swapped. Every finished match
is recorded with the rating update in one transaction (scope ``ladder``), so stopping
and restarting the ladder keeps registrations, ratings and history. A match cut by a
shutdown or a no-show is not recorded; a voided one is recorded but not rated.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
from collections import Counter, defaultdict, deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import grpc
import structlog
import trio

from arena.match.driver import MatchDriver, derive_seed, new_seed
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.protocol import pb
from arena.rules import RulesConfig
from arena.server.arena import Arena, GrpcSeat, write_replay
from arena.server.bridge import serve_grpc
from arena.tournament.config import NAME_RE
from arena.tournament.formats import MatchSpec, canonical
from arena.tournament.ratings import LiveRatings
from arena.tournament.report import leaderboard_rows
from arena.tournament.runner import score_of
from arena.tournament.store import Rating, Store, StoreError

log = structlog.get_logger("arena.ladder")

SCOPE = "ladder"
RECENT = 6  # opponents remembered per bot for the spread penalty
REPEAT_PENALTY = 1.0  # cost of each recent meeting, in units of the initial sigma
MIN_TOKEN = 16
NEW_BOT = Rating(25.0, 25 / 3, 0)  # openskill's default rating


class RegistrationError(ValueError):
    """A name or token that cannot be registered (one line)."""


def hash_token(token: str) -> str:
    """How a token is stored: its SHA-256 (tokens are long and random, so no salt is
    needed to make guessing useless; a lookup by hash stays a single index probe)."""
    return hashlib.sha256(token.encode()).hexdigest()


def register(store: Store, name: str, token: str | None = None) -> str:
    """Register ``name`` and return its token (made up if not given; shown only now)."""
    if not NAME_RE.match(name):
        raise RegistrationError(f"bot name {name!r}: use letters, digits and _.+- "
                                "(at most 64)")
    token = token if token is not None else secrets.token_hex(24)  # never starts with "-"
    if len(token) < MIN_TOKEN:
        raise RegistrationError(f"a token needs at least {MIN_TOKEN} characters")
    try:
        store.register_bot(name, hash_token(token))
    except StoreError as e:
        raise RegistrationError(str(e)) from None
    return token


class TokenBook(Mapping[str, str]):
    """token -> registered bot name, looked up by hash in the store (read on each miss,
    so a bot registered while the ladder runs can connect at once)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._known: dict[str, str] = {}

    def __getitem__(self, token: str) -> str:
        if not token:
            raise KeyError(token)
        digest = hash_token(token)
        name = self._known.get(digest) or self._store.bot_for_token_hash(digest)
        if name is None:
            raise KeyError("unknown token")
        self._known[digest] = name
        return name

    def __iter__(self) -> Iterator[str]:
        return iter(())  # only hashes are kept: the tokens cannot be listed

    def __len__(self) -> int:
        return len(self._store.registered_bots())


# ---------------------------------------------------------------- pairing


@dataclass(frozen=True, slots=True)
class Candidate:
    bot: str
    key: str
    sessions: int  # live waiting sessions of this bot


def choose_pairs(waiting: Sequence[Candidate], ratings: Mapping[str, Rating],
                 recent: Mapping[str, Sequence[str]], rng: random.Random,
                 default: Rating = NEW_BOT) -> list[tuple[Candidate, Candidate]]:
    """Pairs to start now among the waiting bots (see the module docstring)."""
    left = {c.bot: c.sessions for c in waiting}
    by_bot = {c.bot: c for c in waiting}
    order = sorted(waiting, key=lambda c: ratings.get(c.bot, default).games)
    if len(order) > 2 and sum(left.values()) % 2:
        left[order[-1].bot] -= 1  # an odd session out: the most experienced bot waits
    pairs: list[tuple[Candidate, Candidate]] = []
    while True:
        first = next((c for c in order if left[c.bot] > 0
                      and any(left[o] > 0 for o in left if o != c.bot)), None)
        if first is None:
            return pairs
        ra = ratings.get(first.bot, default)

        def cost(other: str, ra: Rating = ra, first: Candidate = first) -> float:
            rb = ratings.get(other, default)
            met = sum(1 for o in recent.get(first.bot, ()) if o == other)
            return (abs(ra.mu - rb.mu) / default.sigma + REPEAT_PENALTY * met
                    + rng.random() * 0.05)

        others = [o for o in left if o != first.bot and left[o] > 0]
        second = min(others, key=cost)
        left[first.bot] -= 1
        left[second] -= 1
        pairs.append((first, by_bot[second]))


# ---------------------------------------------------------------- the server


@dataclass
class LadderOptions:
    rules: RulesConfig = field(default_factory=RulesConfig)
    time_control: TimeControl = field(default_factory=TimeControl)
    seed: str = ""  # deal seeds; default: made once and kept in the database
    settle_s: float = 0.25  # after an arrival, wait this long for more before pairing
    replay_dir: Path | None = None


class Ladder:
    """The ladder's state: the arena, the live ratings and the pairing loop."""

    def __init__(self, store: Store, options: LadderOptions | None = None) -> None:
        opts = options or LadderOptions()
        self.store = store
        self.options = opts
        existing = {s.scope for s in store.scopes()}
        if SCOPE in existing:
            saved = store.scope_config(SCOPE)
            seed = opts.seed or str(saved.get("seed", ""))
        else:
            seed = opts.seed or new_seed()
            store.open_scope(SCOPE, "ladder", "ladder", json.dumps({
                "format": "ladder", "seed": seed, "rules": opts.rules.to_dict()}))
        self.seed = seed
        self.live = LiveRatings(store.ratings(SCOPE))
        self.arena = Arena(tokens=TokenBook(store),
                           hello_timeout_s=opts.time_control.hello_timeout_ms / 1000)
        self.recent: dict[str, deque[str]] = defaultdict(lambda: deque(maxlen=RECENT))
        self._meetings: dict[tuple[str, str], int] = {}
        for m in store.matches(SCOPE):
            a, b = m.bots
            self.recent[a].append(b)
            self.recent[b].append(a)
            pair = m.pair
            self._meetings[pair] = max(self._meetings.get(pair, 0), 2 * m.deal + m.order + 1)
        self.playing: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self.matches_played = 0
        self._recorded = trio.Event()

    # ------------------------------------------------------------------ serving

    async def serve(self, *, host: str = "127.0.0.1", port: int = 0,
                    tls: tuple[bytes, bytes] | None = None,
                    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve gRPC (Play and Leaderboard) and pair bots until cancelled. Cancellation
        ends the matches in flight as ``shutdown`` (not recorded: nothing is half-written)."""
        async with trio.open_nursery() as nursery:
            bound: int = await nursery.start(partial(
                serve_grpc, self.arena.session, host=host, port=port,
                leaderboard=self.leaderboard, tls=tls))
            log.info("ladder_ready", address=f"{host}:{bound}", tls=tls is not None)
            task_status.started(bound)
            await self.pair_forever(nursery)

    async def pair_forever(self, nursery: trio.Nursery) -> None:
        """Whenever bots wait, pair them and start their matches in ``nursery``."""
        while True:
            if not self.pair_now(nursery):
                await self.arena.wait_arrival()
            await trio.sleep(self.options.settle_s)

    def pair_now(self, nursery: trio.Nursery) -> int:
        """Start every match the waiting bots allow now; returns how many."""
        sessions: Counter[str] = Counter()
        keys: dict[str, str] = {}
        for key, name in self.arena.waiting():
            sessions[name] += 1
            keys[name] = key
        waiting = [Candidate(n, keys[n], c) for n, c in sessions.items()]
        started = 0
        for a, b in choose_pairs(waiting, self.live.all(), self.recent, self._rng):
            seats = self.arena.take_two((a.key, b.key), self.options.rules.runs_only)
            if seats is None:
                continue
            nursery.start_soon(self._play, seats)
            started += 1
        return started

    def _next_match(self, a: str, b: str) -> MatchSpec:
        pair = canonical(a, b)
        k = self._meetings.get(pair, 0)
        self._meetings[pair] = k + 1
        deal, order = divmod(k, 2)
        return MatchSpec(f"{SCOPE}:{pair[0]}:{pair[1]}:{k}", pair, deal, order,
                         derive_seed(self.seed, f"{pair[0]}:{pair[1]}:{deal}"))

    async def _play(self, seats: tuple[GrpcSeat, GrpcSeat]) -> None:
        spec = self._next_match(seats[0].name, seats[1].name)
        if spec.seats != (seats[0].name, seats[1].name):
            seats = (seats[1], seats[0])
        driver = MatchDriver(spec.match_id, self.options.rules, spec.seats, seed=spec.seed,
                             time_control=self.options.time_control,
                             meta={"deal": spec.deal, "seat_order": spec.order})
        for s in spec.seats:
            self.playing[s] += 1
        try:
            result = await self.arena.run_seated(driver, seats)
        except Exception:
            log.exception("ladder_match_failed", match_id=spec.match_id)
            for seat in seats:
                seat.entry.conn.abort(grpc.StatusCode.INTERNAL, "internal error")
                seat.entry.done.set()
            return
        finally:
            for s in spec.seats:
                self.playing[s] -= 1
        self.record(spec, result, driver.record)

    def record(self, spec: MatchSpec, result: MatchResult,
               record: list[dict[str, object]] | None = None) -> bool:
        """Commit a finished match and its rating update (one transaction)."""
        self.arena.results.clear()  # the store keeps them; the arena need not, for weeks
        if result.termination in (Termination.SHUTDOWN, Termination.NO_SHOW):
            return False
        a, b = spec.pair
        score_a = score_of(result, spec.seats, a)
        new = {} if score_a is None else self.live.after(a, b, score_a)
        if self.options.replay_dir is not None and record is not None:
            try:
                write_replay(self.options.replay_dir / f"{spec.match_id.replace(':', '_')}.jsonl",
                             record)
            except OSError as e:
                log.error("replay_write_failed", match_id=spec.match_id, error=str(e))
        if not self.store.record(SCOPE, spec, result, new):
            return False
        self.live.apply(new)
        self.recent[a].append(b)
        self.recent[b].append(a)
        self.matches_played += 1
        log.info("ladder_match", match_id=spec.match_id, winner=result.winner,
                 reason=str(result.termination), seats=list(spec.seats))
        self._recorded.set()
        self._recorded = trio.Event()
        return True

    async def wait_recorded(self) -> None:
        """Wait for the next recorded match (for tests and monitors)."""
        await self._recorded.wait()

    # ------------------------------------------------------------------ leaderboard

    def leaderboard_entries(self, limit: int = 0) -> list[pb.LeaderboardEntry]:
        """Registered and rated bots, best first by mu - 3 sigma."""
        ratings = self.live.all()
        for name in self.store.registered_bots():
            ratings.setdefault(name, self.live.initial)
        wins = self.store.wins(SCOPE)
        rows = leaderboard_rows(ratings)
        if limit:
            rows = rows[:limit]
        return [pb.LeaderboardEntry(bot=n, rating=r.mu, sigma=r.sigma, games=r.games,
                                    wins=wins.get(n, 0)) for n, r in rows]

    async def leaderboard(self, request: pb.LeaderboardRequest) -> pb.LeaderboardReply:
        return pb.LeaderboardReply(entries=self.leaderboard_entries(request.limit))


__all__ = ["SCOPE", "Candidate", "Ladder", "LadderOptions", "RegistrationError", "TokenBook",
           "choose_pairs", "hash_token", "register"]
