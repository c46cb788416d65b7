"""What a bot spec names, worked out on the host side without running the bot's code.

A spec is a sample bot's name (``random``, ``greedy``, ``strong``), a Python class
(``module:Class``, ``path/to/file.py`` holding one bot class, or ``file.py:Class``), or
else a command line to run. A Python spec is checked by reading its source (the file
exists and parses, the class is defined in it) rather than importing it: only
``load_bot_class``, for trusted in-process play, runs a bot's code in this process.
A launched Python bot is started as ``python -m gin_arena_sdk.launch TARGET`` with the target
resolved here. The host never imports the SDK: the bot's process does.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gin_arena_core.loading import LoadError, import_bot_module

SAMPLE_BOTS = {
    "random": "sample_bots.random_bot:RandomBot",
    "greedy": "sample_bots.greedy:GreedyBot",
    "strong": "sample_bots.strong:StrongBot",
}
"""The sample bots, by the names ``arena play`` and the configs use."""


class SpecError(ValueError):
    """A bot spec that names no bot the arena can seat; the message says why."""


def is_python_spec(spec: str) -> bool:
    """True if ``spec`` names Python code (rather than a command line to run)."""
    if spec in SAMPLE_BOTS:
        return True
    head = spec.split(":")[0]
    if head.endswith(".py"):
        # "python3 bot.py" is a command; a file path may hold spaces only if it exists
        return " " not in spec.strip() or Path(head).is_file()
    return ":" in spec and " " not in spec and all(
        part.isidentifier() for part in head.split(".")) and spec.split(":")[1].isidentifier()


@dataclass(frozen=True, slots=True)
class PythonBot:
    """A Python spec, resolved: ``target`` (``module:Class`` or ``/abs/file.py:Class``) and
    the name its class gives itself (its ``name = "..."`` line, else the class's name)."""

    target: str
    name: str

    @property
    def class_name(self) -> str:
        return self.target.rpartition(":")[2]


def _source_of(head: str) -> tuple[Path, str]:
    """The file a spec's head names (a .py path, or a module found on sys.path without
    running it), and the text to show in errors."""
    if head.endswith(".py"):
        path = Path(head)
        if not path.is_file():
            raise SpecError(f"bot file {head!r} does not exist")
        return path.resolve(), head
    try:
        found = importlib.util.find_spec(head)
    except (ImportError, ValueError) as e:
        raise SpecError(f"cannot find bot module {head!r}: {e}") from None
    if found is None or found.origin is None or not found.origin.endswith(".py"):
        raise SpecError(f"cannot find bot module {head!r} (a Python source file on sys.path)")
    return Path(found.origin), head


def _class_name_of(node: ast.ClassDef) -> str:
    for item in node.body:
        if isinstance(item, ast.Assign) and len(item.targets) == 1 \
                and isinstance(item.targets[0], ast.Name) and item.targets[0].id == "name" \
                and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str) \
                and item.value.value:
            return item.value.value
    return node.name


def _base_names(node: ast.ClassDef) -> list[str]:
    out = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            out.append(base.id)
        elif isinstance(base, ast.Attribute):
            out.append(base.attr)
    return out


def resolve_python(spec: str) -> PythonBot:
    """The class a Python spec names, found by reading its source; ``SpecError`` saying
    what is wrong otherwise. Without ``:Class`` the file must define one class that
    derives from a ``...Bot`` class."""
    target = SAMPLE_BOTS.get(spec, spec)
    head, _, wanted = target.partition(":")
    path, shown = _source_of(head)
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as e:
        raise SpecError(f"{shown}: line {e.lineno}: {e.msg}") from None
    except (OSError, ValueError) as e:
        raise SpecError(f"{shown}: cannot read it: {e}") from None
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    if wanted:
        node = classes.get(wanted)
        if node is None:
            names = ", ".join(classes) or "none"
            raise SpecError(f"{shown} defines no class {wanted!r} (classes: {names})")
    else:
        bots = [n for n in classes.values() if any(b.endswith("Bot") for b in _base_names(n))]
        if len(bots) != 1:
            names = ", ".join(n.name for n in bots) or "none"
            raise SpecError(f"{shown}: name the class as {shown}:Class (bot classes: {names})")
        node = bots[0]
    where = str(path) if head.endswith(".py") else head
    return PythonBot(f"{where}:{node.name}", _class_name_of(node))


_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".jar", ".rb", ".pl", ".lua", ".exe")


def command_name(spec: str) -> str:
    """The name a command bot plays under: its script's or jar's name when the command runs
    one through an interpreter ("python3 mybot.py", "node bot.js", "java -jar bot.jar":
    mybot, bot, bot), else its program's ("./target/release/mybot": mybot)."""
    argv = shlex.split(spec)
    for arg in argv[1:]:
        if not arg.startswith("-") and (arg.endswith(_SCRIPT_SUFFIXES) or Path(arg).is_file()):
            return Path(arg).stem or Path(argv[0]).name
    return Path(argv[0]).name


def bot_name(spec: str) -> str:
    """The one rule for the name a bot plays under before it says Hello, everywhere (``arena
    play``, tournaments): a sample bot's name; a Python class's ``name = "..."`` line, else
    the class's name; a command's script, else its program (``command_name``). Letters,
    digits and ``_.+-`` only, at most 64 characters. Never runs the bot's code; a spec
    that cannot be read is named from its text (its error comes when it is checked)."""
    if spec in SAMPLE_BOTS:
        base = spec
    elif is_python_spec(spec):
        try:
            found = resolve_python(spec)
            base = found.name if found.name != "bot" else found.class_name
        except SpecError:
            head, _, cls = spec.partition(":")
            base = cls or Path(head).stem
    else:
        try:
            base = command_name(spec)
        except (ValueError, IndexError):
            base = "bot"
    base = re.sub(r"[^A-Za-z0-9_.+-]", "_", base).lstrip("_.+-") or "bot"
    return base[:64]


def entrant_names(specs: Sequence[str], given: Sequence[str] = ()) -> list[str]:
    """The names ``specs`` play under in one series: ``given[i]`` where it is not empty,
    else ``bot_name``; a name met again is numbered (``greedy``, ``greedy-2``)."""
    out: list[str] = []
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        if i < len(given) and given[i]:
            out.append(given[i])
            continue
        base = bot_name(spec)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def load_bot_class(spec: str) -> type:
    """Import the bot class ``spec`` names, in this process: trusted in-process play only
    (the bot's module runs here). ``SpecError`` saying what was wrong otherwise."""
    bot = resolve_python(spec)
    head = bot.target.rpartition(":")[0]
    try:
        module = import_bot_module(head)
    except LoadError as e:
        raise SpecError(str(e)) from None
    cls = getattr(module, bot.class_name, None)
    if not (inspect.isclass(cls) and callable(getattr(cls, "decide", None))):
        raise SpecError(f"{head}:{bot.class_name} is not a bot class (it has no decide)")
    return cls


__all__ = ["SAMPLE_BOTS", "PythonBot", "SpecError", "bot_name", "command_name",
           "entrant_names", "is_python_spec", "load_bot_class", "resolve_python"]
