"""The Action Plan section: its actions, each read by the handler of its kind.

An action starts at a ``###`` heading naming its kind (any heading of level 3 or less
that is not a FIND:/REPLACE: label ends the previous one), then may have a metadata
list, then its body (:mod:`plankit.teddy.format.parse.bodies`).
"""

from __future__ import annotations

from plankit.markdown.tree import Block, Heading, ListBlock
from plankit.teddy.format.model import Action, ActionType
from plankit.teddy.format.parse.bodies import HANDLERS
from plankit.teddy.format.parse.checker import Checker, suggest
from plankit.teddy.format.parse.fields import (
    CANONICAL_KEY,
    REQUIRED,
    Field,
    fields,
    is_metadata_list,
)
from plankit.teddy.format.parse.names import LABEL_RE, action_name


def actions(c: Checker, heading: Heading, blocks: list[Block]) -> tuple[Action, ...]:
    """The valid actions of the Action Plan section (``heading`` and its ``blocks``)."""
    heads = [
        i
        for i, block in enumerate(blocks)
        if isinstance(block, Heading) and block.level <= 3 and not LABEL_RE.fullmatch(block.text)
    ]
    for block in blocks[: heads[0] if heads else len(blocks)]:
        c.stray(block, "before the first action (each action starts with ### `TYPE`)")
    if not heads:
        c.error(
            heading.start,
            "action-plan-empty",
            "the Action Plan has no actions; add at least one ### `ACTION`",
        )
        return ()
    out: list[Action] = []
    for n, i in enumerate(heads):
        # one action's blocks at a time: a large plan's are not all copied at once
        j = heads[n + 1] if n + 1 < len(heads) else len(blocks)
        end = blocks[j].start - 1 if j < len(blocks) else c.section_end(blocks)
        head = blocks[i]
        assert isinstance(head, Heading)
        action = read_action(c, head, blocks[i + 1 : j], end)
        if action is not None:
            out.append(action)
    return tuple(out)


def read_action(c: Checker, head: Heading, body: list[Block], end: int) -> Action | None:
    """The action under ``head`` (its ``body`` runs to line ``end``), or None if invalid."""
    name = action_name(head.text)
    try:
        kind = ActionType(name)
    except ValueError:
        first = name.split("_", 1)[0] if name else ""
        options = [str(a) for a in ActionType]
        hint = suggest(name, options)
        if not hint and any(a == first or a.startswith(first + "_") for a in options):
            hint = "; the heading must hold the action name only, e.g. ### `CREATE`"
        c.error(
            head.start,
            "unknown-action",
            f"unknown action '{head.text}'; expected one of " + ", ".join(options) + hint,
        )
        return None
    before = len(c.diags)
    handler = HANDLERS[kind]
    found: dict[str, Field] = {}
    rest = body
    meta_list = body[0] if body else None
    if (
        kind is not ActionType.CHAT_WITH_USER
        and isinstance(meta_list, ListBlock)
        and is_metadata_list(meta_list)
    ):
        found = fields(c, kind, meta_list)
        rest = body[1:]
    for key in REQUIRED.get(kind, ()):
        if key not in found:
            c.error(
                head.start,
                "field-missing",
                f"{kind} needs a '- **{CANONICAL_KEY[key]}:** …' item in its metadata list",
            )
    action = handler(c, head, found, rest, end)
    return action if len(c.diags) == before else None
