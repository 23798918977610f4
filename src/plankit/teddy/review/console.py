"""Approval tier 1 in the plain console (``teddy-session-workflow.md`` section 7).

``(r)eview`` never hands the previewer the real plan.md: it gets a read-only copy (mode
0444) in a fresh temporary directory outside the project, removed when the review
ends, so an editor that saves cannot change the plan that runs (plan.md is immutable
once written).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import TextIO

from plankit.teddy.format.model import ActionType, Plan
from plankit.teddy.run.approval import Approval, ApprovalUnavailable, Decision

RULE = "-" * 68
PROMPT = "Execute this plan? (a)pprove all / (r)eview full plan / (m)odify / (s)kip / (q)uit › "

_UNITS = {
    ActionType.CREATE: ("file", "files"),
    ActionType.EDIT: ("file", "files"),
    ActionType.EXECUTE: ("command", "commands"),
    ActionType.READ: ("resource", "resources"),
    ActionType.PRUNE: ("resource", "resources"),
    ActionType.RESEARCH: ("search", "searches"),
    ActionType.CHAT_WITH_USER: ("message", "messages"),
    ActionType.INVOKE: ("handoff", "handoffs"),
    ActionType.CONCLUDE: ("return", "returns"),
}


def summary(plan: Plan) -> str:
    """The high-level summary shown before the prompt."""
    lines = [f'▶ Reviewing Plan: "{plan.title}"', RULE, ""]
    if plan.memos:
        lines.append(" memos.yaml:")
        for memo in plan.memos:
            verb = "[+] ADD:   " if memo.op == "+" else "[-] REMOVE:"
            comment = f" # {memo.comment}" if memo.comment else ""
            lines.append(f"  {verb} {memo.text}{comment}")
        lines.append("")
    lines.append(" Action Plan:")
    counts = Counter(a.type for a in plan.actions)
    width = max(len(str(t)) for t in counts) + 1
    for kind in ActionType:
        if counts[kind]:
            one, many = _UNITS[kind]
            label = f"{kind}:".ljust(width + 1)
            lines.append(f"  - {label}{counts[kind]} {one if counts[kind] == 1 else many}")
    lines += ["", RULE]
    return "\n".join(lines)


def preview_command(configured: str | None) -> list[str] | None:
    """The previewer: the configured command, else VS Code when on PATH, else None."""
    if configured:
        return shlex.split(configured)
    if shutil.which("code"):
        return ["code"]
    return None


class ConsoleApprover:
    """Asks on the terminal; needs a terminal on stdin."""

    def __init__(
        self,
        preview: str | None = None,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        require_tty: bool = True,
        root: Path | None = None,
    ) -> None:
        self.preview = preview
        self.root = root
        """The project root (EDIT previews read files there); the working directory
        when None."""
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.require_tty = require_tty
        self._copies: list[str] = []
        """Temporary directories of the read-only copies shown in this review."""

    def say(self, text: str = "", end: str = "\n") -> None:
        self.stdout.write(text + end)
        self.stdout.flush()

    def review(self, plan: Plan, plan_file: Path | None) -> Decision | Approval:
        if self.require_tty and not self.stdin.isatty():
            raise ApprovalUnavailable(
                "standard input is not a terminal, so nobody can approve the plan; "
                "nothing was executed (pass -y to approve all)"
            )
        try:
            return self._ask(plan, plan_file)
        finally:  # a previewer that returns at once (code) has read its copy by now
            for directory in self._copies:
                shutil.rmtree(directory, ignore_errors=True)
            self._copies.clear()

    def _ask(self, plan: Plan, plan_file: Path | None) -> Decision | Approval:
        self.say(summary(plan))
        while True:
            self.say(PROMPT, end="")
            answer = self.stdin.readline()
            if not answer:
                self.say()
                return Decision.QUIT
            key = answer.strip().lower()[:1]
            if key == "a":
                return Decision.APPROVE
            if key == "s":
                return Decision.SKIP
            if key == "q":
                return Decision.QUIT
            if key == "r":
                self.show(plan_file)
            elif key == "m":
                approval = self.modify(plan)
                if approval is not None:
                    return approval
            else:
                self.say("Please answer a, r, m, s or q.")

    def modify(self, plan: Plan) -> Approval | None:
        """Tier 2, the checklist; None when the user goes back to the prompt."""
        if not (self.stdin.isatty() and self.stdout.isatty()):
            self.say("(m)odify needs the interactive checklist, which needs a terminal.")
            return None
        from plankit.teddy.review.previews import CommandEditor
        from plankit.teddy.review.tui import run_checklist

        command = preview_command(self.preview)
        editor = CommandEditor(command) if command else None
        approval = run_checklist(plan, root=self.root or Path.cwd(), editor=editor)
        if approval is None:
            self.say(summary(plan))  # back from the checklist: the prompt again
        return approval

    def read_only_copy(self, data: bytes, name: str) -> Path:
        """``data`` in a new read-only file (0444) called ``name``, in a fresh temporary
        directory outside the project; removed when the review ends."""
        directory = tempfile.mkdtemp(prefix="teddy-review-")
        self._copies.append(directory)
        copy = Path(directory, name)
        copy.write_bytes(data)
        copy.chmod(0o444)
        return copy

    def show(self, plan_file: Path | None) -> None:
        """The plan in the previewer (a read-only copy), else printed."""
        if plan_file is None:
            return
        try:
            data = plan_file.read_bytes()
        except OSError as exc:
            self.say(f"(cannot read {plan_file.name}: {exc.strerror or exc})")
            return
        command = preview_command(self.preview)
        if command is not None:
            copy = self.read_only_copy(data, plan_file.name)
            try:
                subprocess.run([*command, os.fspath(copy)], check=False)
            except OSError as exc:
                self.say(f"(the previewer {command[0]} could not start: {exc.strerror})")
            else:
                try:
                    changed = copy.read_bytes() != data
                except OSError:  # removed or replaced by the previewer
                    changed = True
                if changed:
                    self.say(
                        "(the preview is a read-only copy: changes made there are not used; "
                        "the plan runs as written in plan.md, use (m)odify to change it)"
                    )
                return
        if data:
            text = data.decode("utf-8", "replace")
            if not self.stdout.isatty():
                self.say(text)
                return
            from rich.console import Console  # colourised in a terminal
            from rich.syntax import Syntax

            Console(file=self.stdout).print(Syntax(text, "markdown", word_wrap=True))


class ConsoleChat:
    """Shows a CHAT_WITH_USER message and reads the reply (ends at an empty line)."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def reply(self, message: str) -> str | None:
        self.stdout.write(f"\n{message}\n\nYour reply (finish with an empty line):\n")
        self.stdout.flush()
        lines: list[str] = []
        while True:
            line = self.stdin.readline()
            if not line or not line.strip():
                break
            lines.append(line.rstrip("\n"))
        return "\n".join(lines)
