"""``plankit acp run`` asking at a real terminal (a pseudo-terminal): Ctrl-C at the
permission prompt answers the request ``cancelled``, sends ``session/cancel`` and the
client exits 130 once the agent ends the turn; and the agent's thoughts are shown."""

from __future__ import annotations

import io
import os
import select
import signal
import subprocess
from pathlib import Path

from plankit.acp.display import LineView
from tests.acp.kit import PLANKIT, ROOT, TEDDY, create, plan_text
from tests.waiting import wait_until


def _controlling_tty() -> None:
    import fcntl
    import termios

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Screen:
    """What a pseudo-terminal's program wrote, read as it comes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.text = ""

    def pump(self) -> str:
        while select.select([self.fd], [], [], 0)[0]:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            self.text += chunk.decode("utf-8", "replace")
        return self.text


def test_ctrl_c_at_the_permission_prompt_cancels_and_exits_130(project: Path) -> None:
    plan = plan_text(create("a.txt", "never"), create("b.txt", "never"), title="Asked")
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [*PLANKIT, "acp", "run", "--", *TEDDY, "acp", plan],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TERM": "dumb", "COLUMNS": "100"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=_controlling_tty,
    )
    os.close(slave)
    screen = Screen(master)
    try:
        wait_until(lambda: "choice:" in screen.pump(), "the permission question")
        os.write(master, b"\x03")  # Ctrl-C, as typed: SIGINT to the client only
        wait_until(lambda: proc.poll() is not None, "the client to exit after Ctrl-C")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        screen.pump()
        os.close(master)
    assert proc.returncode == 130, screen.text
    assert "cancelled" in screen.text
    assert not (project / "a.txt").exists() and not (project / "b.txt").exists()
    reports = list(project.glob(".teddy/*/01/report.md"))
    assert reports, "the agent wrote no report"
    assert "cancelled" in reports[0].read_text(encoding="utf-8").lower()


def test_thoughts_are_shown_apart_from_messages() -> None:
    out = io.StringIO()
    view = LineView(out)
    for kind, text in (
        ("agent_thought_chunk", "I should read "),
        ("agent_thought_chunk", "the file first."),
        ("agent_message_chunk", "Reading it now."),
    ):
        view.update({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
    view.close()
    assert out.getvalue() == "[thought] I should read the file first.\n[agent] Reading it now.\n"


def test_thoughts_are_dimmed_on_a_terminal() -> None:
    from rich.console import Console

    from plankit.acp.display import LiveView

    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    view = LiveView(console)
    view.update(
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}}
    )
    view.close()
    written = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[2;3mhmm" in written  # dim italic
