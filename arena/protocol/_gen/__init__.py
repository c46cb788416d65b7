"""Generated from proto/gin_arena/v1/arena.proto by `python -m arena.protocol.generate`.

Do not edit: regenerate instead. Import through `arena.protocol` (`pb`, `pb_grpc`).
"""
