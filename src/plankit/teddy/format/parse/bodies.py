"""Each action kind's body: what follows its metadata list, and the action built from it.

A handler takes the checker, the action's heading, its fields, the blocks after the
metadata list and the action's last line, and returns the action; every problem is
reported through the checker (the caller drops an action that had any).
"""

from __future__ import annotations

from collections.abc import Callable

from plankit.markdown.encoding import repair_double_encoding as _fix
from plankit.markdown.tree import Block, Fence, Heading, Paragraph
from plankit.teddy.format.model import (
    Action,
    ActionType,
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    EditPair,
    Execute,
    Invoke,
    Prune,
    Read,
    Research,
    Resource,
)
from plankit.teddy.format.parse import fields as fl
from plankit.teddy.format.parse.checker import Checker
from plankit.teddy.format.parse.fields import Field
from plankit.teddy.format.parse.names import LABEL_RE

Handler = Callable[[Checker, Heading, dict[str, Field], list[Block], int], Action]
"""``(checker, heading, fields, rest, end) → action`` for one action kind."""


def one_fence(
    c: Checker, kind: ActionType, head: Heading, blocks: list[Block], code: str, what: str
) -> str | None:
    """The content of the single fenced block ``blocks`` must hold (``what`` it holds)."""
    fence: Fence | None = None
    for block in blocks:
        if fence is None and isinstance(block, Fence):
            fence = block
            c.closed(block)
        else:
            c.stray(block, f"in {kind} after its {what}" if fence else f"in {kind}")
    if fence is None:
        c.error(head.start, code, f"{kind} needs a fenced code block with its {what}")
        return None
    return fence.content


def message(c: Checker, blocks: list[Block], end: int) -> str:
    """The raw Markdown of ``blocks`` up to line ``end``: a message to a person or agent."""
    if not blocks:
        return ""
    return _fix(c.doc.lines(blocks[0].start, end).rstrip())


def description(f: dict[str, Field]) -> str | None:
    """The ``Description`` field's value, if there is one."""
    fld = f.get("description")
    return fl.value(fld) if fld is not None else None


