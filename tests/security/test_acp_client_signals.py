"""``plankit acp run`` under a terminal's Ctrl-C, and showing what an agent says.

A terminal sends SIGINT to its whole foreground process group; the tests do the same
(``os.killpg`` on the group the client leads).  The agent runs in a session of its
own, so only the client sees it: the first Ctrl-C sends ``session/cancel`` (the agent,
alive, stops its command and writes its report), the second stops the agent.

Agent text is shown literally: rich markup in titles, entries, options and messages
is printed as written (it used to crash the live view), and terminal control
sequences are shown as escapes, both on a terminal (a pseudo-terminal here) and in
the plain-line view.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.acp.kit import PLANKIT, ROOT, TEDDY, execute, plan_text
from tests.security.rpc import alive
from tests.waiting import DEADLINE, record_group, wait_for_group_end, wait_until

AGENT = [sys.executable, str(ROOT / "tests" / "security" / "scripted_agent.py")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PLANKIT_HOME": str(tmp_path / "home")}
    env.pop("TEDDY_SESSION", None)
    return {**env, **extra}


def start_client(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """``plankit acp run ARGS`` leading a process group of its own, as a shell's
    foreground job does."""
    return subprocess.Popen(
        [*PLANKIT, "acp", "run", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def ctrl_c(client: subprocess.Popen[str]) -> None:
    """What a terminal does on Ctrl-C: SIGINT to the foreground process group."""
    os.killpg(client.pid, signal.SIGINT)


def transcript(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_ctrl_c_cancels_the_turn_and_the_agent_records_it(project: Path, tmp_path: Path) -> None:
    group = project / "group"
    plan = plan_text(execute(f"{record_group(group)}; touch started; sleep 600; touch late"))
    client = start_client(
        project, environment(tmp_path), "--json", "--approve-all", "--", *TEDDY, "acp", plan
    )
    wait_until((project / "started").exists, "the command to start")
    ctrl_c(client)
    out, err = client.communicate(timeout=DEADLINE)
    assert client.returncode == 130, out + err
    messages = transcript(out)
    sent = [m["message"] for m in messages if m["from"] == "client"]
    assert any(m.get("method") == "session/cancel" for m in sent)  # type: ignore[union-attr]
    answers = [m["message"] for m in messages if m["from"] == "agent"]
    stops = [a["result"].get("stopReason") for a in answers if isinstance(a.get("result"), dict)]  # type: ignore[union-attr]
    assert "cancelled" in stops  # the agent lived to answer the cancelled prompt
    wait_for_group_end(group)  # its command was stopped:
    assert not (project / "late").exists()
    reports = list((project / ".teddy").glob("*/01/report.md"))
    assert len(reports) == 1 and "interrupted" in reports[0].read_text(encoding="utf-8")


def test_a_second_ctrl_c_stops_an_agent_that_ignores_the_cancel(
    project: Path, tmp_path: Path
) -> None:
    env = environment(tmp_path, AGENT_MODE="stubborn", AGENT_DIR=str(project))
    client = start_client(project, env, "--approve-all", "--", *AGENT, "go")
    wait_until((project / "pid").exists, "the agent's prompt to start")
    agent = int((project / "pid").read_text(encoding="utf-8"))
    ctrl_c(client)
    wait_until((project / "cancelled").exists, "session/cancel to reach the agent")
    assert alive(agent)  # the terminal's Ctrl-C did not reach the agent
    assert client.poll() is None  # the client waits for the agent's answer
    ctrl_c(client)
    wait_until(lambda: not alive(agent), "the agent to be stopped")
    out, err = client.communicate(timeout=DEADLINE)
    assert client.returncode == 130, out + err
    assert "cancelling" in out and "stopping the agent" in out


LITERAL = ["[bold]Loud[/bold] plan", "[red]first[/red] step [/]", 'echo "[/] x"']


def test_markup_and_control_sequences_are_shown_literally_on_a_terminal(
    project: Path, tmp_path: Path
) -> None:
    env = environment(tmp_path, AGENT_MODE="markup", COLUMNS="200", LINES="60", TERM="xterm")
    primary, secondary = pty.openpty()
    client = subprocess.Popen(
        [*PLANKIT, "acp", "run", "--approve-all", "--", *AGENT, "go"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
    )
    os.close(secondary)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other side closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code = client.wait(timeout=DEADLINE)
    reader.join(DEADLINE)
    os.close(primary)
    raw = b"".join(chunks).decode("utf-8", errors="replace")
    assert code == 0, raw  # a MarkupError used to end it here
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)  # rich's own styling
    for text in LITERAL:
        assert text in shown, (text, shown)
    assert "[blink]hello[/blink]" in shown
    assert "\x1b]0;pwned" not in raw  # the agent cannot retitle the terminal
    assert "\\x1b]0;pwned\\x07" in shown  # it is shown as an escape instead


def test_markup_and_control_sequences_are_shown_literally_as_lines(
    project: Path, tmp_path: Path
) -> None:
    env = environment(tmp_path, AGENT_MODE="markup")
    result = subprocess.run(
        [*PLANKIT, "acp", "run", "--approve-all", "--", *AGENT, "go"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for text in LITERAL:
        assert text in result.stdout
    assert "[agent] [blink]hello[/blink] \\x1b]0;pwned\\x07 done" in result.stdout
    assert "\x1b" not in result.stdout
