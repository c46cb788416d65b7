"""The ladder: a long-running arena where registered bots are paired continuously.

A bot is registered once (``arena register DB NAME``; names are unique whatever their case):
it gets a secret token, and only the token's SHA-256 is stored. A bot connects with its
token (the Hello's name is ignored: the registered name is used); an unknown or revoked
token is refused with UNAUTHENTICATED. A token can be revoked or rotated while the ladder
runs (``arena ladder revoke|rotate NAME``): the running ladder notices within a second and
ends that bot's waiting sessions. Bots waiting in the lobby are paired after a short settle
delay, as many pairs as admission allows (``arena.server.lobby``):

* new bots first: waiting bots are taken in order of fewest rated games, so a newcomer
  is always paired and, with an odd number waiting, the most experienced bot sits out;
* similar ratings: its opponent is the waiting bot with the nearest openskill mu ...
* a spread of opponents: ... plus a penalty for each recent meeting of the two.

Each time two bots meet they play the next match of their own duplicate series: the
2k-th and (2k+1)-th meetings share a deal seed with the seats swapped. Deal seeds and match
ids are keyed with the season's secret (kept in the store, never sent to a bot). Every
finished match is recorded with the rating update in one transaction, off the match loop
(``arena.series.commit``), so stopping and restarting the ladder keeps registrations,
ratings and history. A match cut by a shutdown or a no-show is not recorded; a voided one
is recorded but not rated.

A ladder keeps one meaning: its scope (``ladder``, or ``ladder:SEASON``) stores its rules,
time control and seed, and starting it again on the same database with other ones is
refused in one line (``LadderError``); ``--season NAME`` starts a new rating scope instead.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
from collections import Counter, defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio

from arena.match.driver import MatchDriver, new_seed
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.match.spec import MatchSpec, canonical
from arena.protocol import pb
from arena.rules import RulesConfig
from arena.series.commit import Committer, Finished, score_of
from arena.series.ratings import LiveRatings
from arena.series.schedule import keyed
from arena.server.arena import DEFAULT_MAX_LAG_MS, Arena, GrpcSeat, ProtocolError
from arena.server.bridge import StreamLimits, format_address
from arena.store.base import Rating, Store, StoreBusy, StoreError
from arena.tournament.config import NAME_RE
from arena.tournament.report import leaderboard_rows

log = structlog.get_logger("arena.ladder")

SCOPE = "ladder"
RECENT = 6  # opponents remembered per bot for the spread penalty
REPEAT_PENALTY = 1.0  # cost of each recent meeting, in units of the initial sigma
MIN_TOKEN = 16
NEW_BOT = Rating(25.0, 25 / 3, 0)  # openskill's default rating


class RegistrationError(ValueError):
    """A name or token that cannot be registered (one line)."""


class LadderError(ValueError):
    """The ladder cannot start as asked (one line)."""


def hash_token(token: str) -> str:
    """How a token is stored: its SHA-256 (tokens are long and random, so no salt is
    needed to make guessing useless; a lookup by hash stays a single index probe)."""
    return hashlib.sha256(token.encode()).hexdigest()


def register(store: Store, name: str, token: str | None = None) -> str:
    """Register ``name`` and return its token (made up if not given; shown only now).
    Names are unique whatever their case."""
    if not NAME_RE.match(name):
        raise RegistrationError(f"bot name {name!r}: use letters, digits and _.+- "
                                "(at most 64)")
    token = _token(token)
    try:
        store.register_bot(name, hash_token(token))
    except StoreError as e:
        raise RegistrationError(str(e)) from None
    return token


def _token(token: str | None) -> str:
    """The token given (long enough, else RegistrationError) or a new random one."""
    token = token if token is not None else secrets.token_hex(24)  # never starts with "-"
    if len(token) < MIN_TOKEN:
        raise RegistrationError(f"a token needs at least {MIN_TOKEN} characters")
    return token


def revoke(store: Store, name: str) -> None:
    """Revoke ``name``'s token: it connects no more (a running ladder notices within a
    second). ``RegistrationError`` if no such bot is registered."""
    try:
        store.set_token(name, None)
    except StoreError as e:
        raise RegistrationError(str(e)) from None


def rotate(store: Store, name: str, token: str | None = None) -> str:
    """Give ``name`` a new token (made up if not given) and return it; the old one stops
    working (a running ladder notices within a second)."""
    token = _token(token)
    try:
        store.set_token(name, hash_token(token))
    except StoreError as e:
        raise RegistrationError(str(e)) from None
    return token


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
    season: str = ""  # "": the scope "ladder"; else "ladder:SEASON", rated apart
    max_matches: int = 0  # matches at once (0: as the measured lag allows)
    max_lag_ms: float = DEFAULT_MAX_LAG_MS
    limits: StreamLimits | None = None  # what a stream may send; None: the defaults


def ladder_scope(season: str) -> str:
    return f"ladder:{season}" if season else SCOPE


class Ladder:
    """The ladder's state: the arena, the live ratings and the pairing loop."""

    def __init__(self, store: Store, options: LadderOptions | None = None) -> None:
        """``LadderError`` if the database holds this ladder (season) with other rules,
        time control or seed."""
        opts = options or LadderOptions()
        self.store = store
        self.options = opts
        self.scope = scope = ladder_scope(opts.season)
        if opts.season and not NAME_RE.match(opts.season):
            raise LadderError(f"season {opts.season!r}: use letters, digits and _.+- "
                              "(at most 64)")
        want: dict[str, Any] = {"format": "ladder", "rules": opts.rules.to_dict(),
                                "time_control": opts.time_control.to_dict()}
        if scope in {s.scope for s in store.scopes()}:
            saved = store.scope_config(scope)
            differs = [key.replace("_", " ") for key in ("rules", "time_control")
                       if key in saved and saved[key] != want[key]]
            seed = str(saved.get("seed", ""))
            if opts.seed and seed and opts.seed != seed:
                differs.append("seed")
            if differs:
                where = f"season {opts.season!r}" if opts.season else "ladder"
                raise LadderError(
                    f"this database's {where} was played with another {' and '.join(differs)}"
                    f" ({_describe(saved, differs)}): start it with the same options, or "
                    f"give --season NAME to rate a new season in the same database")
            seed = seed or opts.seed or new_seed()
        else:
            seed = opts.seed or new_seed()
        self.seed = seed
        self.secret = store.open_scope(scope, "ladder", opts.season or "ladder",
                                       json.dumps({**want, "seed": seed}, sort_keys=True))
        self.live = LiveRatings(store.ratings(scope))
        self.arena = Arena(authenticate=self.authenticate,
                           hello_timeout_s=opts.time_control.hello_timeout_ms / 1000,
                           max_matches=opts.max_matches, max_lag_ms=opts.max_lag_ms,
                           paced=True, limits=opts.limits)
        self.recent: dict[str, deque[str]] = defaultdict(lambda: deque(maxlen=RECENT))
        self._meetings: dict[tuple[str, str], int] = {}
        for m in store.matches(scope):
            a, b = m.bots
            self.recent[a].append(b)
            self.recent[b].append(a)
            pair = m.pair
            self._meetings[pair] = max(self._meetings.get(pair, 0), 2 * m.deal + m.order + 1)
        self.playing: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self.matches_played = 0
        self._recorded = trio.Event()
        self.committer = Committer(store, scope, replays=opts.replay_dir,
                                   on_stored=self._stored)

    # ------------------------------------------------------------------ serving

    async def serve(self, *, host: str = "127.0.0.1", port: int = 0,
                    tls: tuple[bytes, bytes] | None = None,
                    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve gRPC (Play, Leaderboard, Status) and pair bots until cancelled.
        Cancellation ends the matches in flight as ``shutdown`` (not recorded: nothing is
        half-written), and the results already finished are written first."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.committer.run)
            bound: int = await nursery.start(partial(
                self.arena.serve, host=host, port=port, tls=tls,
                leaderboard=self.leaderboard))
            log.info("ladder_ready", address=format_address(host, bound), tls=tls is not None,
                     scope=self.scope)
            task_status.started(bound)
            nursery.start_soon(self.watch_tokens)
            await self.pair_forever(nursery)

    async def authenticate(self, token: str) -> str | None:
        """The registered bot with this valid token (looked up on a worker thread)."""
        try:
            return await trio.to_thread.run_sync(self.store.bot_for_token_hash,
                                                 hash_token(token))
        except StoreBusy:
            raise ProtocolError(grpc.StatusCode.UNAVAILABLE,
                                "the ladder's database is busy: try again in a few "
                                "seconds", retry_after_s=2.0) from None

    async def watch_tokens(self, every_s: float = 1.0) -> None:
        """Whenever a token is revoked or rotated, end the waiting sessions whose token no
        longer holds (their matches in play finish)."""
        epoch = await trio.to_thread.run_sync(self.store.token_epoch)
        while True:
            await trio.sleep(every_s)
            try:
                now = await trio.to_thread.run_sync(self.store.token_epoch)
            except StoreBusy:
                continue
            if now == epoch:
                continue
            epoch = now
            stale: set[str] = set()
            for key, _ in self.arena.waiting():
                if await self.authenticate(key) is None:
                    stale.add(key)
            if stale:
                dropped = self.arena.drop_waiting(stale, grpc.StatusCode.UNAUTHENTICATED,
                                                  "this bot's token was revoked or replaced")
                log.info("sessions_revoked", sessions=dropped)

    async def pair_forever(self, nursery: trio.Nursery) -> None:
        """Whenever bots wait and admission allows, pair them and start their matches."""
        while True:
            if not self.pair_now(nursery):
                with trio.move_on_after(1.0):  # capacity frees without an arrival too
                    await self.arena.wait_arrival()
            await trio.sleep(self.options.settle_s)

    def pair_now(self, nursery: trio.Nursery) -> int:
        """Start every match the waiting bots and admission allow now; returns how many."""
        sessions: Counter[str] = Counter()
        keys: dict[str, str] = {}
        for key, name in self.arena.waiting():
            sessions[name] += 1
            keys[name] = key
        waiting = [Candidate(n, keys[n], c) for n, c in sessions.items()]
        started = 0
        admission = self.arena.admission
        for a, b in choose_pairs(waiting, self.live.all(), self.recent, self._rng):
            if not admission.try_acquire():
                break
            seats = self.arena.take_two((a.key, b.key), self.options.rules.runs_only)
            if seats is None:
                admission.release()
                continue
            nursery.start_soon(self._play, seats)
            started += 1
        return started

    def _next_match(self, a: str, b: str) -> MatchSpec:
        pair = canonical(a, b)
        k = self._meetings.get(pair, 0)
        self._meetings[pair] = k + 1
        deal, order = divmod(k, 2)
        return MatchSpec("m" + keyed(self.secret, "match", self.scope, *pair, k)[:19], pair,
                         deal, order, keyed(self.secret, "deal", self.seed, *pair, deal)[:32])

    async def _play(self, seats: tuple[GrpcSeat, GrpcSeat]) -> None:
        try:
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
        finally:
            self.arena.admission.release()

    def record(self, spec: MatchSpec, result: MatchResult,
               record: list[dict[str, Any]] | None = None) -> bool:
        """Hand a finished match and its rating update to the committer (written in
        order off the match loop); False for a match that is not recorded."""
        if result.termination in (Termination.SHUTDOWN, Termination.NO_SHOW):
            return False
        a, b = spec.pair
        score_a = score_of(result, spec.seats, a)
        if score_a is not None:  # the pairing's view now; the store applies the same update
            self.live.apply(self.live.after(a, b, score_a))
        self.recent[a].append(b)
        self.recent[b].append(a)
        self.committer.submit(spec, result, record)
        return True

    def _stored(self, item: Finished, is_new: bool) -> None:
        if not is_new:
            return
        self.matches_played += 1
        log.info("ladder_match", match_id=item.spec.match_id, winner=item.result.winner,
                 reason=str(item.result.termination), seats=list(item.spec.seats))
        self._recorded.set()
        self._recorded = trio.Event()

    async def wait_recorded(self) -> None:
        """Wait for the next recorded match (for tests and monitors)."""
        await self._recorded.wait()

    # ------------------------------------------------------------------ leaderboard

    def leaderboard_entries(self, limit: int = 0) -> list[pb.LeaderboardEntry]:
        """Registered and rated bots, best first by mu - 3 sigma."""
        ratings = self.live.all()
        for name in self.store.registered_bots():
            ratings.setdefault(name, self.live.initial)
        wins = self.store.wins(self.scope)
        rows = leaderboard_rows(ratings)
        if limit:
            rows = rows[:limit]
        return [pb.LeaderboardEntry(bot=n, rating=r.mu, sigma=r.sigma, games=r.games,
                                    wins=wins.get(n, 0)) for n, r in rows]

    async def leaderboard(self, request: pb.LeaderboardRequest) -> pb.LeaderboardReply:
        entries = await trio.to_thread.run_sync(self.leaderboard_entries, request.limit)
        return pb.LeaderboardReply(entries=entries)


def _describe(saved: Mapping[str, Any], keys: list[str]) -> str:
    """What the saved ladder was played with, for an error line."""
    parts = []
    if "rules" in keys:
        rules = saved.get("rules")
        parts.append(f"rules {rules.get('preset') if isinstance(rules, dict) else rules}")
    if "time control" in keys:
        tc = saved.get("time_control")
        if isinstance(tc, dict):
            parts.append(f"decision_ms {tc.get('decision_ms')}, bank_ms {tc.get('bank_ms')}")
    if "seed" in keys:
        parts.append("its seed is kept in the database")
    return "; ".join(parts)


__all__ = ["SCOPE", "Candidate", "Ladder", "LadderError", "LadderOptions", "RegistrationError",
           "choose_pairs", "hash_token", "ladder_scope", "register", "revoke", "rotate"]
