"""Import a bot's module, named by a ``.py`` file's path or a module name, in this process.

Used where a Python bot's own code is meant to run here: its own process
(``gin_arena_sdk.launch``) and trusted in-process play (``arena.botspec``). A module that
cannot be found or raises while it loads is a ``LoadError`` of one line.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType


class LoadError(ValueError):
    """The bot's module cannot be imported (one line saying why)."""


def import_bot_module(head: str) -> ModuleType:
    """The module ``head`` names: a ``.py`` file (loaded under a private name) or a module
    on ``sys.path``."""
    if head.endswith(".py"):
        path = Path(head)
        if not path.is_file():
            raise LoadError(f"bot file {head!r} does not exist")
        spec = importlib.util.spec_from_file_location(f"_bot_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise LoadError(f"cannot load {head!r} as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise LoadError(f"{head}: {type(e).__name__}: {e}") from None
        return module
    try:
        return importlib.import_module(head)
    except Exception as e:
        raise LoadError(f"cannot import bot module {head!r}: {type(e).__name__}: {e}") \
            from None


__all__ = ["LoadError", "import_bot_module"]
