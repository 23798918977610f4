"""The TeDDy action plan model: frozen dataclasses, one per action.

A :class:`Plan` is what ``teddy-plan-format.md`` describes: a title, the header's
metadata as ordered key/value pairs, the Rationale text, the memo changes and the
actions.  Every action records the 1-based ``line`` of its heading; ``line`` takes no
part in equality, so a plan parsed from a file equals the same plan rendered and
parsed again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Literal, TypeAlias


class ActionType(StrEnum):
    """The nine actions a plan can contain."""

    CREATE = "CREATE"
    READ = "READ"
    EDIT = "EDIT"
    EXECUTE = "EXECUTE"
    RESEARCH = "RESEARCH"
    CHAT_WITH_USER = "CHAT_WITH_USER"
    INVOKE = "INVOKE"
    CONCLUDE = "CONCLUDE"
    PRUNE = "PRUNE"


ResourceKind: TypeAlias = Literal["file", "url"]


@dataclass(frozen=True, slots=True)
class Resource:
    """What a READ or PRUNE names: a project file or a URL."""

    kind: ResourceKind
    """``file`` for a project path, ``url`` for a remote resource."""
    target: str
    """The root-relative path without its leading slash, or the URL."""


@dataclass(frozen=True, slots=True)
class EditPair:
    """One FIND/REPLACE pair of an EDIT."""

    find: str
    """The exact text to find (the FIND block's content)."""
    replace: str
    """The text to put in its place (the REPLACE block's content)."""


@dataclass(frozen=True, slots=True)
class Create:
    """Create a new file."""

    type: ClassVar[ActionType] = ActionType.CREATE
    path: str
    """Root-relative path of the file to create."""
    content: str
    """The whole content of the new file."""
    description: str | None = None
    """Why; the ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class Read:
    """Read a file or URL into the next turn's context."""

    type: ClassVar[ActionType] = ActionType.READ
    resource: Resource
    """What to read."""
    description: str | None = None
    """Why; the ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class Edit:
    """Edit an existing file with FIND/REPLACE pairs, applied in order."""

    type: ClassVar[ActionType] = ActionType.EDIT
    path: str
    """Root-relative path of the file to edit."""
    edits: tuple[EditPair, ...]
    """The pairs, at least one."""
    description: str | None = None
    """Why; the ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class Execute:
    """Run a shell command."""

    type: ClassVar[ActionType] = ActionType.EXECUTE
    command: str
    """The command (the first fenced block's content)."""
    expected_outcome: str | None = None
    """What the plan expects to happen; the ``Expected Outcome`` field."""
    cwd: str | None = None
    """Root-relative working directory, when not the project root."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment variables added for the command, in plan order."""
    description: str | None = None
    """Why; the ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class Research:
    """Run web searches."""

    type: ClassVar[ActionType] = ActionType.RESEARCH
    queries: tuple[str, ...]
    """One query per fenced block, at least one."""
    description: str | None = None
    """Why; the ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class ChatWithUser:
    """Say something to the user and wait for the answer."""

    type: ClassVar[ActionType] = ActionType.CHAT_WITH_USER
    message: str
    """The free Markdown under the heading."""
    description: str | None = None
    """Always None: a chat has no metadata list."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class Invoke:
    """Hand control to another agent."""

    type: ClassVar[ActionType] = ActionType.INVOKE
    agent: str
    """The agent to invoke, e.g. ``Architect``."""
    handoff_resources: tuple[str, ...] = ()
    """Paths (or URLs) that become the invoked agent's context."""
    message: str = ""
    """The free Markdown after the metadata list."""
    description: str | None = None
    """The optional ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class Conclude:
    """Return control to the agent that invoked this one."""

    type: ClassVar[ActionType] = ActionType.CONCLUDE
    handoff_resources: tuple[str, ...] = ()
    """Paths (or URLs) added to the caller's context."""
    message: str = ""
    """The free Markdown after the metadata list."""
    description: str | None = None
    """The optional ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


@dataclass(frozen=True, slots=True)
class Prune:
    """Remove a resource from the next turn's context."""

    type: ClassVar[ActionType] = ActionType.PRUNE
    resource: Resource
    """What to remove."""
    description: str | None = None
    """Why; the ``Description`` field."""
    line: int = field(default=0, compare=False)
    """1-based line of the action's heading (0 when built in code)."""


Action: TypeAlias = (
    Create | Read | Edit | Execute | Research | ChatWithUser | Invoke | Conclude | Prune
)

MemoOp: TypeAlias = Literal["+", "-"]


@dataclass(frozen=True, slots=True)
class Memo:
    """One change to the long-term memory: ``[+]`` adds, ``[-]`` removes."""

    op: MemoOp
    """``+`` or ``-``."""
    text: str
    """The memo itself."""
    comment: str | None = None
    """The text after `` #`` on the line, for people; not part of the memo."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A whole TeDDy plan."""

    title: str
    """The only level-1 heading."""
    metadata: tuple[tuple[str, str], ...]
    """The header's list, as ordered (key, value) pairs: ``("Status", "Green 🟢")``."""
    rationale: str
    """The Rationale block's text."""
    memos: tuple[Memo, ...]
    """The memo changes, in order (empty when there is no Memos section)."""
    actions: tuple[Action, ...]
    """The actions, in plan order."""

    def meta(self, key: str) -> str | None:
        """The header value for ``key`` (any letter case), or None."""
        wanted = key.casefold()
        for name, value in self.metadata:
            if name.casefold() == wanted:
                return value
        return None

    @property
    def agent(self) -> str | None:
        """The ``Agent`` header value."""
        return self.meta("Agent")


def action_to_dict(action: Action) -> dict[str, object]:
    """The JSON form of one action (see ``teddy parse --json``)."""
    out: dict[str, object] = {
        "type": str(action.type),
        "line": action.line,
        "description": action.description,
    }
    match action:
        case Create(path=path, content=content):
            out.update(path=path, content=content)
        case Read(resource=res) | Prune(resource=res):
            out.update(resource=res.target, resource_kind=res.kind)
        case Edit(path=path, edits=edits):
            out.update(path=path, edits=[{"find": e.find, "replace": e.replace} for e in edits])
        case Execute(command=command, expected_outcome=expected, cwd=cwd, env=env):
            out.update(command=command, expected_outcome=expected, cwd=cwd, env=dict(env))
        case Research(queries=queries):
            out.update(queries=list(queries))
        case ChatWithUser(message=message):
            out.update(message=message)
        case Invoke(agent=agent, handoff_resources=handoff, message=message):
            out.update(agent=agent, handoff_resources=list(handoff), message=message)
        case Conclude(handoff_resources=handoff, message=message):
            out.update(handoff_resources=list(handoff), message=message)
    return out


def plan_to_dict(plan: Plan) -> dict[str, object]:
    """The JSON form of a plan (see ``teddy parse --json``)."""
    return {
        "title": plan.title,
        "metadata": dict(plan.metadata),
        "rationale": plan.rationale,
        "memos": [{"op": m.op, "text": m.text, "comment": m.comment} for m in plan.memos],
        "actions": [action_to_dict(a) for a in plan.actions],
    }
