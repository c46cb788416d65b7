"""Start a Python module as a child process with a clean signal state or a pinned CPU,
without ``preexec_fn``.

``preexec_fn`` runs Python code in the forked child before ``exec``; in a process that
already has gRPC's threads (the tests, the benchmarks) that fork can abort in gRPC's fork
handlers. Doing the same work at the start of the child's own interpreter is safe: the
command is ``python -c PRELUDE MODULE ARGS...``.
"""

from __future__ import annotations

import sys

_PRELUDE = """\
import os, runpy, signal, sys
cpu, sigint, module = sys.argv[1], sys.argv[2], sys.argv[3]
if cpu and hasattr(os, "sched_setaffinity") and int(cpu) < (os.cpu_count() or 1):
    os.sched_setaffinity(0, {int(cpu)})
if sigint == "1":
    signal.signal(signal.SIGINT, signal.default_int_handler)
sys.argv = [module, *sys.argv[4:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def python_module(module: str, *args: str, sigint: bool = False, cpu: int | None = None
                  ) -> list[str]:
    """The command that runs ``python -m module args...``, first restoring Python's
    Ctrl-C handler (``sigint``: a background job of a non-interactive shell inherits
    SIGINT ignored) and pinning the process to ``cpu`` (if the machine has it)."""
    return [sys.executable, "-c", _PRELUDE, "" if cpu is None else str(cpu),
            "1" if sigint else "0", module, *args]


__all__ = ["python_module"]
