"""Plan model → Markdown that follows the format and the dynamic fencing rule.

For every valid plan ``parse_plan(render_plan(plan)) == plan``: every fenced block
gets a fence longer than any backtick run in its content, paths become root-relative
links, and free Markdown (messages) is written as it was read.
"""

from __future__ import annotations

from pathlib import PurePosixPath

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
    Memo,
    Plan,
    Prune,
    Read,
    Research,
    Resource,
)

_LANGUAGES = {
    ".py": "python",
    ".md": "markdown",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".js": "javascript",
    ".ts": "typescript",
    ".sh": "shell",
    ".xml": "xml",
    ".html": "html",
    ".css": "css",
    ".rs": "rust",
    ".go": "go",
}


def _language(path: str) -> str:
    return _LANGUAGES.get(PurePosixPath(path).suffix.lower(), "")


def _item(key: str, value: str) -> str:
    value = value.replace("\n", "\n  ")
    return f"- **{key}:** {value}" if value else f"- **{key}:**"


def _resource(res: Resource) -> str:
    if res.kind == "url":
        return f"[{res.target}]({res.target})" if " " not in res.target else f"<{res.target}>"
    return root_link(res.target)


def _target(target: str) -> str:
    if target.lower().startswith(("http://", "https://")):
        return f"[{target}]({target})"
    return root_link(target)


def _memo(memo: Memo) -> str:
    line = f"[{memo.op}] {memo.text}"
    return f"{line} # {memo.comment}" if memo.comment else line


def _description(lines: list[str], description: str | None) -> None:
    if description is not None:
        lines.append(_item("Description", description))


def render_action(action: Action) -> str:
    """One action block, from its ``###`` heading to its last line (no final newline)."""
    head = f"### `{action.type}`"
    lines = [head]
    match action:
        case Create(path=path, content=content, description=description):
            lines.append(_item("File Path", root_link(path)))
            _description(lines, description)
            lines.append(fenced(content, _language(path)))
        case (
            Read(resource=res, description=description)
            | Prune(resource=res, description=description)
        ):
            lines.append(_item("Resource", _resource(res)))
            _description(lines, description)
        case Edit(path=path, edits=edits, description=description):
            lines.append(_item("File Path", root_link(path)))
            _description(lines, description)
            language = _language(path)
            for pair in edits:
                lines += ["", "`FIND:`", fenced(pair.find, language)]
                lines += ["`REPLACE:`", fenced(pair.replace, language)]
        case Execute(
            command=command,
            expected_outcome=expected,
            cwd=cwd,
            env=env,
            description=description,
        ):
            _description(lines, description)
            if expected is not None:
                lines.append(_item("Expected Outcome", expected))
            if cwd is not None:
                lines.append(_item("cwd", root_link(cwd)))
            if env:
                lines.append("- **env:**")
                lines += [f'    - `{name}`: "{value}"' for name, value in env]
            lines.append(fenced(command, "shell"))
        case Research(queries=queries, description=description):
            _description(lines, description)
            lines += [fenced(query, "text") for query in queries]
        case ChatWithUser(message=message):
            lines.append(message)
        case Invoke(
            agent=agent, handoff_resources=handoff, message=message, description=description
        ):
            lines.append(_item("Agent", agent))
            _description(lines, description)
            _handoff(lines, handoff)
            if message:
                lines += ["", message]
        case Conclude(handoff_resources=handoff, message=message, description=description):
            _description(lines, description)
            _handoff(lines, handoff)
            if message:
                lines += ["", message] if len(lines) > 1 else [message]
    return "\n".join(lines)


def _handoff(lines: list[str], handoff: tuple[str, ...]) -> None:
    if handoff:
        lines.append("- **Handoff Resources:**")
        lines += [f"  - {_target(t)}" for t in handoff]


def render_plan(plan: Plan) -> str:
    """The whole plan as Markdown, ending with a newline."""
    parts = [f"# {plan.title}"]
    if plan.metadata:
        parts.append("\n".join(_item(k, v) for k, v in plan.metadata))
    parts.append("## Rationale\n" + fenced(plan.rationale, "text"))
    if plan.memos:
        parts.append("## Memos\n" + fenced("\n".join(_memo(m) for m in plan.memos)))
    parts.append("## Action Plan")
    parts += [render_action(a) for a in plan.actions]
    text = parts[0] + "\n" + "\n\n".join(parts[1:]) + "\n"
    return text
