"""``report.md``: the factual record of one ``teddy execute`` (``teddy-report-format.md``).

Every captured output or file content is fenced by the dynamic fencing rule, so
nothing captured can break the report's structure.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from plankit.markdown.fences import fenced
from plankit.markdown.links import root_link
from plankit.teddy.format.model import (
    Action,
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    Execute,
    Invoke,
    Prune,
    Read,
    Research,
)
from plankit.teddy.session.memos import MemoResult


class Status(StrEnum):
    """The overall status of an execution."""

    COMPLETED = "Completed 🟢"
    PARTIAL = "Partial 🟡"
    FAILED = "Failed 🔴"
    SKIPPED = "Skipped ⚪"
    VALIDATION_FAILED = "Validation Failed 🔴"


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What happened to one action."""

    action: Action
    """The action as executed (with the user's changes, if any)."""
    approved: bool
    """Whether it was selected for execution."""
    skip_reason: str | None = None
    """Why it did not run (not selected, an earlier failure, interrupted …)."""
    success: bool | None = None
    """True/False once run; None when it did not run."""
    duration: float | None = None
    """Seconds it took."""
    details: str = ""
    """Markdown with what it did (fenced output, the diff …)."""
    modified: str | None = None
    """What the user changed before it ran (None when nothing)."""
    notes: tuple[str, ...] = ()
    """Remarks (a loose FIND match, a timeout …)."""


@dataclass(frozen=True, slots=True)
class Report:
    """Everything ``report.md`` says."""

    title: str
    """The plan's title."""
    status: Status
    """Overall status."""
    plan_path: str | None
    """Root-relative path of the plan (None when not in the project)."""
    start: _dt.datetime
    """When execution started (UTC)."""
    end: _dt.datetime
    """When it ended (UTC)."""
    rationale: str
    """The plan's rationale."""
    memos: tuple[MemoResult, ...] = ()
    """What happened to each memo change."""
    validation_errors: tuple[str, ...] = ()
    """Pre-flight errors (only for a failed validation): ``line N: code message``, and
    for a FIND that matches nowhere the diff against the closest region on the lines
    after it (:meth:`~plankit.teddy.run.validate.Diagnostic.describe`)."""
    results: tuple[ActionResult, ...] = ()
    """One per action, in plan order."""
    notes: tuple[str, ...] = field(default=())
    """Remarks about the whole run (interrupted, stateless mode …)."""


def overall_status(results: Sequence[ActionResult], *, interrupted: bool = False) -> Status:
    """Completed when every action succeeded; Failed when none did; else Partial."""
    ran = [r for r in results if r.success is not None]
    ok = [r for r in ran if r.success]
    if results and len(ok) == len(results) and not interrupted:
        return Status.COMPLETED
    if not ok:
        return Status.FAILED if ran or interrupted else Status.SKIPPED
    return Status.PARTIAL


def action_target(action: Action) -> str:
    """A short name for what an action works on (shown in headings and summaries)."""
    match action:
        case Create(path=path) | Edit(path=path):
            return path
        case Read(resource=res) | Prune(resource=res):
            return res.target
        case Execute(command=command):
            first = command.strip().splitlines()[0] if command.strip() else ""
            return first if len(first) <= 60 else first[:59] + "…"
        case Invoke(agent=agent):
            return agent
        case Research(queries=queries):
            return f"{len(queries)} quer{'y' if len(queries) == 1 else 'ies'}"
    return ""


def _iso(moment: _dt.datetime) -> str:
    return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s"


