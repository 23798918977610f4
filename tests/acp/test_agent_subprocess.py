"""``teddy acp`` as a real subprocess over stdio, driven by the SDK's client.

A whole turn with approve, with reject, with allow-always, and with a cancel
mid-EXECUTE; every message validated against the v1 schema.  And the stream itself:
nothing but JSON-RPC lines on stdout, even when code in the agent prints.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

from tests.acp.kit import (
    ROOT,
    TEDDY,
    RecordingClient,
    SchemaCheck,
    create,
    execute,
    plan_text,
    settled,
    start_session,
    subprocess_agent,
)
from tests.waiting import DEADLINE, record_group, until, wait_for_group_end

ENV = {"PYTHONPATH": str(ROOT)}


def run(
    project: Path, check: SchemaCheck, client: RecordingClient, *prompts: str
) -> tuple[list[str], str]:
    async def main() -> tuple[list[str], str]:
        async with subprocess_agent(client, check, cwd=project, env=ENV) as (conn, transcript, _):
            session_id = await start_session(conn, client, project)
            stops = []
            for text in prompts:
                response = await conn.prompt(
                    session_id=session_id, prompt=[{"type": "text", "text": text}]
                )
                stops.append(str(response.stop_reason))
            await settled(client, transcript)
            return stops, session_id

    return asyncio.run(main())


def test_approve(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project, terminal=True)
    stops, session_id = run(
        project, check, client, plan_text(create("a.txt", "a"), execute("cat a.txt"))
    )
    assert stops == ["end_turn"]
    assert (project / "a.txt").read_text() == "a\n"
    assert client.rich() == ["completed", "completed"]
    assert "Completed 🟢" in (project / ".teddy" / session_id / "01" / "report.md").read_text()
    assert check.checked > 20


def test_reject(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project, default="reject-once")
    stops, session_id = run(
        project, check, client, plan_text(create("a.txt", "a"), execute("touch ran"))
    )
    assert stops == ["end_turn"]
    assert not (project / "a.txt").exists() and not (project / "ran").exists()
    assert client.rich() == ["rejected", "rejected"]
    assert "Skipped ⚪" in (project / ".teddy" / session_id / "01" / "report.md").read_text()


def test_allow_always(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project, ["allow-always"], default="reject-once")
    stops, _ = run(
        project,
        check,
        client,
        plan_text(create("a.txt", "a"), create("b.txt", "b")),
        plan_text(create("c.txt", "c")),
    )
    assert stops == ["end_turn", "end_turn"]
    assert len(client.permissions) == 1
    assert all((project / n).exists() for n in ("a.txt", "b.txt", "c.txt"))


def test_cancel_mid_execute(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project)
    group = project / "group"
    command = f"{record_group(group)}; touch started; sleep 30; touch late"
    plan = plan_text(execute(command), create("never.txt", "n"))

    async def main() -> tuple[str, str]:
        async with subprocess_agent(client, check, cwd=project, env=ENV) as (conn, transcript, _):
            session_id = await start_session(conn, client, project)
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=[{"type": "text", "text": plan}])
            )
            await until((project / "started").exists, "the command to start")
            await conn.cancel(session_id=session_id)
            response = await asyncio.wait_for(prompt, DEADLINE)
            await settled(client, transcript)
            return str(response.stop_reason), session_id

    stop, session_id = asyncio.run(main())
    assert stop == "cancelled"
    wait_for_group_end(group)  # the command was stopped, not waited for:
    assert not (project / "late").exists()  # it never got past its sleep
    assert not (project / "never.txt").exists()
    assert client.rich() == ["cancelled", "cancelled"]
    report = (project / ".teddy" / session_id / "01" / "report.md").read_text()
    assert "Failed 🔴" in report and "interrupted" in report
    assert (project / ".teddy" / session_id / "02").is_dir()


def _rpc(ident: int, method: str, params: dict[str, object]) -> bytes:
    return (
        json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n"
    ).encode()


def test_stdout_carries_nothing_but_acp_messages(project: Path, schema: SchemaCheck) -> None:
    proc = subprocess.Popen(
        [*TEDDY, "acp", "-v", "--planner", "tests.acp.planners:noisy"],
        cwd=project,
        env={**os.environ, **ENV},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_rpc(0, "initialize", {"protocolVersion": 1}))
    proc.stdin.flush()
    lines = [json.loads(proc.stdout.readline())]
    proc.stdin.write(_rpc(1, "session/new", {"cwd": str(project), "mcpServers": []}))
    proc.stdin.flush()
    while "result" not in lines[-1] or lines[-1].get("id") != 1:
        lines.append(json.loads(proc.stdout.readline()))
    session_id = lines[-1]["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]}
    proc.stdin.write(_rpc(2, "session/prompt", prompt))
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        assert line, "the agent closed stdout early"
        message = json.loads(line)  # any non-JSON byte fails here
        lines.append(message)
        if message.get("method") == "session/request_permission":  # answer: allow
            answer = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}},
            }
            proc.stdin.write((json.dumps(answer) + "\n").encode())
            proc.stdin.flush()
        if message.get("id") == 2 and "result" in message:
            break
    proc.stdin.close()
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.wait(timeout=DEADLINE) == 0
    assert lines[-1]["result"] == {"stopReason": "end_turn"}
    assert lines[0]["result"]["protocolVersion"] == 1
    assert "stray output from a planner" in stderr and "a log line" in stderr
    assert (project / "noisy.txt").read_text() == "hello\n"
    schema.problems = []
    for message in lines:
        method = {0: "initialize", 1: "session/new", 2: "session/prompt"}.get(message.get("id"))
        schema.check(message, None if "method" in message else method)
    assert schema.problems == []
