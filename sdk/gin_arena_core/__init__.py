"""What both sides of the wire share: the rules engine and the gin_arena.v1 protocol.

``gin_arena_core.rules`` is the pure rules engine (every game and variant of the rule
books, as configuration; no I/O, no clock, no randomness); ``gin_arena_core.protocol`` is the
wire protocol (the generated messages, the records a bot's hooks are given, and the
translation between them). The arena (``arena``) and the bot SDK (``gin_arena_sdk``) both
build on it; it ships in the SDK's own distribution (``pip install ./sdk``), so a bot sees
exactly the view and the moves the arena computes.
"""
