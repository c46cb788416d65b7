"""The ladder's matchmaker: pairs the bots waiting at every front end, one leader at a time.

Each ladder front end publishes its waiting sessions to the store (``Store.set_waiting``);
whichever front end holds the scope's coordinator lease is the matchmaker: every
``settle_s`` it reads what every live front end published, takes out the sessions that
pairings not yet read by their front end already claim, pairs the rest
(``choose_pairs``), and stores each pairing with the front end that hosts it: the one
where both bots wait, else the one with room, the other front end sending its bot there
with a ``Redirect`` (``arena.tournament.ladder``). So matchmaking sees every connected bot,
whichever front end it reached. Pairing rules:

* new bots first: waiting bots are taken in order of fewest rated games, so a newcomer
  is always paired and, with an odd number waiting, the most experienced bot sits out;
* similar ratings: its opponent is the waiting bot with the nearest openskill mu ...
* a spread of opponents: ... plus a penalty for each recent meeting of the two.

Each time two bots meet they play the next match of their own duplicate series: the
2k-th and (2k+1)-th meetings share a deal seed with the seats swapped (the matchmaker
numbers meetings; a pairing that never played leaves its meeting unplayed).
"""

from __future__ import annotations

import random
import secrets
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import structlog
import trio

from arena.match.spec import MatchSpec, canonical
from arena.series.schedule import keyed
from arena.series.worker import is_gone
from arena.store.base import Pairing, Rating, Store, StoreBusy, Waiting

log = structlog.get_logger("arena.matchmaker")

RECENT = 6  # opponents remembered per bot for the spread penalty
REPEAT_PENALTY = 1.0  # cost of each recent meeting, in units of the initial sigma
NEW_BOT = Rating(25.0, 25 / 3, 0)  # openskill's default rating
FRESH_S = 3.0  # a front end that published nothing for this long is gone
LEASE_S = 5.0  # the matchmaker's lease (another front end takes over when it runs out)


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



def spec_for(scope: str, secret: str, seed: str, a: str, b: str, meeting: int) -> MatchSpec:
    """The ``meeting``-th (0-based) match of the pair ``a``, ``b``: meetings 2k and 2k+1
    share deal k with the seats swapped."""
    pair = canonical(a, b)
    deal, order = divmod(meeting, 2)
    return MatchSpec("m" + keyed(secret, "match", scope, *pair, meeting)[:19], pair, deal,
                     order, keyed(secret, "deal", seed, *pair, deal)[:32])


def routable(address: str) -> bool:
    """False for an address a bot cannot dial (a front end listening on every interface
    that was not given a public address)."""
    host = address.rpartition(":")[0].strip("[]")
    return host not in ("0.0.0.0", "::", "")


def plan_pairings(rows: Sequence[Waiting], unseen: Sequence[Pairing],
                  ratings: Mapping[str, Rating], recent: Mapping[str, Sequence[str]],
                  rng: random.Random, next_spec: Callable[[str, str], MatchSpec]
                  ) -> list[Pairing]:
    """The pairings to make now from what the front ends published (``rows``), less what
    the pairings they had not read yet (``unseen``) claim. Pure."""
    seen = {r.frontend: r.seen for r in rows}
    address = {r.frontend: r.address for r in rows}
    free = {r.frontend: r.free for r in rows}
    sessions: Counter[tuple[str, str]] = Counter()
    for r in rows:
        if r.bot:
            sessions[(r.frontend, r.bot)] += r.sessions
    for p in unseen:  # claimed already by a pairing its front end has not acted on
        host_bots = (list(p.spec.pair) if p.guest == p.host
                     else [b for b in p.spec.pair if b != p.guest_bot])
        if p.seq > seen.get(p.host, 0):
            for bot in host_bots:
                sessions[(p.host, bot)] -= 1
            free[p.host] = free.get(p.host, 0) - 1
        if p.guest != p.host and p.seq > seen.get(p.guest, 0):
            sessions[(p.guest, p.guest_bot)] -= 1
    per_bot: Counter[str] = Counter()
    for (_, bot), n in sessions.items():
        per_bot[bot] += max(0, n)
    waiting = [Candidate(bot, bot, n) for bot, n in sorted(per_bot.items()) if n > 0]
    out: list[Pairing] = []
    for a, b in choose_pairs(waiting, ratings, recent, rng):
        where_a = [fe for (fe, bot), n in sessions.items() if bot == a.bot and n > 0]
        where_b = [fe for (fe, bot), n in sessions.items() if bot == b.bot and n > 0]
        both = [fe for fe in where_a if fe in where_b and free.get(fe, 0) > 0]
        if both:
            host = max(both, key=lambda fe: free[fe])
            guest, guest_bot = host, b.bot
            sessions[(host, a.bot)] -= 1
            sessions[(host, b.bot)] -= 1
        else:
            options = [(fe, a.bot, b.bot, where_b) for fe in where_a] + \
                      [(fe, b.bot, a.bot, where_a) for fe in where_b]
            options = [o for o in options if free.get(o[0], 0) > 0 and o[3]
                       and routable(address[o[0]])]
            if not options:
                continue
            host, host_bot, guest_bot, guests = max(options, key=lambda o: free[o[0]])
            guest = guests[0]
            sessions[(host, host_bot)] -= 1
            sessions[(guest, guest_bot)] -= 1
        free[host] -= 1
        out.append(Pairing(next_spec(a.bot, b.bot), host, address[host], guest, guest_bot,
                           secrets.token_urlsafe(18)))
    return out


