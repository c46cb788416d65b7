"""The gin_arena.v1 wire protocol as Python modules.

``pb`` holds the messages (``pb.BotMessage``, ``pb.ServerMessage``, ...), ``pb_grpc`` the
service stub, servicer base class and registration function. Both are generated into
``sdk/gin_arena_core/protocol/_gen/`` by ``python -m gin_arena_core.protocol.generate``;
never edit them by hand.

This package imports only protobuf and grpcio (no trio, no structlog), so the SDK can use it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

PROTOCOL_VERSION = 1
"""The value a bot puts in ``Hello.protocol_version`` and the server in ``MatchStart``."""

__all__ = ["PROTOCOL_VERSION", "pb", "pb_grpc"]

if TYPE_CHECKING:
    from gin_arena_core.protocol._gen import arena_pb2 as pb
    from gin_arena_core.protocol._gen import arena_pb2_grpc as pb_grpc
else:
    # Imported on first use rather than here, so that `python -m gin_arena_core.protocol.generate`
    # (which imports this package first) still runs when _gen/ is missing or broken.
    _LAZY = {"pb": "gin_arena_core.protocol._gen.arena_pb2",
             "pb_grpc": "gin_arena_core.protocol._gen.arena_pb2_grpc"}

    def __getattr__(name: str) -> ModuleType:
        if name not in _LAZY:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module = importlib.import_module(_LAZY[name])
        globals()[name] = module
        return module
