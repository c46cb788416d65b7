"""Start a Python bot as its own process: ``python -m gin_arena_sdk.launch SPEC --address A``.

SPEC is ``module:Class``, ``path/to/file.py`` (its one Bot subclass) or ``file.py:Class``,
or a sample bot name (``random``, ``greedy``, ``strong``). The address and token may also
come from ARENA_ADDRESS and ARENA_TOKEN (that is how ``arena play`` starts bots, with the
spec already resolved to ``file.py:Class`` or ``module:Class`` by ``arena.botspec``).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
from pathlib import Path

from gin_arena_core.loading import LoadError, import_bot_module

from gin_arena_sdk.bot import Bot

SAMPLE_BOTS = {
    "random": "sample_bots.random_bot:RandomBot",
    "greedy": "sample_bots.greedy:GreedyBot",
    "strong": "sample_bots.strong:StrongBot",
}


class SpecError(ValueError):
    """A bot spec that names no loadable Bot class."""


def load_bot_class(spec: str) -> type[Bot]:
    """The Bot subclass named by ``spec``; ``SpecError`` saying what was wrong otherwise."""
    if spec in SAMPLE_BOTS:
        spec = SAMPLE_BOTS[spec]
        package = spec.partition(".")[0]
        if importlib.util.find_spec(package) is None:
            raise SpecError(f"the sample bots ({package}) come with the arena, not with "
                            "gin-arena-sdk alone: run this from a clone of gin-arena, or "
                            "give your bot's file")
    head, _, cls_name = spec.partition(":")
    try:
        module = import_bot_module(head)
    except LoadError as e:
        raise SpecError(str(e)) from None
    if cls_name:
        cls = getattr(module, cls_name, None)
        if not (inspect.isclass(cls) and issubclass(cls, Bot)):
            raise SpecError(f"{head} has no Bot subclass named {cls_name!r}")
        return cls
    found = [c for c in vars(module).values()
             if inspect.isclass(c) and issubclass(c, Bot) and c is not Bot
             and c.__module__ == module.__name__]
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise SpecError(f"{head}: name the class as {head}:Class (Bot subclasses: {names})")
    return found[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gin_arena_sdk.launch", description=__doc__)
    ap.add_argument("spec")
    ap.add_argument("--address", default=os.environ.get("ARENA_ADDRESS", ""))
    ap.add_argument("--token", default=os.environ.get("ARENA_TOKEN", ""))
    ap.add_argument("--name", default=os.environ.get("ARENA_NAME", ""))
    ap.add_argument("--tls", action="store_true", help="connect over TLS (system CAs)")
    ap.add_argument("--tls-ca", default=os.environ.get("ARENA_TLS_CA", ""), metavar="PEM",
                    help="connect over TLS trusting this CA certificate file")
    args = ap.parse_args(argv)
    if not args.address:
        ap.error("no arena address: pass --address HOST:PORT or set ARENA_ADDRESS")
    tls_ca: bytes | None = None
    if args.tls_ca:
        try:
            tls_ca = Path(args.tls_ca).read_bytes()
        except OSError as e:
            ap.error(f"--tls-ca: {args.tls_ca}: {e.strerror or e}")
    try:
        bot = load_bot_class(args.spec)()
    except SpecError as e:
        print(f"gin_arena_sdk.launch: {e}", file=sys.stderr)
        return 2
    if args.name:
        bot.name = args.name
    from gin_arena_sdk.client import run

    run(bot, args.address, token=args.token, tls=args.tls, tls_ca=tls_ca)
    return 0


if __name__ == "__main__":
    sys.exit(main())
