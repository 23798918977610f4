"""MCP: the servers' start-up against ``teddy acp``'s, and the size of their tool lists.

1. **Spawn → initialize answer.** ``plankit mcp``, ``agentctl mcp`` and ``teddy acp``
   (the console scripts) are each spawned, sent ``initialize`` and timed until the
   answer line arrives, in the same interleaved rounds; reported as each MCP server's
   median ÷ ``teddy acp``'s (target ≤ 1.5: an MCP client with a short start-up timeout
   must not give up on plankit's servers where it would not on ``teddy acp``).  Both
   answer before their SDK is imported (:mod:`plankit.mcp.front`,
   :mod:`plankit.acp.stdio`).  The time to the ``tools/list`` answer (the SDK loaded
   and the server built) is shown alongside.
2. **tools/list size.** The bytes of ``plankit mcp``'s ``tools/list`` result (compact
   JSON, UTF-8) for the default (core) set and for ``--tools all``, and ``agentctl
   mcp``'s; a token is estimated as 4 bytes (no tokenizer: JSON of English text runs at
   3.5–4.5 bytes a token); reported as tokens ÷ 2,000 (target ≤ 1 for the sets a
   client gets by default).

``--rounds N`` sets the rounds.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _bench import Result, interleaved, log, report, require, rounds_from_argv

MCP_INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}
TOKEN_BUDGET = 2000
BYTES_PER_TOKEN = 4


def _script(name: str) -> str:
    script = Path(sys.executable).parent / name
    require(script.exists(), f"no {name} script next to {sys.executable}; pip install -e .")
    return str(script)


def _spawn(argv: list[str], cwd: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    require(line, "the server closed its output")
    answer: dict[str, Any] = json.loads(line)
    return answer


def _mcp_session(
    argv: list[str], cwd: str, env: dict[str, str]
) -> tuple[float, float, dict[str, Any]]:
    """Spawn an MCP server: (seconds to the initialize answer, to the tools/list answer,
    the tools/list result)."""
    started = time.perf_counter()
    proc = _spawn(argv, cwd, env)
    _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": MCP_INIT})
    answer = _answer(proc)
    init = time.perf_counter() - started
    require(answer.get("result", {}).get("protocolVersion") == "2025-06-18", f"bad {answer}")
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    listed = _answer(proc)
    ready = time.perf_counter() - started
    require(listed.get("id") == 1 and "tools" in listed.get("result", {}), f"bad {listed}")
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)
    return init, ready, listed["result"]


def _acp_init(argv: list[str], cwd: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = _spawn(argv, cwd, env)
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    _send(proc, request)
    answer = _answer(proc)
    elapsed = time.perf_counter() - started
    require(answer.get("result", {}).get("protocolVersion") == 1, f"bad answer {answer}")
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed


def _size(result: dict[str, Any]) -> int:
    return len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())


def measure(rounds: int = 15) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="plankit-mcp-bench-") as project:
        env = {
            **os.environ,
            "AGENTFLOW_HOME": os.path.join(project, ".agentflow"),
            "AGENTFLOW_SESSION_ID": "bench",
        }
        plankit = [_script("plankit"), "mcp", "--store", "PLAN.md"]
        agentctl = [_script("agentctl"), "mcp"]
        teddy = [_script("teddy"), "acp"]
        init: dict[str, list[float]] = {"plankit mcp": [], "agentctl mcp": [], "teddy acp": []}
        ready: dict[str, list[float]] = {"plankit mcp": [], "agentctl mcp": []}
        lists: dict[str, dict[str, Any]] = {}

        def mcp_case(name: str, argv: list[str]) -> None:
            first, listed, result = _mcp_session(argv, project, env)
            init[name].append(first)
            ready[name].append(listed)
            lists[name] = result

        cases = {
            "plankit mcp": lambda: mcp_case("plankit mcp", plankit),
            "agentctl mcp": lambda: mcp_case("agentctl mcp", agentctl),
            "teddy acp": lambda: init["teddy acp"].append(_acp_init(teddy, project, env)),
        }
        for case in cases.values():  # warm up (compiled modules, disk cache)
            case()
        for values in (*init.values(), *ready.values()):
            values.clear()
        log(f"mcp start-up: {rounds} rounds …")
        interleaved(cases, rounds)
        _, _, everything = _mcp_session([*plankit, "--tools", "all"], project, env)

    med = {name: statistics.median(values) for name, values in init.items()}
    acp = med["teddy acp"]
    results = [
        Result(
            f"{name}: spawn → initialize answer ÷ teddy acp's",
            med[name] / acp,
            1.5,
            f"{med[name] * 1e3:.0f} ms ÷ {acp * 1e3:.0f} ms; tools/list answered at "
            f"{statistics.median(ready[name]) * 1e3:.0f} ms (the SDK loaded)",
        )
        for name in ("plankit mcp", "agentctl mcp")
    ]
    sizes = {
        "plankit mcp (default: core)": lists["plankit mcp"],
        "plankit mcp --tools all": everything,
        "agentctl mcp": lists["agentctl mcp"],
    }
    for name, result in sizes.items():
        size = _size(result)
        tokens = size / BYTES_PER_TOKEN
        results.append(
            Result(
                f"{name}: tools/list tokens (bytes ÷ 4) ÷ {TOKEN_BUDGET}",
                tokens / TOKEN_BUDGET,
                1.0 if "all" not in name else 2.0,
                f"{len(result['tools'])} tools, {size} bytes ≈ {tokens:.0f} tokens",
            )
        )
    return results


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(15))))
