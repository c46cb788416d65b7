"""A ladder front end: registered bots connect and are paired continuously, on one store.

A bot is registered once (``arena register DB NAME``, ``arena.tournament.registry``) and
connects with its token (the Hello's name is ignored: the registered name is used); an
unknown or revoked token is refused with UNAUTHENTICATED. A token can be revoked or
rotated while the ladder runs (``arena ladder revoke|rotate NAME``): the running ladder
notices within a second and ends that bot's waiting sessions.

Several front ends may serve one ladder on one database (PostgreSQL, or one SQLite file
on one host): each publishes who waits in its lobby, one of them pairs every front end's
waiting bots (``arena.tournament.matchmaker``), and each plays the pairings it hosts. A
bot paired with a bot waiting at another front end is sent there with a ``Redirect`` (an
address and a one-time seat key, which the SDK follows). Deal seeds and match ids are
keyed with the season's secret (kept in the store, never sent to a bot). Every finished
match is recorded with the rating update in one transaction, off the match loop
(``arena.series.commit``), so stopping and restarting keeps registrations, ratings and
history. A match cut by a shutdown or a no-show is not recorded; a voided one is recorded
but not rated.

A ladder keeps one meaning: its scope (``ladder``, or ``ladder:SEASON``) stores its rules,
time control and seed, and starting it again on the same database with other ones is
refused in one line (``LadderError``); ``--season NAME`` starts a new rating scope instead.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio
from gin_arena_core.protocol import pb
from gin_arena_core.rules import RulesConfig

from arena.match.driver import MatchDriver, new_seed
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.match.spec import MatchSpec
from arena.series.commit import Committer, Finished
from arena.series.plan import NAME_RE
from arena.series.ratings import LiveRatings
from arena.series.worker import worker_id
from arena.server.arena import DEFAULT_MAX_LAG_MS, Arena, GrpcSeat, ProtocolError
from arena.server.bridge import StreamLimits, format_address
from arena.store.base import Pairing, Store, StoreBusy
from arena.tournament.matchmaker import Matchmaker
from arena.tournament.registry import hash_token
from arena.tournament.report import leaderboard_rows

log = structlog.get_logger("arena.ladder")

SCOPE = "ladder"
SEAT_KEPT_S = 5.0  # how long a host keeps a seat for a bot redirected to it
BOARD_S = 0.1  # how often a front end looks for pairings made for it (they are made by
# another process, perhaps on another host)
HEARTBEAT_S = 1.0  # a front end republishes its lobby at least this often


class LadderError(ValueError):
    """The ladder cannot start as asked (one line)."""


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
    public_address: str = ""  # where bots reach this front end (for redirects); "": bound


def ladder_scope(season: str) -> str:
    return f"ladder:{season}" if season else SCOPE


class Ladder:
    """One front end of a ladder: its arena, its part of matchmaking, its matches."""

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
        self.frontend = worker_id()
        self.address = ""  # where bots reach this front end; set by serve()
        self.arena = Arena(authenticate=self.authenticate,
                           hello_timeout_s=opts.time_control.hello_timeout_ms / 1000,
                           max_matches=opts.max_matches, max_lag_ms=opts.max_lag_ms,
                           paced=True, limits=opts.limits)
        self.matchmaker = Matchmaker(store, scope, self.secret, seed, self.frontend,
                                     opts.settle_s, on_paired=self._look)
        self.seen = store.last_pairing(scope)  # pairings made before it started are void
        self.playing: Counter[str] = Counter()
        self.matches_played = 0
        self._recorded = trio.Event()
        self._look_now = trio.Event()
        self.committer = Committer(store, scope, replays=opts.replay_dir,
                                   on_stored=self._stored)

    # ------------------------------------------------------------------ serving

    async def serve(self, *, host: str = "127.0.0.1", port: int = 0,
                    tls: tuple[bytes, bytes] | None = None,
                    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve gRPC (Play, Leaderboard, Status), take part in matchmaking and play the
        pairings this front end hosts, until cancelled. Cancellation ends the matches in
        flight as ``shutdown`` (not recorded: nothing is half-written), and the results
        already finished are written first."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.committer.run)
            bound: int = await nursery.start(partial(
                self.arena.serve, host=host, port=port, tls=tls,
                leaderboard=self.leaderboard))
            self.address = self.options.public_address or format_address(host, bound)
            log.info("ladder_ready", address=self.address, tls=tls is not None,
                     scope=self.scope, frontend=self.frontend)
            task_status.started(bound)
            nursery.start_soon(self.watch_tokens)
            nursery.start_soon(self.matchmaker.run)
            await self.board(nursery)

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

    def _look(self) -> None:
        self._look_now.set()

    async def board(self, nursery: trio.Nursery) -> None:
        """Forever: act on the pairings made for this front end, and publish who waits
        here (when it changes, and every ``HEARTBEAT_S`` so the others know it lives)."""
        published: tuple[int, tuple[tuple[str, int], ...]] | None = None
        last = 0.0

        async def arrival() -> None:
            await self.arena.wait_arrival()
            self.matchmaker.nudge()

        while True:
            try:
                pairings = await trio.to_thread.run_sync(
                    self.store.pairings_since, self.scope, self.frontend, self.seen)
                for p in pairings:
                    self.seen = p.seq
                    self._act(p, nursery)
                waiting = Counter(name for _, name in self.arena.waiting())
                free = self.arena.admission.free
                now = trio.current_time()
                state = (free, tuple(sorted(waiting.items())))
                if state != published or now - last >= HEARTBEAT_S or pairings:
                    await trio.to_thread.run_sync(partial(
                        self.store.set_waiting, self.scope, self.frontend, self.address,
                        free, self.seen, waiting))
                    if state != published:
                        self.matchmaker.nudge()
                    published, last = state, now
            except StoreBusy as e:
                log.warning("ladder_store_busy", detail=str(e))
            with trio.move_on_after(BOARD_S):
                async with trio.open_nursery() as either:
                    async def first(fn: Any) -> None:
                        await fn()
                        either.cancel_scope.cancel()

                    either.start_soon(first, arrival)
                    either.start_soon(first, self._look_now.wait)
            self._look_now = trio.Event()

    def _key(self, bot: str) -> str | None:
        """The lobby key of a waiting session of ``bot`` here, if any."""
        return next((key for key, name in self.arena.waiting() if name == bot), None)

    def _act(self, p: Pairing, nursery: trio.Nursery) -> None:
        """Do this front end's part of a pairing: play it (both bots wait here), host it
        (keep a seat for the bot sent here), or send its bot to the host."""
        runs_only = self.options.rules.runs_only
        arena = self.arena
        if p.host != self.frontend:  # the guest: send the bot to the host
            key = self._key(p.guest_bot)
            seat = arena.pop_waiting(key, runs_only) if key is not None else None
            if seat is None:
                log.info("pairing_void", match_id=p.spec.match_id, detail=f"{p.guest_bot} "
                         "no longer waits here")
                nursery.start_soon(self._mark, p, "void")  # the host stops waiting at once
                return
            seat.redirect(p.host_address, p.seat_key, SEAT_KEPT_S)
            log.info("redirected", bot=p.guest_bot, to=p.host_address,
                     match_id=p.spec.match_id)
            nursery.start_soon(self._mark, p, "redirected")
            return
        local = [b for b in p.spec.pair if p.guest == self.frontend or b != p.guest_bot]
        seats: dict[str, GrpcSeat] = {}
        for bot in local:
            key = self._key(bot)
            seat = arena.pop_waiting(key, runs_only) if key is not None else None
            if seat is None:
                break
            seats[bot] = seat
        if len(seats) < len(local) or not arena.admission.try_acquire():
            for seat in seats.values():
                arena.put_back(seat)
            log.info("pairing_void", match_id=p.spec.match_id, detail="a bot left, or no "
                     "room here any more")
            return
        nursery.start_soon(self._host, p, seats)

    async def _mark(self, p: Pairing, state: str) -> None:
        with contextlib.suppress(StoreBusy):  # the host then waits, and forfeits nobody
            await trio.to_thread.run_sync(self.store.mark_pairing, self.scope, p.seq, state)

    async def _host(self, p: Pairing, seats: dict[str, GrpcSeat]) -> None:
        """Play pairing ``p`` with the seats taken here, after waiting for the redirected
        bot when it comes from another front end: it forfeits if its front end sent it and
        it did not come; the pairing is void if its front end no longer had it."""
        try:
            if len(seats) == 1:
                guest = await self._guest(p)
                if guest is None:
                    for seat in seats.values():
                        self.arena.put_back(seat)
                    if await self._state(p) == "redirected":
                        self._no_show(p)
                    else:
                        log.info("pairing_void", match_id=p.spec.match_id,
                                 detail=f"{p.guest_bot} was not sent here")
                    return
                seats[p.guest_bot] = guest
            await self._play(p.spec, (seats[p.spec.seats[0]], seats[p.spec.seats[1]]))
        finally:
            self.arena.admission.release()

    async def _guest(self, p: Pairing) -> GrpcSeat | None:
        """The redirected bot's seat, once it comes (None: it did not within
        ``SEAT_KEPT_S``, or its front end says it was not sent)."""
        got: list[GrpcSeat | None] = [None]
        async with trio.open_nursery() as nursery:
            async def arrive() -> None:
                got[0] = await self.arena.expect(p.seat_key, p.guest_bot, SEAT_KEPT_S,
                                                 self.options.rules.runs_only)
                nursery.cancel_scope.cancel()

            async def void() -> None:  # its front end no longer had it: stop waiting
                while await self._state(p) != "void":
                    await trio.sleep(BOARD_S)
                nursery.cancel_scope.cancel()

            nursery.start_soon(arrive)
            nursery.start_soon(void)
        return got[0]

    async def _state(self, p: Pairing) -> str:
        try:
            return await trio.to_thread.run_sync(self.store.pairing_state, self.scope, p.seq)
        except StoreBusy:
            return ""

    def _no_show(self, p: Pairing) -> None:
        """The guest was sent here and did not come: it forfeits (as in a tournament), so
        ignoring redirects costs the bot that ignores them, not the one that waited."""
        spec = p.spec
        driver = MatchDriver(spec.match_id, self.options.rules, spec.seats, seed=spec.seed,
                             time_control=self.options.time_control,
                             meta={"deal": spec.deal, "seat_order": spec.order})
        seat = spec.seats.index(p.guest_bot)
        result = driver.forfeit(seat, Termination.NO_SHOW,
                                f"{p.guest_bot} was sent here and did not come within "
                                f"{SEAT_KEPT_S:g} s")
        log.info("no_show", match_id=spec.match_id, bot=p.guest_bot)
        self.record(spec, result, driver.record)

    async def _play(self, spec: MatchSpec, seats: tuple[GrpcSeat, GrpcSeat]) -> None:
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
               record: list[dict[str, Any]] | None = None) -> bool:
        """Hand a finished match to the committer (written with its rating update, in
        order, off the match loop); False for a match that is not recorded."""
        if result.termination is Termination.SHUTDOWN or (
                result.termination is Termination.NO_SHOW and result.winner is None):
            return False
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
        """Registered and rated bots, best first by mu - 3 sigma (as recorded by every
        front end of this ladder)."""
        ratings = self.store.ratings(self.scope)
        initial = LiveRatings().initial
        for name in self.store.registered_bots():
            ratings.setdefault(name, initial)
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


__all__ = ["SCOPE", "Ladder", "LadderError", "LadderOptions", "ladder_scope"]
