"""Approval: who decides whether a plan runs, and who answers CHAT_WITH_USER.

:class:`Approver` and :class:`ChatResponder` are small protocols; ``teddy execute``
uses the console ones (:mod:`plankit.teddy.review.console`) or, with ``-y``,
:class:`AutoApprover` and :class:`ShowOnly` (:class:`NoReply` shows nothing).
:class:`ScriptedApprover` and :class:`ScriptedChat` are shipped for users' own tests.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol, TextIO

from plankit.teddy.format.model import Action, Plan


class Decision(StrEnum):
    """The answer to "Execute this plan?"."""

    APPROVE = "approve"
    SKIP = "skip"
    QUIT = "quit"


@dataclass(frozen=True, slots=True)
class Approval:
    """A decision with the user's selection and changes (the interactive review)."""

    decision: Decision
    """Approve, skip or quit."""
    selected: frozenset[int] | None = None
    """0-based positions of the actions to run (None: all)."""
    actions: tuple[Action, ...] | None = None
    """The actions as the user changed them, same length and order (None: unchanged)."""
    modified: Mapping[int, str] = field(default_factory=dict)
    """Position → Markdown describing what the user changed (for the report)."""
    memos_selected: frozenset[int] | None = None
    """0-based positions of the memo changes to apply (None: all)."""


class ApprovalUnavailable(Exception):
    """No one can be asked (no terminal on stdin); ``str()`` says why."""


class Approver(Protocol):
    """Decides whether a validated plan runs."""

    def review(self, plan: Plan, plan_file: Path | None) -> Decision | Approval:
        """The user's decision about ``plan`` (stored at ``plan_file`` when known)."""
        ...


class ChatResponder(Protocol):
    """Answers CHAT_WITH_USER."""

    def reply(self, message: str) -> str | None:
        """The user's reply to ``message``, or None to answer in the next turn."""
        ...


class AutoApprover:
    """Approves everything (``-y``)."""

    def review(self, plan: Plan, plan_file: Path | None) -> Decision:
        return Decision.APPROVE


class ShowOnly:
    """With ``-y``: shows the message, records no reply (it comes with the next turn)."""

    def __init__(self, stdout: TextIO | None = None) -> None:
        self.stdout = stdout or sys.stdout

    def reply(self, message: str) -> str | None:
        self.stdout.write(f"\n{message}\n\n(reply with your next message: `teddy plan -m …`)\n")
        self.stdout.flush()
        return None


class NoReply:
    """Shows nothing and answers nothing: the reply comes with the next turn (``-y``)."""

    def reply(self, message: str) -> str | None:
        return None


class ScriptedApprover:
    """Gives prepared decisions (or full approvals) in order (for tests)."""

    def __init__(self, decisions: Iterable[Decision | str | Approval]) -> None:
        self.decisions = [d if isinstance(d, Approval) else Decision(d) for d in decisions]
        self.reviewed: list[Plan] = []

    def review(self, plan: Plan, plan_file: Path | None) -> Decision | Approval:
        self.reviewed.append(plan)
        return self.decisions.pop(0)


class ScriptedChat:
    """Gives prepared replies in order and records the messages (for tests)."""

    def __init__(self, replies: Iterable[str | None]) -> None:
        self.replies = list(replies)
        self.messages: list[str] = []

    def reply(self, message: str) -> str | None:
        self.messages.append(message)
        return self.replies.pop(0)
