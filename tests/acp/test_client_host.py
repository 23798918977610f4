"""What ``plankit acp run`` offers an agent: files through symbolic links that stay
inside, terminals confined to the working directory, and nothing a terminal started
left running (``&``, ``setsid``, ``nohup``) once it is released or the client ends."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.acp.host import Files, Terminals
from tests.acp.kit import PLANKIT, ROOT
from tests.waiting import DEADLINE, wait_until

TERMINAL_AGENT = [sys.executable, str(ROOT / "tests" / "acp" / "terminal_agent.py")]

LEAVES = (
    "sleep 300 & echo $! > p1; "
    "setsid sleep 300 & echo $! > p2; "
    "nohup sleep 300 > /dev/null 2>&1 & echo $! > p3; "
    "(setsid sh -c 'sleep 300 & echo $! > p4' &); "
    "until [ -s p4 ]; do sleep 0.02; done; touch started"
)
"""A command that leaves four processes behind in three ways, then says so."""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def leftovers(root: Path) -> list[int]:
    return [int((root / f"p{i}").read_text()) for i in range(1, 5)]


def test_symbolic_links_inside_the_directory_are_followed(tmp_path: Path) -> None:
    from acp import RequestError

    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("the guide\n")
    (root / "current").symlink_to("docs")
    (root / "latest.md").symlink_to("docs/guide.md")
    (tmp_path / "secret.txt").write_text("secret\n")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    (root / "up").symlink_to(tmp_path)
    files = Files(root)
    assert files.read(str(root / "latest.md")) == "the guide\n"
    assert files.read(str(root / "current" / "guide.md")) == "the guide\n"
    files.write(str(root / "current" / "new.md"), "new\n")
    assert (root / "docs" / "new.md").read_text() == "new\n"
    for outside in (root / "escape.txt", root / "up" / "secret.txt"):
        with pytest.raises(RequestError, match="Invalid params") as caught:
            files.read(str(outside))
        assert "outside" in str(caught.value.data)
        with pytest.raises(RequestError):
            files.write(str(outside), "no")
    assert (tmp_path / "secret.txt").read_text() == "secret\n"


def test_a_terminal_cwd_outside_the_directory_is_refused(tmp_path: Path) -> None:
    from acp import RequestError

    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path)

    async def scenario() -> str:
        terminals = Terminals(root)
        for cwd in ("/", str(tmp_path), str(root / "out"), "relative"):
            with pytest.raises(RequestError) as caught:
                await terminals.create("pwd", None, None, cwd, None)
            assert "terminal cwd" in str(caught.value.data), cwd
        terminal = await terminals.create("pwd", None, None, str(root / "sub"), None)
        await terminals.wait(terminal)
        out = await terminals.output(terminal)
        await terminals.close()
        return str(out["output"])

    assert asyncio.run(scenario()).strip() == str((root / "sub").resolve())
    assert terminals_ran_nothing_outside(tmp_path)


def terminals_ran_nothing_outside(tmp_path: Path) -> bool:
    return sorted(p.name for p in tmp_path.iterdir()) == ["project"]


def test_a_released_terminal_leaves_nothing_running(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()

    async def scenario() -> dict[str, object]:
        terminals = Terminals(root)
        terminal = await terminals.create("bash", ["-c", LEAVES + "; exit 3"], None, None, None)
        status = await asyncio.wait_for(terminals.wait(terminal), DEADLINE)
        await terminals.release(terminal)
        return status

    # the shell's own status, not the supervisor's
    assert asyncio.run(scenario()) == {"exitCode": 3, "signal": None}
    for pid in leftovers(root):
        wait_until(lambda pid=pid: not alive(pid), f"process {pid} to be stopped")


def test_releasing_a_running_terminal_stops_all_it_started(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()

    async def scenario() -> None:
        terminals = Terminals(root)
        terminal = await terminals.create("bash", ["-c", LEAVES + "; sleep 300"], None, None, None)
        while not (root / "started").exists():
            await asyncio.sleep(0.02)
        await terminals.release(terminal)

    asyncio.run(scenario())
    for pid in leftovers(root):
        wait_until(lambda pid=pid: not alive(pid), f"process {pid} to be stopped")


def test_the_client_stops_terminals_the_agent_left_running(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    result = subprocess.run(
        [*PLANKIT, "acp", "run", "--allow-terminal", "--", *TERMINAL_AGENT, LEAVES + "; sleep 300"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=DEADLINE,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "left the terminal running" in result.stdout
    # the client did not wait for the 300 s command: it stopped it and all it started
    for pid in leftovers(root):
        wait_until(lambda pid=pid: not alive(pid), f"process {pid} to be stopped")


def test_hostile_terminal_requests_are_refused_in_one_line(tmp_path: Path) -> None:
    from acp.schema import EnvVariable

    from acp import RequestError

    root = tmp_path / "project"
    root.mkdir()

    async def scenario() -> list[str]:
        terminals = Terminals(root)
        refused = []
        for command, args, env in (
            ("no-such-program-xyz", None, None),
            ("echo\0x", None, None),
            ("echo", ["a\0b"], None),
            ("echo", None, [EnvVariable(name="A=B", value="1")]),
            ("echo", None, [EnvVariable(name="A", value="x\0y")]),
        ):
            with pytest.raises(RequestError) as caught:
                await terminals.create(command, args, env, None, None)
            refused.append(str(caught.value.data["details"]))
        await terminals.close()
        return refused

    for message in asyncio.run(scenario()):
        assert "\n" not in message and message, message


def test_a_terminal_keeps_bounded_output_whatever_the_limit_asked(tmp_path: Path) -> None:
    from plankit.acp import host

    root = tmp_path / "project"
    root.mkdir()

    async def scenario() -> dict[str, object]:
        host.OUTPUT_CAP = 1000
        try:
            terminals = Terminals(root)
            terminal = await terminals.create(
                "bash", ["-c", "head -c 5000 /dev/zero | tr '\\0' x"], None, None, None
            )
            await terminals.wait(terminal)
            out = await terminals.output(terminal)
            await terminals.close()
            return out
        finally:
            host.OUTPUT_CAP = 16 * 1024 * 1024

    out = asyncio.run(scenario())
    assert out["truncated"] is True and out["output"] == "x" * 1000


def test_paths_through_a_linked_working_directory_are_inside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    files = Files(tmp_path / "link")  # the working directory as the user named it
    files.write(str(tmp_path / "link" / "a.txt"), "a\n")
    assert (real / "a.txt").read_text() == "a\n"
    assert files.read(str(real / "a.txt")) == "a\n"
