"""TeDDy actions as ACP tool calls: kind, title, content, and the permission options.

Pure functions returning the v1 JSON shapes (``tool_call``, ``tool_call_update``,
``PermissionOption``); :mod:`plankit.acp.turn` sends them.

=================  ==========  ==============================================
action             kind        content
=================  ==========  ==============================================
CREATE             edit        a ``diff`` with ``oldText: null`` (a new file)
EDIT               edit        a ``diff`` of the whole file, before → after
EXECUTE            execute     the command; then the client's terminal
READ               read/fetch  (file/URL); the location
RESEARCH           search      the queries
PRUNE              other
INVOKE, CONCLUDE   switch_mode the message
=================  ==========  ==============================================

CHAT_WITH_USER is no tool call: it becomes an agent message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeAlias

from plankit.acp.entries import action_title
from plankit.teddy.format.model import (
    Action,
    ActionType,
    Conclude,
    Create,
    Edit,
    Execute,
    Invoke,
    Prune,
    Read,
    Research,
    action_to_dict,
)
from plankit.teddy.run.report import ActionResult

ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]

ALLOW_ONCE = "allow-once"
ALLOW_ALWAYS = "allow-always"
REJECT_ONCE = "reject-once"
REJECT_ALWAYS = "reject-always"
ALLOWING = frozenset({ALLOW_ONCE, ALLOW_ALWAYS})
"""Option ids that let the action run."""


def tool_kind(action: Action) -> ToolKind:
    """The ACP tool kind of an action (see the module table)."""
    match action:
        case Create() | Edit():
            return "edit"
        case Execute():
            return "execute"
        case Read(resource=res):
            return "fetch" if res.kind == "url" else "read"
        case Research():
            return "search"
        case Invoke() | Conclude():
            return "switch_mode"
    return "other"


def _text(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _diff(path: Path, old: str | None, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": str(path), "oldText": old, "newText": new}


def tool_call(
    tool_call_id: str,
    action: Action,
    root: Path,
    *,
    before: str | None = None,
    after: str | None = None,
) -> dict[str, Any]:
    """The ``tool_call`` update announcing ``action`` (status ``pending``).

    For CREATE and EDIT, ``after`` is the file's text once the action ran and
    ``before`` its text now (None for a new file); when the EDIT cannot be applied
    (``after`` None) the FIND/REPLACE pairs are shown instead.
    """
    content: list[dict[str, Any]] = []
    locations: list[dict[str, Any]] = []
    match action:
        case Create(path=path) | Edit(path=path):
            target = root / path
            locations.append({"path": str(target)})
            if after is not None:
                content.append(_diff(target, before, after))
            elif isinstance(action, Edit):
                pairs = "\n\n".join(
                    f"FIND:\n{p.find}\n\nREPLACE:\n{p.replace}" for p in action.edits
                )
                content.append(_text(pairs))
        case Execute(command=command, cwd=cwd):
            content.append(_text(f"$ {command}" + (f"\n(in {cwd})" if cwd else "")))
        case Read(resource=res) | Prune(resource=res):
            if res.kind == "file":
                locations.append({"path": str(root / res.target)})
        case Research(queries=queries):
            content.append(_text("\n".join(f"- {q}" for q in queries)))
        case Invoke(message=message) | Conclude(message=message):
            if message:
                content.append(_text(message))
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_call_id,
        "title": action_title(action),
        "kind": tool_kind(action),
        "status": "pending",
        "rawInput": action_to_dict(action),
    }
    if content:
        update["content"] = content
    if locations:
        update["locations"] = locations
    return update


def tool_update(tool_call_id: str, **fields: Any) -> dict[str, Any]:
    """A ``tool_call_update`` with the given fields (camelCase, as on the wire)."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}


def result_update(
    tool_call_id: str, result: ActionResult, *, keep: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The final ``tool_call_update`` of an action that ran: ``completed`` or ``failed``.

    Its content is the report's details as text, or, when ``keep`` is given (the
    diff, the client's terminal), that content plus the failure notes, if any.
    """
    status = "completed" if result.success else "failed"
    if keep is not None:
        content = list(keep)
        if not result.success and result.notes:
            content.append(_text("\n".join(result.notes)))
    else:
        text = "\n\n".join(p for p in (*result.notes, result.details) if p)
        content = [_text(text)] if text else []
    fields: dict[str, Any] = {
        "status": status,
        "rawOutput": {
            "success": result.success,
            "duration": result.duration,
            "notes": list(result.notes),
        },
    }
    if content:
        fields["content"] = content
    return tool_update(tool_call_id, **fields)


def permission_options(action_type: ActionType) -> list[dict[str, Any]]:
    """Allow once / allow always / reject once / reject always (for ``action_type``)."""
    name = str(action_type)
    return [
        {"optionId": ALLOW_ONCE, "name": "Allow", "kind": "allow_once"},
        {"optionId": ALLOW_ALWAYS, "name": f"Always allow {name}", "kind": "allow_always"},
        {"optionId": REJECT_ONCE, "name": "Reject", "kind": "reject_once"},
        {"optionId": REJECT_ALWAYS, "name": f"Always reject {name}", "kind": "reject_always"},
    ]
