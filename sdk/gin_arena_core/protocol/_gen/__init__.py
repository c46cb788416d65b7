"""Generated from proto/gin_arena/v1/arena.proto by `python -m gin_arena_core.protocol.generate`.

Do not edit: regenerate instead. Import through `gin_arena_core.protocol` (`pb`, `pb_grpc`).
"""
