"""The committed generated protocol code equals a fresh run of the generator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gin_arena_core.protocol import generate


def test_committed_generated_code_is_fresh(tmp_path: Path) -> None:
    assert generate.main(["--out", str(tmp_path)]) == 0
    fresh = sorted(p.name for p in tmp_path.iterdir())
    assert fresh == sorted(generate.GENERATED_FILES)
    for name in fresh:
        committed = generate.DEFAULT_OUT / name
        assert committed.is_file(), (
            f"{committed} is missing: run python -m gin_arena_core.protocol.generate")
        assert committed.read_bytes() == (tmp_path / name).read_bytes(), (
            f"{committed} differs from a fresh run: run python -m gin_arena_core.protocol.generate"
        )


def test_check_flags_a_stale_file(tmp_path: Path) -> None:
    assert generate.main(["--out", str(tmp_path)]) == 0
    assert generate.main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "arena_pb2.pyi").write_bytes(b"# edited\n")
    assert generate.main(["--out", str(tmp_path), "--check"]) == 1


def test_grpc_module_imports_messages_relatively() -> None:
    text = (generate.DEFAULT_OUT / "arena_pb2_grpc.py").read_text()
    assert "from . import arena_pb2 as " in text
    assert "from gin_arena" not in text


def test_import_loads_neither_trio_nor_structlog() -> None:
    code = (
        "import sys\n"
        "from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc\n"
        "assert PROTOCOL_VERSION == 1\n"
        "pb.BotMessage(hello=pb.Hello(protocol_version=PROTOCOL_VERSION))\n"
        "assert pb_grpc.ArenaStub\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('trio', 'structlog'))\n"
        "assert not bad, bad\n"
    )
    root = Path(generate.__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, timeout=60)
