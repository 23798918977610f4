"""Offline planning: ``teddy plan`` with the scripted model ÷ ``teddy --version``.

``teddy plan --model teddy-scripted`` (the bundled fake model, no network) is the whole
planning path of a turn: the session read, the prompt built from the turn's context, the
answer streamed and ``plan.md`` written and checked.  It must cost no more than a few
starts of ``teddy`` through click (``teddy --version``: click and the command table;
``teddy --help`` is answered before click is imported, by :mod:`plankit.launch`, and
is no longer that measure): nothing on that path may import llm or a provider's SDK (the OpenAI
SDK alone is seconds on a busy machine).  Both run as fresh subprocesses of the same
interpreter, with bytecode cached in a temporary ``PYTHONPYCACHEPREFIX``, in interleaved
rounds; the ratio is median ÷ median (target ≤ 4).

``--rounds N`` sets the rounds (at least 10).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _bench import Result, interleaved, log, report, require, rounds_from_argv

TARGET = 4.0
PLAN = """# Greet by name
- **Status:** Green 🟢
- **Agent:** Developer

## Rationale
````text
### 1. Synthesis
A greeting.
### 2. Justification
It is asked for.
### 3. Expected Outcome
A file.
### 4. State Dashboard
Ready.
````

## Action Plan

### `CREATE`
- **File Path:** [hello.txt](/hello.txt)
- **Description:** The greeting.
````text
hello
````
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    require(result.returncode == 0, f"{argv} failed: {result.stderr.decode()[-500:]}")


def measure(rounds: int = 20) -> list[Result]:
    """``teddy plan`` with the scripted model ÷ ``teddy --version``."""
    rounds = max(10, rounds)
    teddy = Path(sys.executable).parent / "teddy"
    require(teddy.exists(), f"no teddy script next to {sys.executable}; pip install -e .")
    with tempfile.TemporaryDirectory(prefix="plankit-bench-plan-") as tmp:
        base = Path(tmp)
        project = base / "project"
        project.mkdir()
        (project / "app.py").write_text("print('hi')\n", encoding="utf-8")
        responses = base / "responses.json"
        responses.write_text(json.dumps([PLAN]), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(
            PYTHONPYCACHEPREFIX=str(base / "pycache"),
            TEDDY_MODEL="teddy-scripted",
            TEDDY_SCRIPTED_RESPONSES=str(responses),
            LLM_USER_PATH=str(base / "llm"),
            PLANKIT_HOME=str(base / "home"),
        )
        _run([str(teddy), "new", "bench"], project, env)
        position = base / "responses.json.position"

        def plan() -> None:
            position.unlink(missing_ok=True)  # the same answer every round
            _run([str(teddy), "plan", "--replace", "-m", "greet"], project, env)

        cases = {
            "teddy --version": lambda: _run([str(teddy), "--version"], project, env),
            "teddy plan": plan,
        }
        for _ in range(2):  # warm up: bytecode caches, the page cache
            for func in cases.values():
                func()
        log(f"offline planning: {len(cases)} commands, {rounds} rounds …")
        m = interleaved(cases, rounds)
    base_time = m["teddy --version"]
    return [
        Result(
            "teddy plan (teddy-scripted) ÷ teddy --version",
            m["teddy plan"] / base_time,
            TARGET,
            f"{m['teddy plan'] * 1e3:.0f} ms ÷ {base_time * 1e3:.0f} ms",
        )
    ]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(20))))
