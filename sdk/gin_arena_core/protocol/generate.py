"""Regenerate the Python code for the wire protocol from ``proto/gin_arena/v1/arena.proto``.

Usage::

    python -m gin_arena_core.protocol.generate            # rewrite its _gen/ directory
    python -m gin_arena_core.protocol.generate --check    # exit 1 if the committed files are stale
    python -m gin_arena_core.protocol.generate --out DIR  # write (or check) somewhere else

The output is always five files in one flat directory: ``arena_pb2.py``, ``arena_pb2.pyi``,
``arena_pb2_grpc.py``, ``__init__.py`` and a copy of the contract, ``arena.proto`` (shipped
in the SDK's distribution, for authors who generate their own code from it). protoc names
the message module after the proto path (``from gin_arena.v1 import arena_pb2``) inside the
gRPC module; that single import is rewritten to a relative one so the package imports
without touching ``sys.path``.

The output depends on the grpcio-tools version (pinned in pyproject.toml); the committed
files must equal a fresh run, which ``--check`` and ``tests/test_generated_fresh.py`` verify.
"""

from __future__ import annotations

import argparse
import importlib.resources
import sys
import tempfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
"""``sdk/gin_arena_core/protocol/``."""
DEFAULT_OUT = PACKAGE_DIR / "_gen"
"""Where the generated code lives, and the only place it lives."""
PROTO_ROOT = PACKAGE_DIR.parents[2] / "proto"
"""The ``-I`` root: proto files are named relative to it, as in their ``import`` lines."""
PROTO_FILE = "gin_arena/v1/arena.proto"
"""The contract, relative to :data:`PROTO_ROOT`."""

GENERATED_FILES = ("__init__.py", "arena.proto", "arena_pb2.py", "arena_pb2.pyi",
                   "arena_pb2_grpc.py")
"""Every file the generator owns in the output directory."""

_INIT_TEXT = (
    f'"""Generated from proto/{PROTO_FILE} by `python -m gin_arena_core.protocol.generate`.\n'
    "\n"
    "Do not edit: regenerate instead. Import through `gin_arena_core.protocol` (`pb`, `pb_grpc`).\n"
    '"""\n'
)
_ABSOLUTE_IMPORT = "from gin_arena.v1 import arena_pb2 as "
_RELATIVE_IMPORT = "from . import arena_pb2 as "


class GenerateError(RuntimeError):
    """protoc failed, or its output was not shaped as expected."""


def render() -> dict[str, bytes]:
    """Run protoc on the contract and return the output files by name, post-processed."""
    from grpc_tools import protoc  # a test-only dependency: import it only when generating

    well_known = importlib.resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="arena-protoc-") as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{well_known}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            str(PROTO_ROOT / PROTO_FILE),
        ]
        code = protoc.main(args)
        if code != 0:
            raise GenerateError(f"protoc exited with status {code} on {PROTO_ROOT / PROTO_FILE}")
        emitted = Path(tmp) / Path(PROTO_FILE).parent
        files = {
            name: (emitted / name).read_bytes()
            for name in ("arena_pb2.py", "arena_pb2.pyi", "arena_pb2_grpc.py")
        }
    files["arena_pb2_grpc.py"] = _relativize(files["arena_pb2_grpc.py"])
    files["__init__.py"] = _INIT_TEXT.encode()
    files["arena.proto"] = (PROTO_ROOT / PROTO_FILE).read_bytes()
    return files


def _relativize(source: bytes) -> bytes:
    """Rewrite the one absolute import of the message module into a relative import."""
    text = source.decode()
    count = text.count(_ABSOLUTE_IMPORT)
    if count != 1:
        raise GenerateError(
            f"expected exactly one {_ABSOLUTE_IMPORT!r} in arena_pb2_grpc.py, found {count}"
        )
    return text.replace(_ABSOLUTE_IMPORT, _RELATIVE_IMPORT).encode()


def write(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` into ``out`` (created if missing), replacing what was there."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out / name).write_bytes(data)


def stale_files(out: Path, files: dict[str, bytes]) -> list[str]:
    """Names of the files in ``out`` that are missing or differ from ``files``."""
    stale = []
    for name, data in sorted(files.items()):
        path = out / name
        if not path.is_file() or path.read_bytes() != data:
            stale.append(name)
    return stale


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m gin_arena_core.protocol.generate",
        description=f"Regenerate Python code from proto/{PROTO_FILE}.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="output directory (default: %(default)s)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files in --out differ from a fresh run",
    )
    args = parser.parse_args(argv)
    out: Path = args.out
    try:
        files = render()
    except GenerateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        stale = stale_files(out, files)
        if stale:
            print(
                f"{out}: stale generated code ({', '.join(stale)}); "
                "run `python -m gin_arena_core.protocol.generate`",
                file=sys.stderr,
            )
            return 1
        return 0
    write(out, files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
