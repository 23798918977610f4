"""The front matter schema of ``plan.md`` and of task files.

Turns a parsed front matter tree into typed fields, reporting every field that is
unknown (with a "did you mean" for a near miss such as ``depends-on``), of the wrong
type (``depends_on: setup-db`` instead of a list) or missing.  Each issue names its
rule and the line of the key or item it is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from plankit.agentflow.frontmatter import Items, fast_entries
from plankit.agentflow.yamltree import Map, Node, Scalar, Seq

PLAN_FIELDS = ("title",)
"""Fields allowed in the front matter of ``plan.md``."""

TASK_FIELDS = ("id", "depends_on", "agent", "subtasks")
"""Fields allowed in the front matter of a task file."""

_BLANKS = " \t"
"""What is stripped around ids, dependencies and agents: spaces and tabs, as YAML trims
plain scalars (a no-break space is part of the text, and makes an id invalid)."""


@dataclass(frozen=True, slots=True)
class Issue:
    """A problem found in one file's front matter (the file is added by the caller)."""

    rule: str
    """Rule name, e.g. ``unknown-field``."""
    line: int | None
    """1-based line in the file, or ``None``."""
    message: str
    """What is wrong and how to fix it."""


@dataclass(frozen=True, slots=True)
class PlanFields:
    """The fields of ``plan.md``."""

    title: str | None
    """The title; ``None`` when missing, null or blank."""
    title_line: int
    """Line of the ``title`` key (of the front matter when it is missing)."""
    issues: tuple[Issue, ...]
    """Everything wrong with the front matter."""


class TaskFields(NamedTuple):
    """The fields of a task file (a named tuple: one is made per task file, and a tuple
    is made in a third of a frozen dataclass's time)."""

    id: str | None
    """The id as written, or ``None`` when it is missing or not a string."""
    id_line: int
    """Line of the ``id`` key (of the front matter when it is missing)."""
    depends_on: tuple[tuple[str, int], ...]
    """``(id, line)`` of each dependency, duplicates removed."""
    depends_line: int
    """Line of the ``depends_on`` key (of the front matter when it is missing)."""
    agent: str | None
    """The assigned agent, ``None`` when absent, null or empty."""
    subtasks: tuple[str, ...]
    """Checklist items."""
    issues: tuple[Issue, ...]
    """Everything wrong with the front matter."""


def _kind(node: Node) -> str:
    if isinstance(node, Seq):
        return "a list"
    if isinstance(node, Map):
        return "a mapping"
    return "null" if node.value is None else f"the text {_show(node.value)}"


def _show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:39] + "…")


