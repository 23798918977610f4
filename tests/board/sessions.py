"""TeDDy session folders written by hand, file by file, as ``teddy execute`` leaves them
(``meta.yaml``, ``plan.md``, ``report.md``, ``message.md`` per turn): no subprocess, so
a test can lay out a session of any shape (failures, an INVOKE and its CONCLUDE, a
hundred turns, a turn still waiting) in milliseconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

RATIONALE = """## Rationale
````text
### 1. Synthesis
The config sets the port.
### 2. Justification
The server reads it at start.
### 3. Expected Outcome
The server listens.
### 4. State Dashboard
Config: written
````"""

OUTCOMES = {"success": "Success 🟢", "failure": "Failure 🔴"}


@dataclass
class Action:
    """One action of a turn: what the plan asked and, once run, what happened."""

    type: str
    target: str = ""
    plan: str = ""
    """The action's part of ``plan.md`` after its heading."""
    outcome: str = "success"
    """``success``, ``failure`` or ``skipped`` in the report."""
    body: str = ""
    """What the report says under the action's fields (output, the reason it failed)."""


@dataclass
class Turn:
    """One turn directory: its metadata, its plan and, when it ran, its report."""

    title: str | None
    agent: str = "Developer"
    caller: str | None = None
    actions: list[Action] = field(default_factory=list)
    status: str | None = "Completed 🟢"
    """The report's Overall Status; None: not executed (no report.md)."""
    errors: list[str] = field(default_factory=list)
    """A Validation Failed report's errors."""
    message: str | None = None
    model: str | None = None
    tokens: tuple[int, int] | None = None


def meta_yaml(turn: str, parent: str | None, t: Turn) -> str:
    def value(v: str | None) -> str:
        return "null" if v is None else f'"{v}"'

    lines = [
        f"turn_id: {value(turn)}",
        f"parent_turn_id: {value(parent)}",
        f"caller_turn_id: {value(t.caller)}",
        f"agent: {value(t.agent)}",
    ]
    if t.model is not None:
        lines.append(f"model: {value(t.model)}")
    if t.tokens is not None:
        lines += [f"input_tokens: {t.tokens[0]}", f"output_tokens: {t.tokens[1]}"]
    return "\n".join(lines) + "\n"


def plan_md(t: Turn) -> str:
    parts = [f"# {t.title}\n- **Status:** Green 🟢\n- **Agent:** {t.agent}\n\n{RATIONALE}\n"]
    parts.append("## Action Plan\n")
    for a in t.actions:
        parts.append(f"### `{a.type}`\n{a.plan}\n")
    return "\n".join(parts)


def report_md(session: str, number: str, t: Turn) -> str:
    ran = [a for a in t.actions if a.outcome != "skipped"]
    ok = sum(1 for a in ran if a.outcome == "success")
    head = [
        f"# Execution Report: {t.title}",
        f"- **Overall Status:** {t.status}",
        f"- **Plan:** [.teddy/{session}/{number}/plan.md](/.teddy/{session}/{number}/plan.md)",
        "- **Start Time:** 2026-11-20T09:12:40Z",
        "- **End Time:** 2026-11-20T09:12:44Z",
        f"- **Actions:** {len(t.actions)} total / {len(ran)} approved / "
        f"{len(t.actions) - len(ran)} skipped",
        f"- **Outcomes:** {ok} succeeded / {len(ran) - ok} failed",
        "",
        "## 1. Rationale",
        "```text",
        "### 1. Synthesis",
        "The config sets the port.",
        "```",
        "",
    ]
    if t.errors:
        head += ["## 3. Validation Errors", *(f"- {e}" for e in t.errors), ""]
        return "\n".join(head)
    head += ["## 4. Action Log", ""]
    for i, a in enumerate(t.actions, 1):
        head.append(f"### {i}. `{a.type}` {a.target}".rstrip())
        if a.outcome == "skipped":
            head.append("- **Status:** Skipped 🟡 (not selected)")
        else:
            head += [
                "- **Status:** Approved ✅",
                f"- **Execution:** {OUTCOMES[a.outcome]}",
                "- **Duration:** 4 ms",
            ]
        head += ["- **Modified by user:** no", "", a.body, ""]
    return "\n".join(head)


def write_session(root: Path, name: str, turns: list[Turn], memos: str | None = None) -> Path:
    """``root/.teddy/<name>/`` with ``turns`` numbered ``01``, ``02`` …; ``memos``: the
    text of ``.teddy/memos.yaml``."""
    session = root / ".teddy" / name
    session.mkdir(parents=True)
    (session / "session.context").write_text("README.md\n")
    for i, t in enumerate(turns, 1):
        number = f"{i:02d}"
        turn = session / number
        turn.mkdir()
        parent = f"{i - 1:02d}" if i > 1 else None
        (turn / "meta.yaml").write_text(meta_yaml(number, parent, t))
        if t.message is not None:
            (turn / "message.md").write_text(t.message)
        if t.title is None:
            continue  # a new turn: the model has not answered yet
        (turn / "plan.md").write_text(plan_md(t))
        if t.status is not None:
            (turn / "report.md").write_text(report_md(name, number, t))
    if memos is not None:
        (root / ".teddy" / "memos.yaml").write_text(memos)
    return session


CREATE = Action(
    "CREATE", "config.txt", "- **File Path:** [config.txt](/config.txt)\n```\nport = 80\n```"
)
FAILED_EXECUTE = Action(
    "EXECUTE",
    "echo 'port 80 is taken' >&2; exit 3",
    "- **Description:** Check the port is free.\n```shell\necho 'port 80 is taken' >&2; exit 3\n```",
    outcome="failure",
    body="- **Exit code:** 3\n\n**stderr:**\n```text\nport 80 is taken\n```",
)
INVOKE = Action(
    "INVOKE",
    "Debugger",
    "- **Agent:** Debugger\n\nFind why port 80 is taken.",
    body="Control passes to Debugger.",
)
CONCLUDE = Action(
    "CONCLUDE", "", "The server listens on port 8080.", body="Control returns to the calling agent."
)