class Matchmaker:
    """Pairs the waiting bots of every front end of a ladder scope while this front end
    holds the matchmaker's lease (see the module docstring)."""

    def __init__(self, store: Store, scope: str, secret: str, seed: str, frontend: str,
                 settle_s: float, on_paired: Callable[[], None] | None = None) -> None:
        self.store = store
        self.scope = scope
        self.secret = secret
        self.seed = seed
        self.frontend = frontend
        self.settle_s = settle_s
        self.on_paired = on_paired
        self.is_leader = False
        self.recent: dict[str, deque[str]] = defaultdict(lambda: deque(maxlen=RECENT))
        self._meetings: dict[tuple[str, str], int] = {}
        self._rng = random.Random(seed)
        self._seq = 0  # matches read into ``recent``
        self._wake = trio.Event()

    def nudge(self) -> None:
        """Something changed here (a bot arrived): pair soon."""
        self._wake.set()

    async def run(self) -> None:
        """Pair every ``settle_s`` (or soon after a nudge) while leading, forever."""
        while True:
            with trio.move_on_after(1.0):
                await self._wake.wait()
            self._wake = trio.Event()
            await trio.sleep(self.settle_s)
            try:
                await self.round()
            except StoreBusy as e:
                log.warning("matchmaker_store_busy", detail=str(e))

    async def round(self) -> list[Pairing]:
        """One round: lead if no live front end does, and make the pairings due."""
        run = trio.to_thread.run_sync
        store = self.store
        other = await run(store.take_coordinator, self.scope, self.frontend, LEASE_S)
        if other and is_gone(other):
            other = await run(partial(store.take_coordinator, self.scope, self.frontend,
                                      LEASE_S, replacing=other))
        if other:
            self.is_leader = False
            return []
        if not self.is_leader:  # (again) the leader: read what others did meanwhile
            self.is_leader = True
            self._meetings = await run(store.meetings, self.scope)
            log.info("matchmaker_leading", scope=self.scope, frontend=self.frontend)
        for m in await run(store.matches_since, self.scope, self._seq, 100_000):
            a, b = m.bots
            self.recent[a].append(b)
            self.recent[b].append(a)
            self._seq = m.seq
        rows = await run(store.waiting, self.scope, FRESH_S)
        if not rows:
            return []
        oldest = min(r.seen for r in rows)
        unseen = await run(store.pairings_since, self.scope, "", oldest)
        ratings = await run(store.ratings, self.scope)
        made = plan_pairings(rows, unseen, ratings, self.recent, self._rng, self._next_spec)
        if made:
            stored = await run(store.add_pairings, self.scope, made, self.frontend)
            if not stored:  # another front end took the lease meanwhile: it pairs now
                self.is_leader = False
                return []
            made = stored
            for p in made:
                a, b = p.spec.pair
                self.recent[a].append(b)
                self.recent[b].append(a)
            if self.on_paired is not None:
                self.on_paired()
        return made

    def _next_spec(self, a: str, b: str) -> MatchSpec:
        pair = canonical(a, b)
        k = self._meetings.get(pair, 0)
        self._meetings[pair] = k + 1
        return spec_for(self.scope, self.secret, self.seed, a, b, k)


__all__ = ["NEW_BOT", "Candidate", "Matchmaker", "choose_pairs", "plan_pairings", "spec_for"]
