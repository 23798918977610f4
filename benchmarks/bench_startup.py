"""Start-up: the ``teddy`` console script ÷ ``python -c "import click"``.

Each command runs as a fresh subprocess of the same interpreter (the virtual
environment's ``teddy`` script next to ``sys.executable``), in interleaved rounds;
the ratio is median ÷ median.  Measured: ``teddy --help`` and ``teddy parse`` of a
small example plan (targets: ≤ 1.15 for ``--help`` with bytecode cached; ≤ 2 for the
rest).  ``teddy --help`` is answered by :mod:`plankit.launch` before click is imported
(on a terminal 80 columns wide or more, or none, as here); ``teddy parse`` goes through
click and its command module.

Two settings, both reported:

- *bytecode cached*, as an installed command runs: compiled modules are kept, in a
  temporary ``PYTHONPYCACHEPREFIX`` (nothing is written into the checkout);
- *as configured*: the environment as it is.  Where ``PYTHONDONTWRITEBYTECODE`` is
  set and the checkout has no ``__pycache__``, every run compiles plankit's modules
  from source, while click's come precompiled from site-packages.

``--rounds N`` sets the rounds (at least 20).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _bench import ROOT, Result, interleaved, log, report, require, rounds_from_argv

SMALL_PLAN = ROOT / "examples" / "finisher-agent-research.md"
TARGET = 2.0
HELP_TARGET = 1.15
"""``teddy --help`` with bytecode cached: the interpreter and plankit.launch, no click."""


def _teddy() -> str:
    script = Path(sys.executable).parent / "teddy"
    require(script.exists(), f"no teddy script next to {sys.executable}; pip install -e .")
    return str(script)


def _run(argv: list[str], env: dict[str, str]) -> None:
    result = subprocess.run(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    require(result.returncode == 0, f"{argv} failed: {result.stderr.decode()[-500:]}")


def _measure(label: str, env: dict[str, str], rounds: int) -> list[Result]:
    teddy = _teddy()
    commands = {
        "import click": [sys.executable, "-c", "import click"],
        "teddy --help": [teddy, "--help"],
        "teddy parse": [teddy, "parse", str(SMALL_PLAN.relative_to(ROOT))],
    }
    cases = {name: (lambda argv=argv: _run(argv, env)) for name, argv in commands.items()}
    for _ in range(2):  # warm up: bytecode caches, the page cache
        for func in cases.values():
            func()
    log(f"start-up, {label}: {len(cases)} commands, {rounds} rounds …")
    m = interleaved(cases, rounds)
    base = m["import click"]
    return [
        Result(
            f"{name} ÷ import click ({label})",
            m[name] / base,
            HELP_TARGET if (name, label) == ("teddy --help", "bytecode cached") else TARGET,
            f"{m[name] * 1e3:.0f} ms ÷ {base * 1e3:.0f} ms",
        )
        for name in ("teddy --help", "teddy parse")
    ]


def measure(rounds: int = 30) -> list[Result]:
    """The start-up ratios, with bytecode cached and with the environment as it is."""
    rounds = max(20, rounds)
    with tempfile.TemporaryDirectory(prefix="plankit-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        results = _measure("bytecode cached", env, rounds)
    results += _measure("as configured", dict(os.environ), rounds)
    return results


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(30))))