def _suggest(key: str, allowed: tuple[str, ...]) -> str:
    import difflib

    folded = key.lower().replace("-", "_").replace(" ", "_")
    for name in allowed:
        if folded == name or folded.replace("_", "") == name.replace("_", ""):
            return f"; did you mean {name!r}?"
    close = difflib.get_close_matches(folded, allowed, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; the fields are: {', '.join(allowed)}"


def _fields(
    node: Node, allowed: tuple[str, ...], rule: str, issues: list[Issue]
) -> dict[str, tuple[int, Node]]:
    if not isinstance(node, Map):
        issues.append(
            Issue(rule, node.line, f"front matter must be fields (key: value), not {_kind(node)}")
        )
        return {}
    found: dict[str, tuple[int, Node]] = {}
    for key, line, value in node.items:
        if key in allowed:
            found[key] = (line, value)
        else:
            issues.append(
                Issue("unknown-field", line, f"unknown field {key!r}{_suggest(key, allowed)}")
            )
    return found


def read_plan_fields(node: Node, yaml_line: int) -> PlanFields:
    """Check the front matter of ``plan.md`` (parsed from a text starting on ``yaml_line``)."""
    issues: list[Issue] = []
    found = _fields(node, PLAN_FIELDS, "plan-frontmatter", issues)
    title: str | None = None
    title_line = yaml_line
    if "title" not in found:
        if isinstance(node, Map):
            issues.append(
                Issue("title-empty", yaml_line, 'title is missing; add title: "<short summary>"')
            )
    else:
        title_line, value = found["title"]
        if not isinstance(value, Scalar):
            issues.append(
                Issue(
                    "plan-frontmatter",
                    title_line,
                    f"title must be text, not {_kind(value)}; quote it if needed",
                )
            )
        elif value.value is None or not value.value.strip():
            issues.append(
                Issue(
                    "title-empty", title_line, "title is empty; write a short summary of the plan"
                )
            )
        else:
            title = value.value.strip()
    return PlanFields(title, title_line, tuple(issues))


def _string_list(
    name: str, line: int, value: Node, rule: str, hint: str, issues: list[Issue]
) -> list[tuple[str, int]]:
    if isinstance(value, Scalar):
        if value.value is None:
            return []
        issues.append(
            Issue(
                rule,
                line,
                f"{name} must be a list, not {_kind(value)}; {hint}",
            )
        )
        return []
    if isinstance(value, Map):
        issues.append(Issue(rule, line, f"{name} must be a list, not a mapping"))
        return []
    items: list[tuple[str, int]] = []
    for number, item in enumerate(value.items, 1):
        if not isinstance(item, Scalar):
            hint = " (quote an item that contains ': ')" if isinstance(item, Map) else ""
            issues.append(
                Issue(
                    rule, item.line, f"{name} item {number} must be text, not {_kind(item)}{hint}"
                )
            )
        elif item.value is None or not item.value.strip(_BLANKS):
            issues.append(Issue(rule, item.line, f"{name} item {number} is empty"))
        else:
            items.append((item.value.strip(_BLANKS), item.line))
    return items


def _depends_hint(value: Node) -> str:
    if isinstance(value, Scalar) and value.value:
        return f"write depends_on: [{value.value}]"
    return "write depends_on: [other-task-id, ...]"


def read_task_fields(node: Node, yaml_line: int) -> TaskFields:
    """Check the front matter of a task file (parsed from a text starting on ``yaml_line``)."""
    issues: list[Issue] = []
    rule = "task-frontmatter"
    found = _fields(node, TASK_FIELDS, rule, issues)
    task_id: str | None = None
    id_line = yaml_line
    if "id" in found:
        id_line, value = found["id"]
        if not isinstance(value, Scalar):
            issues.append(Issue(rule, id_line, f"id must be text, not {_kind(value)}"))
        elif value.value is None or not value.value.strip(_BLANKS):
            issues.append(
                Issue(rule, id_line, "id is empty; write a kebab-case id such as setup-db")
            )
        else:
            task_id = value.value.strip(_BLANKS)
    elif isinstance(node, Map):
        issues.append(Issue(rule, yaml_line, "id is missing; add id: <kebab-case-id>"))
    depends: list[tuple[str, int]] = []
    depends_line = yaml_line
    if "depends_on" in found:
        depends_line, value = found["depends_on"]
        seen: set[str] = set()
        for dep, line in _string_list(
            "depends_on", depends_line, value, rule, _depends_hint(value), issues
        ):
            if dep not in seen:
                seen.add(dep)
                depends.append((dep, line))
    agent: str | None = None
    if "agent" in found:
        line, value = found["agent"]
        if not isinstance(value, Scalar):
            issues.append(Issue(rule, line, f"agent must be text, not {_kind(value)}"))
        elif value.value is not None and value.value.strip(_BLANKS):
            agent = value.value.strip(_BLANKS)
    subtasks: list[str] = []
    if "subtasks" in found:
        line, value = found["subtasks"]
        subtasks = [
            text
            for text, _ in _string_list(
                "subtasks", line, value, rule, "write one '- item' per line", issues
            )
        ]
    return TaskFields(
        task_id, id_line, tuple(depends), depends_line, agent, tuple(subtasks), tuple(issues)
    )


def quick_task_fields(yaml: str, yaml_line: int) -> TaskFields | None:
    """The fields of a task file read straight from the lines of its front matter, for
    the usual valid kind (no node tree is built); ``None`` for anything else.

    It answers only for front matter of the fast path's shapes
    (:func:`~plankit.agentflow.frontmatter.fast_entries`) whose fields are each known,
    given once and of their type, with an id and no empty item, which is exactly where
    :func:`read_task_fields` of the parsed tree finds no issue; ``tests/agentflow``
    checks the two agree. Anything else is left to the parser and
    :func:`read_task_fields`, which explain what is wrong.
    """
    entries = fast_entries(yaml, yaml_line)
    if entries is None:
        return None
    # Each field is typed as it comes; a field's line is 0 until it is seen, so a
    # repeated one is told (and left to the tree's reading, which explains it).
    task_id: str | None = None
    agent: str | None = None
    depends: Items = ()
    subtasks: Items = ()
    id_line = depends_line = agent_line = subtasks_line = 0
    for key, line, value in entries:
        if key == "id":
            if id_line or not isinstance(value, str) or not (task_id := value.strip(_BLANKS)):
                return None  # repeated; null (a key with no value holds []), blank or a list
            id_line = line
        elif key == "depends_on":
            if depends_line or isinstance(value, str):
                return None  # repeated, or text where a list belongs
            depends_line, depends = line, value or ()
        elif key == "agent":
            if agent_line:
                return None
            agent_line = line
            if isinstance(value, str):
                agent = value.strip(_BLANKS) or None
            elif isinstance(value, tuple) or value:
                return None  # a list where text belongs (a flow list, even [])
        elif key == "subtasks":
            if subtasks_line or isinstance(value, str):
                return None
            subtasks_line, subtasks = line, value or ()
        else:
            return None  # an unknown field: the tree's reading explains it
    if task_id is None:
        return None  # no id
    deps: dict[str, int] = {}
    for text, line in depends:
        if not text or not (text := text.strip(_BLANKS)):
            return None  # an empty item (null or blank)
        if text not in deps:
            deps[text] = line
    items: list[str] = []
    for text, _ in subtasks:
        if not text or not (text := text.strip(_BLANKS)):
            return None
        items.append(text)
    return TaskFields(
        task_id, id_line, tuple(deps.items()), depends_line or yaml_line, agent, tuple(items), ()
    )
