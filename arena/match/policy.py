"""The consequences of a seat's answers: strikes, the time bank, refusals and ``on_illegal``.

One place for the policy of docs/protocol.md, used by both runners (``run_match`` over
any seat, ``play_local`` for in-process bots), so a bot meets the same judgement however
it is seated. Pure: the runners measure time and talk to the seats; this only counts and
decides. A judgement that ends the match raises ``Forfeit``.
"""

from __future__ import annotations

from arena.match.messages import Termination, TimeControl


class Forfeit(Exception):
    """The seat loses the match (``termination``, ``detail``)."""

    def __init__(self, seat: int, termination: Termination, detail: str) -> None:
        super().__init__(detail)
        self.seat = seat
        self.termination = termination
        self.detail = detail


class SeatPolicy:
    """Both seats' strikes and banks over one match."""

    def __init__(self, time_control: TimeControl) -> None:
        self.tc = time_control
        self.bank = [time_control.bank_ms, time_control.bank_ms]
        self.strikes = [0, 0]

    def budget_ms(self, seat: int) -> int:
        """How long ``seat`` may take over its next decision, margin included."""
        tc = self.tc
        return tc.decision_ms + self.bank[seat] + tc.margin_ms

    def missed(self, seat: int) -> str:
        """``seat`` did not answer within its budget: a strike, or the end of the match
        (``Forfeit``) when the bank ran out or the strikes are used up. Returns why the
        default move is played."""
        tc = self.tc
        self.strikes[seat] += 1
        if tc.bank_ms:
            self.bank[seat] = 0
            raise Forfeit(seat, Termination.FORFEIT_TIMEOUT,
                          f"time bank exhausted ({tc.bank_ms} ms)")
        if self.strikes[seat] > tc.max_strikes:
            raise Forfeit(seat, Termination.FORFEIT_TIMEOUT,
                          f"{self.strikes[seat]} missed decisions (limit {tc.max_strikes})")
        return f"no answer within {tc.decision_ms} ms"

    def answered(self, seat: int, elapsed_ms: float) -> None:
        """``seat``'s answer was taken after ``elapsed_ms``: time over the decision limit
        comes off its bank."""
        over = elapsed_ms - self.tc.decision_ms
        if over > 0 and self.tc.bank_ms:
            self.bank[seat] = max(0, self.bank[seat] - round(over))

    def refused(self, seat: int, rejections: int, code: str, reason: str) -> int | None:
        """The ``rejections``-th answer of this decision was refused. Returns how many more
        refusals the seat can take (it is asked again), or None when the policy applies now
        and the default move is played (a strike); ``Forfeit`` when the match ends
        (``on_illegal`` "forfeit", or the strikes are used up)."""
        tc = self.tc
        if rejections <= tc.max_rejections:
            return tc.max_rejections - rejections
        if tc.on_illegal == "forfeit":
            raise Forfeit(seat, Termination.FORFEIT_ILLEGAL,
                          f"{rejections} refused answers ({code}: {reason})")
        self.strikes[seat] += 1
        if self.strikes[seat] > tc.max_strikes:
            raise Forfeit(seat, Termination.FORFEIT_ILLEGAL,
                          f"{self.strikes[seat]} strikes; last: {code}: {reason}")
        return None


def refused_default_reason(rejections: int) -> str:
    """Why the default move is played after too many refused answers."""
    return f"{rejections} refused answers"


__all__ = ["Forfeit", "SeatPolicy", "refused_default_reason"]
