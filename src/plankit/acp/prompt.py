"""What a ``session/prompt`` asks of TeDDy: a plan to run, or a slash command.

A prompt runs a plan when:

1. its text is a TeDDy plan (a ``# Title`` first and an ``## Action Plan`` heading);
2. it embeds a resource whose text is a plan (an editor's attached file);
3. it links a ``file://`` resource ending in ``.md`` inside the project (an editor's
   @-mention; one outside the project is refused, as ``/execute ../x.md`` is);
4. a word of its text names a ``.md`` file of the project (``run plans/fix.md``).

Otherwise a planner, when one is plugged in, writes the plan from the text.
Slash commands (``/execute PLAN``, ``/parse PLAN``, ``/context``, ``/report``) are
advertised with ``available_commands_update``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from plankit.errors import PlankitError

_TITLE = re.compile(r"^ {0,3}#[ \t]+\S", re.MULTILINE)
# an Action Plan heading however a model writes it (# Action Plan, ## Action plan:, …),
# or inside a JSON string (the plan of a function call's arguments)
_ACTION_PLAN = re.compile(
    r"^ {0,3}#{1,4}[ \t]+[*_`]*action[ _-]?plan\b|\\n#{1,4} [*_`]*action[ _-]?plan\b",
    re.MULTILINE | re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command TeDDy offers to ACP clients."""

    name: str
    """Without the slash."""
    description: str
    """What it does."""
    hint: str | None = None
    """What to type after it (None: it takes nothing)."""

    def to_wire(self) -> dict[str, Any]:
        """The ``AvailableCommand`` JSON object."""
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.hint:
            out["input"] = {"hint": self.hint}
        return out


COMMANDS = (
    Command("execute", "Run a TeDDy plan file as this turn", "path of the plan, e.g. plan.md"),
    Command("parse", "Check a TeDDy plan and show it, without running it", "path of the plan"),
    Command("context", "Write input.md, the context payload of the current turn"),
    Command("report", "Show the report of the last executed turn"),
)


def commands_update() -> dict[str, Any]:
    """The ``available_commands_update`` payload."""
    return {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [c.to_wire() for c in COMMANDS],
    }


@dataclass(frozen=True, slots=True)
class PromptText:
    """The parts of a prompt TeDDy reads."""

    text: str
    """The text blocks, joined."""
    embedded: tuple[tuple[str, str], ...] = ()
    """(uri, text) of each embedded text resource."""
    links: tuple[str, ...] = ()
    """The uri of each resource link."""

    @property
    def command(self) -> tuple[str, str] | None:
        """``("execute", "plan.md")`` for ``/execute plan.md``; None when not a command."""
        stripped = self.text.strip()
        if not stripped.startswith("/"):
            return None
        name, _, rest = stripped[1:].partition(" ")
        if name not in {c.name for c in COMMANDS}:
            return None
        return name, rest.strip()


def read_prompt(blocks: Sequence[Any]) -> PromptText:
    """Collect text, embedded resources and links from the SDK's content blocks."""
    texts: list[str] = []
    embedded: list[tuple[str, str]] = []
    links: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "resource":
            text = getattr(block.resource, "text", None)
            if isinstance(text, str):
                embedded.append((str(block.resource.uri), text))
        elif kind == "resource_link":
            links.append(str(block.uri))
    return PromptText("\n".join(texts), tuple(embedded), tuple(links))


def looks_like_plan(text: str) -> bool:
    """A model's answer holding a TeDDy plan: a ``# Title`` line and an Action Plan
    heading after it, wherever they are (after a sentence, in a ```` ```markdown ````
    fence, at another level), or a plan in a JSON string; ``answer_to_plan`` makes it
    the plan."""
    heading = _ACTION_PLAN.search(text)
    if heading is None:
        return False
    if heading.group().startswith("\\"):
        return True
    title = _TITLE.search(text, 0, heading.start())
    return title is not None


def file_of(uri: str) -> Path | None:
    """The local path of a ``file://`` URI (or of an absolute path given as a URI)."""
    if uri.startswith("/"):
        return Path(uri)
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def plan_path(word: str, root: Path) -> Path | None:
    """The project file a word names (``plans/fix.md``, ```fix.md```, ``@fix.md``), when it
    is an existing ``.md`` file inside ``root``."""
    from plankit.workspace import is_inside

    word = word.strip("`'\"@,;:()<>")
    if not word.lower().endswith(".md"):
        return None
    candidate = Path(word) if Path(word).is_absolute() else root / word
    if candidate.is_file() and is_inside(root, candidate):
        return candidate
    return None


@dataclass(frozen=True, slots=True)
class FoundPlan:
    """Where the plan of a prompt is."""

    text: str | None
    """The plan's Markdown, when it came with the prompt."""
    path: Path | None
    """The file to read it from, otherwise."""
    source: str
    """For messages: ``the prompt``, a URI or a path."""


class PlanRefused(PlankitError, ValueError):
    """A prompt names a plan TeDDy will not run (a linked file outside the project)."""


ACCEPTED = ("text", "resource_link", "resource")
"""The content block types ``teddy acp`` takes (it advertises no image or audio)."""


def refused_blocks(blocks: Sequence[Any]) -> list[str]:
    """The types of the blocks TeDDy did not advertise (``image``, ``audio`` …)."""
    return [
        str(getattr(b, "type", "?")) for b in blocks if getattr(b, "type", None) not in ACCEPTED
    ]


def find_plan(prompt: PromptText, root: Path) -> FoundPlan | None:
    """The plan a prompt gives or names (see the module documentation), or None.
    :class:`PlanRefused` for a link to a plan outside the project."""
    if looks_like_plan(prompt.text):
        return FoundPlan(prompt.text, None, "the prompt")
    for uri, text in prompt.embedded:
        if looks_like_plan(text):
            return FoundPlan(text, None, uri)
    for uri in prompt.links:
        try:
            path = file_of(uri)
        except ValueError as error:  # urlparse: unbalanced brackets, a bad port …
            raise PlanRefused(
                f"the link {uri!r} is not a valid URI ({error}); send a file:// URI of a "
                ".md file inside the project, or the plan's text"
            ) from None
        if path is not None and path.suffix.lower() == ".md":
            inside = plan_path(str(path), root)
            if inside is None:
                raise PlanRefused(
                    f"the linked plan {uri} is not a .md file inside the project {root}; "
                    "refused (as `/execute` refuses it): move it into the project, or send "
                    "its text"
                )
            return FoundPlan(None, inside, str(inside))
    for word in prompt.text.split():
        path = plan_path(word, root)
        if path is not None:
            return FoundPlan(None, path, str(path))
    return None
