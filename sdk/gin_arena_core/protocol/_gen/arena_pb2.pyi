from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_UPCARD_OFFER: _ClassVar[Phase]
    PHASE_DRAW: _ClassVar[Phase]
    PHASE_DISCARD: _ClassVar[Phase]
    PHASE_WALL_OFFER: _ClassVar[Phase]
    PHASE_WALL_DISCARD: _ClassVar[Phase]
    PHASE_DEFEND: _ClassVar[Phase]
    PHASE_HAND_OVER: _ClassVar[Phase]
PHASE_UNSPECIFIED: Phase
PHASE_UPCARD_OFFER: Phase
PHASE_DRAW: Phase
PHASE_DISCARD: Phase
PHASE_WALL_OFFER: Phase
PHASE_WALL_DISCARD: Phase
PHASE_DEFEND: Phase
PHASE_HAND_OVER: Phase

class BotMessage(_message.Message):
    __slots__ = ("hello", "action", "error")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    error: BotError
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ..., error: _Optional[_Union[BotError, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("name", "protocol_version", "token", "resume", "seat_key")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    SEAT_KEY_FIELD_NUMBER: _ClassVar[int]
    name: str
    protocol_version: int
    token: str
    resume: str
    seat_key: str
    def __init__(self, name: _Optional[str] = ..., protocol_version: _Optional[int] = ..., token: _Optional[str] = ..., resume: _Optional[str] = ..., seat_key: _Optional[str] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("request_id", "action", "error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: Action
    error: str
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class BotError(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: str
    def __init__(self, message: _Optional[str] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("take_upcard", "draw_stock", "draw_discard", "discard", "knock", "gin", "big_gin", "defend")
    TAKE_UPCARD_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    DRAW_STOCK_FIELD_NUMBER: _ClassVar[int]
    DRAW_DISCARD_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    KNOCK_FIELD_NUMBER: _ClassVar[int]
    GIN_FIELD_NUMBER: _ClassVar[int]
    BIG_GIN_FIELD_NUMBER: _ClassVar[int]
    DEFEND_FIELD_NUMBER: _ClassVar[int]
    take_upcard: Empty
    draw_stock: Empty
    draw_discard: Empty
    discard: CardMove
    knock: Knock
    gin: Knock
    big_gin: BigGin
    defend: Defend
    def __init__(self, take_upcard: _Optional[_Union[Empty, _Mapping]] = ..., draw_stock: _Optional[_Union[Empty, _Mapping]] = ..., draw_discard: _Optional[_Union[Empty, _Mapping]] = ..., discard: _Optional[_Union[CardMove, _Mapping]] = ..., knock: _Optional[_Union[Knock, _Mapping]] = ..., gin: _Optional[_Union[Knock, _Mapping]] = ..., big_gin: _Optional[_Union[BigGin, _Mapping]] = ..., defend: _Optional[_Union[Defend, _Mapping]] = ..., **kwargs) -> None: ...

class Empty(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CardMove(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: str
    def __init__(self, card: _Optional[str] = ...) -> None: ...

class Meld(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class Knock(_message.Message):
    __slots__ = ("discard", "melds")
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    MELDS_FIELD_NUMBER: _ClassVar[int]
    discard: str
    melds: _containers.RepeatedCompositeFieldContainer[Meld]
    def __init__(self, discard: _Optional[str] = ..., melds: _Optional[_Iterable[_Union[Meld, _Mapping]]] = ...) -> None: ...

class BigGin(_message.Message):
    __slots__ = ("melds",)
    MELDS_FIELD_NUMBER: _ClassVar[int]
    melds: _containers.RepeatedCompositeFieldContainer[Meld]
    def __init__(self, melds: _Optional[_Iterable[_Union[Meld, _Mapping]]] = ...) -> None: ...

class Layoff(_message.Message):
    __slots__ = ("card", "meld_index")
    CARD_FIELD_NUMBER: _ClassVar[int]
    MELD_INDEX_FIELD_NUMBER: _ClassVar[int]
    card: str
    meld_index: int
    def __init__(self, card: _Optional[str] = ..., meld_index: _Optional[int] = ...) -> None: ...

class Defend(_message.Message):
    __slots__ = ("best", "melds", "layoffs")
    BEST_FIELD_NUMBER: _ClassVar[int]
    MELDS_FIELD_NUMBER: _ClassVar[int]
    LAYOFFS_FIELD_NUMBER: _ClassVar[int]
    best: bool
    melds: _containers.RepeatedCompositeFieldContainer[Meld]
    layoffs: _containers.RepeatedCompositeFieldContainer[Layoff]
    def __init__(self, best: _Optional[bool] = ..., melds: _Optional[_Iterable[_Union[Meld, _Mapping]]] = ..., layoffs: _Optional[_Iterable[_Union[Layoff, _Mapping]]] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("match_start", "request", "event", "rejected", "match_end", "lobby", "redirect")
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    LOBBY_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_FIELD_NUMBER: _ClassVar[int]
    match_start: MatchStart
    request: DecisionRequest
    event: Event
    rejected: ActionRejected
    match_end: MatchEnd
    lobby: LobbyStatus
    redirect: Redirect
    def __init__(self, match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., event: _Optional[_Union[Event, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., lobby: _Optional[_Union[LobbyStatus, _Mapping]] = ..., redirect: _Optional[_Union[Redirect, _Mapping]] = ...) -> None: ...

class Redirect(_message.Message):
    __slots__ = ("address", "seat_key", "valid_ms")
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SEAT_KEY_FIELD_NUMBER: _ClassVar[int]
    VALID_MS_FIELD_NUMBER: _ClassVar[int]
    address: str
    seat_key: str
    valid_ms: int
    def __init__(self, address: _Optional[str] = ..., seat_key: _Optional[str] = ..., valid_ms: _Optional[int] = ...) -> None: ...

class LobbyStatus(_message.Message):
    __slots__ = ("place", "waiting", "matches_running", "max_matches", "detail")
    PLACE_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    MATCHES_RUNNING_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    place: int
    waiting: int
    matches_running: int
    max_matches: int
    detail: str
    def __init__(self, place: _Optional[int] = ..., waiting: _Optional[int] = ..., matches_running: _Optional[int] = ..., max_matches: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("hello_timeout_ms", "decision_ms", "bank_ms", "margin_ms", "max_strikes", "max_rejections", "on_illegal", "reconnect_grace_ms")
    HELLO_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MARGIN_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    MAX_REJECTIONS_FIELD_NUMBER: _ClassVar[int]
    ON_ILLEGAL_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    hello_timeout_ms: int
    decision_ms: int
    bank_ms: int
    margin_ms: int
    max_strikes: int
    max_rejections: int
    on_illegal: str
    reconnect_grace_ms: int
    def __init__(self, hello_timeout_ms: _Optional[int] = ..., decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., margin_ms: _Optional[int] = ..., max_strikes: _Optional[int] = ..., max_rejections: _Optional[int] = ..., on_illegal: _Optional[str] = ..., reconnect_grace_ms: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "seat", "rules_preset", "rules_json", "time_control", "opponent_name", "protocol_version", "resume_key")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULES_PRESET_FIELD_NUMBER: _ClassVar[int]
    RULES_JSON_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESUME_KEY_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    rules_preset: str
    rules_json: str
    time_control: TimeControl
    opponent_name: str
    protocol_version: int
    resume_key: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., rules_preset: _Optional[str] = ..., rules_json: _Optional[str] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., opponent_name: _Optional[str] = ..., protocol_version: _Optional[int] = ..., resume_key: _Optional[str] = ...) -> None: ...

class PublicAction(_message.Message):
    __slots__ = ("seat", "action", "card", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: Action
    card: str
    reason: str
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., card: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RevealedHand(_message.Message):
    __slots__ = ("seat", "melds", "deadwood", "layoffs", "deadwood_value")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MELDS_FIELD_NUMBER: _ClassVar[int]
    DEADWOOD_FIELD_NUMBER: _ClassVar[int]
    LAYOFFS_FIELD_NUMBER: _ClassVar[int]
    DEADWOOD_VALUE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    melds: _containers.RepeatedCompositeFieldContainer[Meld]
    deadwood: _containers.RepeatedScalarFieldContainer[str]
    layoffs: _containers.RepeatedCompositeFieldContainer[Layoff]
    deadwood_value: int
    def __init__(self, seat: _Optional[int] = ..., melds: _Optional[_Iterable[_Union[Meld, _Mapping]]] = ..., deadwood: _Optional[_Iterable[str]] = ..., layoffs: _Optional[_Iterable[_Union[Layoff, _Mapping]]] = ..., deadwood_value: _Optional[int] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("seat", "phase", "turn", "dealer", "hand", "opponent_hand_size", "opponent_known", "discard_pile", "stock_count", "knock_limit", "upcard", "history", "revealed", "scores", "hand_number", "taken_discard", "multiplier", "own_known", "sheets")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_KNOWN_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PILE_FIELD_NUMBER: _ClassVar[int]
    STOCK_COUNT_FIELD_NUMBER: _ClassVar[int]
    KNOCK_LIMIT_FIELD_NUMBER: _ClassVar[int]
    UPCARD_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TAKEN_DISCARD_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    OWN_KNOWN_FIELD_NUMBER: _ClassVar[int]
    SHEETS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    phase: Phase
    turn: int
    dealer: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    opponent_hand_size: int
    opponent_known: _containers.RepeatedScalarFieldContainer[str]
    discard_pile: _containers.RepeatedScalarFieldContainer[str]
    stock_count: int
    knock_limit: int
    upcard: str
    history: _containers.RepeatedScalarFieldContainer[str]
    revealed: _containers.RepeatedCompositeFieldContainer[RevealedHand]
    scores: _containers.RepeatedScalarFieldContainer[int]
    hand_number: int
    taken_discard: str
    multiplier: int
    own_known: _containers.RepeatedScalarFieldContainer[str]
    sheets: _containers.RepeatedCompositeFieldContainer[ScoreSheet]
    def __init__(self, seat: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., turn: _Optional[int] = ..., dealer: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., opponent_hand_size: _Optional[int] = ..., opponent_known: _Optional[_Iterable[str]] = ..., discard_pile: _Optional[_Iterable[str]] = ..., stock_count: _Optional[int] = ..., knock_limit: _Optional[int] = ..., upcard: _Optional[str] = ..., history: _Optional[_Iterable[str]] = ..., revealed: _Optional[_Iterable[_Union[RevealedHand, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., hand_number: _Optional[int] = ..., taken_discard: _Optional[str] = ..., multiplier: _Optional[int] = ..., own_known: _Optional[_Iterable[str]] = ..., sheets: _Optional[_Iterable[_Union[ScoreSheet, _Mapping]]] = ...) -> None: ...

class ScoreSheet(_message.Message):
    __slots__ = ("points", "hands_won", "extra_boxes", "winner")
    POINTS_FIELD_NUMBER: _ClassVar[int]
    HANDS_WON_FIELD_NUMBER: _ClassVar[int]
    EXTRA_BOXES_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    points: _containers.RepeatedScalarFieldContainer[int]
    hands_won: _containers.RepeatedScalarFieldContainer[int]
    extra_boxes: _containers.RepeatedScalarFieldContainer[int]
    winner: int
    def __init__(self, points: _Optional[_Iterable[int]] = ..., hands_won: _Optional[_Iterable[int]] = ..., extra_boxes: _Optional[_Iterable[int]] = ..., winner: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "view", "legal", "time_left_ms", "bank_left_ms", "last_latency_ms", "previous_defaulted", "events")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_DEFAULTED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    view: View
    legal: _containers.RepeatedCompositeFieldContainer[Action]
    time_left_ms: int
    bank_left_ms: int
    last_latency_ms: int
    previous_defaulted: bool
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, request_id: _Optional[int] = ..., view: _Optional[_Union[View, _Mapping]] = ..., legal: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., time_left_ms: _Optional[int] = ..., bank_left_ms: _Optional[int] = ..., last_latency_ms: _Optional[int] = ..., previous_defaulted: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class HandResult(_message.Message):
    __slots__ = ("hand_number", "winner", "kind", "points", "hands", "scores", "multiplier", "bonus")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    winner: int
    kind: str
    points: int
    hands: _containers.RepeatedCompositeFieldContainer[RevealedHand]
    scores: _containers.RepeatedScalarFieldContainer[int]
    multiplier: int
    bonus: int
    def __init__(self, hand_number: _Optional[int] = ..., winner: _Optional[int] = ..., kind: _Optional[str] = ..., points: _Optional[int] = ..., hands: _Optional[_Iterable[_Union[RevealedHand, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., multiplier: _Optional[int] = ..., bonus: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("opponent_action", "own_action_defaulted", "hand_result", "notice")
    OPPONENT_ACTION_FIELD_NUMBER: _ClassVar[int]
    OWN_ACTION_DEFAULTED_FIELD_NUMBER: _ClassVar[int]
    HAND_RESULT_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    opponent_action: PublicAction
    own_action_defaulted: PublicAction
    hand_result: HandResult
    notice: str
    def __init__(self, opponent_action: _Optional[_Union[PublicAction, _Mapping]] = ..., own_action_defaulted: _Optional[_Union[PublicAction, _Mapping]] = ..., hand_result: _Optional[_Union[HandResult, _Mapping]] = ..., notice: _Optional[str] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("request_id", "code", "reason", "legal", "rejections_left")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    REJECTIONS_LEFT_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    code: str
    reason: str
    legal: _containers.RepeatedCompositeFieldContainer[Action]
    rejections_left: int
    def __init__(self, request_id: _Optional[int] = ..., code: _Optional[str] = ..., reason: _Optional[str] = ..., legal: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., rejections_left: _Optional[int] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "winner", "scores", "reason", "blamed_seat", "detail")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    BLAMED_SEAT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    winner: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    reason: str
    blamed_seat: int
    detail: str
    def __init__(self, match_id: _Optional[str] = ..., winner: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., reason: _Optional[str] = ..., blamed_seat: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class LeaderboardRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class LeaderboardEntry(_message.Message):
    __slots__ = ("bot", "rating", "sigma", "games", "wins")
    BOT_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    rating: float
    sigma: float
    games: int
    wins: int
    def __init__(self, bot: _Optional[str] = ..., rating: _Optional[float] = ..., sigma: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ...) -> None: ...

class LeaderboardReply(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[LeaderboardEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[LeaderboardEntry, _Mapping]]] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StatusReply(_message.Message):
    __slots__ = ("matches_running", "sessions_waiting", "sessions_open", "matches_finished", "loop_lag_ms", "grpc_loop_lag_ms", "max_matches", "max_lag_ms", "sessions_refused", "uptime_s", "max_message_bytes", "admitting", "admission_window")
    MATCHES_RUNNING_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_WAITING_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_OPEN_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FINISHED_FIELD_NUMBER: _ClassVar[int]
    LOOP_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    GRPC_LOOP_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    MAX_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_REFUSED_FIELD_NUMBER: _ClassVar[int]
    UPTIME_S_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    ADMITTING_FIELD_NUMBER: _ClassVar[int]
    ADMISSION_WINDOW_FIELD_NUMBER: _ClassVar[int]
    matches_running: int
    sessions_waiting: int
    sessions_open: int
    matches_finished: int
    loop_lag_ms: float
    grpc_loop_lag_ms: float
    max_matches: int
    max_lag_ms: float
    sessions_refused: int
    uptime_s: float
    max_message_bytes: int
    admitting: bool
    admission_window: int
    def __init__(self, matches_running: _Optional[int] = ..., sessions_waiting: _Optional[int] = ..., sessions_open: _Optional[int] = ..., matches_finished: _Optional[int] = ..., loop_lag_ms: _Optional[float] = ..., grpc_loop_lag_ms: _Optional[float] = ..., max_matches: _Optional[int] = ..., max_lag_ms: _Optional[float] = ..., sessions_refused: _Optional[int] = ..., uptime_s: _Optional[float] = ..., max_message_bytes: _Optional[int] = ..., admitting: _Optional[bool] = ..., admission_window: _Optional[int] = ...) -> None: ...