def create(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """CREATE: a ``File Path`` and one fenced block with the file's content."""
    path = fl.path(c, f["file path"], ActionType.CREATE) if "file path" in f else None
    content = one_fence(c, ActionType.CREATE, head, rest, "create-no-content", "file content")
    return Create(path or "", content or "", description(f), head.start)


def read(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """READ: a ``Resource`` and nothing after the metadata list."""
    return _resource_action(c, Read, ActionType.READ, head, f, rest)


def prune(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """PRUNE: a ``Resource`` and nothing after the metadata list."""
    return _resource_action(c, Prune, ActionType.PRUNE, head, f, rest)


def _resource_action(
    c: Checker,
    cls: type[Read] | type[Prune],
    kind: ActionType,
    head: Heading,
    f: dict[str, Field],
    rest: list[Block],
) -> Action:
    for block in rest:
        c.stray(block, f"in {kind} (it has only a metadata list)")
    res = fl.resource(c, f["resource"], kind) if "resource" in f else None
    return cls(res or Resource("file", ""), description(f), head.start)


def edit(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """EDIT: a ``File Path`` and FIND:/REPLACE: labels, each followed by its fenced block."""
    before = len(c.diags)
    path = fl.path(c, f["file path"], ActionType.EDIT) if "file path" in f else None
    pairs: list[EditPair] = []
    pending_find: str | None = None
    pending_line = 0
    label: tuple[str, int] | None = None
    for block in rest:
        text = block.text if isinstance(block, Paragraph | Heading) else None
        m = LABEL_RE.fullmatch(text) if text is not None else None
        if m is not None:
            if label is not None:
                c.error(label[1], "edit-label-without-block", f"{label[0]}: has no fenced block")
            label = (m.group(1).upper(), block.start)
            continue
        if isinstance(block, Fence) and label is not None:
            c.closed(block)
            which, line = label
            label = None
            if which == "FIND":
                if pending_find is not None:
                    c.error(pending_line, "edit-unpaired", "FIND: without its REPLACE: block")
                pending_find, pending_line = block.content, line
            else:
                if pending_find is None:
                    c.error(line, "edit-unpaired", "REPLACE: without a FIND: before it")
                else:
                    pairs.append(EditPair(pending_find, block.content))
                    pending_find = None
            continue
        if isinstance(block, Fence):
            c.error(
                block.start,
                "edit-unlabelled-block",
                "a fenced block in EDIT must follow a FIND: or REPLACE: label",
            )
            continue
        c.stray(block, "in EDIT (only FIND:/REPLACE: pairs follow the metadata)")
    if label is not None:
        c.error(label[1], "edit-label-without-block", f"{label[0]}: has no fenced block")
    if pending_find is not None:
        c.error(pending_line, "edit-unpaired", "FIND: without its REPLACE: block")
    if not pairs and not any(d.code.startswith("edit-") for d in c.diags[before:]):
        c.error(
            head.start,
            "edit-no-pairs",
            "EDIT needs at least one FIND:/REPLACE: pair (whole-file rewrites are not allowed)",
        )
    return Edit(path or "", tuple(pairs), description(f), head.start)


def execute(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """EXECUTE: one fenced block with the command; ``cwd``, ``env``, ``Expected Outcome``."""
    command = one_fence(c, ActionType.EXECUTE, head, rest, "execute-no-command", "command")
    if command is not None and not command.strip():
        c.error(head.start, "execute-no-command", "EXECUTE's command block is empty")
    cwd = fl.path(c, f["cwd"], ActionType.EXECUTE) if "cwd" in f else None
    env = fl.env(c, f["env"]) if "env" in f else ()
    expected = f.get("expected outcome")
    return Execute(
        command or "",
        fl.value(expected) if expected is not None else None,
        cwd,
        env,
        description(f),
        head.start,
    )


def research(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """RESEARCH: one fenced block per query."""
    queries: list[str] = []
    for block in rest:
        if isinstance(block, Fence):
            c.closed(block)
            query = _fix(block.content.strip())
            if not query:
                c.error(block.start, "research-empty-query", "this query block is empty")
            queries.append(query)
        else:
            c.stray(block, "in RESEARCH (each query is its own fenced block)")
    if not rest:
        c.error(head.start, "research-no-queries", "RESEARCH needs one fenced block per query")
    return Research(tuple(queries), description(f), head.start)


def chat(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """CHAT_WITH_USER: no metadata; the message is the Markdown up to the next action."""
    text = message(c, rest, end)
    if not text.strip():
        c.error(head.start, "chat-empty", "CHAT_WITH_USER has no message")
    for block in rest:
        if isinstance(block, Fence):
            c.closed(block)
    return ChatWithUser(text, None, head.start)


def invoke(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """INVOKE: an ``Agent``, ``Handoff Resources`` and a message for the agent."""
    agent = _fix(fl.value(f["agent"]).strip("`*_ ")) if "agent" in f else ""
    if "agent" in f and not agent:
        c.error(f["agent"].line, "agent-missing", "INVOKE: 'Agent' names no agent")
    handoff = _handoff(c, f, ActionType.INVOKE)
    return Invoke(agent, handoff, message(c, rest, end), description(f), head.start)


def conclude(c: Checker, head: Heading, f: dict[str, Field], rest: list[Block], end: int) -> Action:
    """CONCLUDE: ``Handoff Resources`` and a closing message."""
    handoff = _handoff(c, f, ActionType.CONCLUDE)
    return Conclude(handoff, message(c, rest, end), description(f), head.start)


def _handoff(c: Checker, f: dict[str, Field], kind: ActionType) -> tuple[str, ...]:
    fld = f.get("handoff resources")
    return fl.resources(c, fld, kind) if fld is not None else ()


HANDLERS: dict[ActionType, Handler] = {
    ActionType.CREATE: create,
    ActionType.READ: read,
    ActionType.EDIT: edit,
    ActionType.EXECUTE: execute,
    ActionType.RESEARCH: research,
    ActionType.CHAT_WITH_USER: chat,
    ActionType.INVOKE: invoke,
    ActionType.CONCLUDE: conclude,
    ActionType.PRUNE: prune,
}
"""The body handler of each action kind."""