def _metadata(action: Action) -> list[str]:
    lines: list[str] = []
    if action.description:
        lines.append(f"- **Description:** {action.description}")
    match action:
        case Create(path=path) | Edit(path=path):
            lines.append(f"- **File Path:** {root_link(path)}")
        case Read(resource=res) | Prune(resource=res):
            link = root_link(res.target) if res.kind == "file" else f"<{res.target}>"
            lines.append(f"- **Resource:** {link}")
        case Execute(expected_outcome=expected, cwd=cwd, env=env):
            if expected:
                lines.append(f"- **Expected Outcome:** {expected}")
            if cwd:
                lines.append(f"- **cwd:** {root_link(cwd)}")
            if env:
                lines.append("- **env:** " + ", ".join(f"`{k}`" for k, _ in env))
        case Invoke(agent=agent, handoff_resources=handoff):
            lines.append(f"- **Agent:** {agent}")
            if handoff:
                lines.append("- **Handoff Resources:** " + ", ".join(handoff))
        case Conclude(handoff_resources=handoff):
            if handoff:
                lines.append("- **Handoff Resources:** " + ", ".join(handoff))
        case ChatWithUser():
            pass
    return lines


def error_item(error: str) -> str:
    """One error as a Markdown list item: its first line, then what more it says (a
    diff) in a fenced block under it, fenced by the dynamic fencing rule."""
    first, _, detail = error.partition("\n")
    if not detail.strip():
        return f"- {first}"
    language = "diff" if detail.startswith("--- ") else "text"
    block = fenced(detail.rstrip("\n"), language)
    return f"- {first}\n" + "\n".join(f"  {line}" if line else "" for line in block.split("\n"))


def _action_section(number: int, result: ActionResult) -> str:
    action = result.action
    target = action_target(action)
    head = f"### {number}. `{action.type}`" + (f" {target}" if target else "")
    lines = [head]
    if result.approved and result.skip_reason is None:
        lines.append("- **Status:** Approved ✅")
    else:
        lines.append(f"- **Status:** Skipped 🟡 ({result.skip_reason or 'not selected'})")
    if result.success is not None:
        lines.append(f"- **Execution:** {'Success 🟢' if result.success else 'Failure 🔴'}")
        lines.append(f"- **Duration:** {_duration(result.duration)}")
    lines.append(f"- **Modified by user:** {'yes' if result.modified else 'no'}")
    lines += _metadata(action)
    for note in result.notes:
        lines.append(f"- **Note:** {note}")
    body = "\n".join(lines)
    extra = [p for p in (result.modified, result.details) if p]
    return body + ("\n\n" + "\n\n".join(extra) if extra else "")


def render_report(report: Report) -> str:
    """The Markdown of ``report.md``."""
    results = report.results
    approved = sum(1 for r in results if r.approved and r.skip_reason is None)
    succeeded = sum(1 for r in results if r.success)
    failed = sum(1 for r in results if r.success is False)
    header = [
        f"# Execution Report: {report.title}",
        f"- **Overall Status:** {report.status}",
    ]
    if report.plan_path:
        header.append(f"- **Plan:** {root_link(report.plan_path)}")
    header += [
        f"- **Start Time:** {_iso(report.start)}",
        f"- **End Time:** {_iso(report.end)}",
        f"- **Actions:** {len(results)} total / {approved} approved / "
        f"{len(results) - approved} skipped",
        f"- **Outcomes:** {succeeded} succeeded / {failed} failed",
    ]
    header += [f"- **Note:** {note}" for note in report.notes]
    parts = ["\n".join(header), "## 1. Rationale\n" + fenced(report.rationale, "text")]
    if report.memos:
        memo_lines = []
        for m in report.memos:
            state = "applied" if m.applied else f"not applied ({m.note})"
            memo_lines.append(f"- `[{m.memo.op}]` {m.memo.text} — {state}")
        parts.append("## 2. Memos\n" + "\n".join(memo_lines))
    if report.status is Status.VALIDATION_FAILED:
        errors = "\n".join(error_item(e) for e in report.validation_errors)
        parts.append("## 3. Validation Errors\n" + errors)
    else:
        log = "\n\n".join(_action_section(i, r) for i, r in enumerate(results, 1))
        parts.append("## 4. Action Log\n\n" + log if log else "## 4. Action Log")
    return "\n\n".join(parts) + "\n"
