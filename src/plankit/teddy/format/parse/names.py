"""What a plan's headings and labels name: its sections, its actions, FIND/REPLACE labels.

Headings are matched the way real plans write them: with or without backticks or bold,
in any letter case, with ``_``, ``-`` or spaces between words.
"""

from __future__ import annotations

import re

from plankit.teddy.format.model import ActionType
from plankit.teddy.format.parse.checker import norm_key

RATIONALE_SECTIONS = ("Synthesis", "Justification", "Expected Outcome", "State Dashboard")
"""The four sections the Rationale must contain, in this order."""

SECTIONS = {"rationale": "Rationale", "memos": "Memos", "action plan": "Action Plan"}
"""The plan's ``##`` sections, by :func:`~plankit.teddy.format.parse.checker.norm_key`."""

LABEL_RE = re.compile(r"[`*_\s]*(FIND|REPLACE)[`*_\s]*:?[`*_\s]*", re.IGNORECASE)
"""A ``FIND:`` or ``REPLACE:`` label of EDIT, however decorated (use with ``fullmatch``)."""


def action_name(heading: str) -> str:
    """A ``###`` heading's text as an action name: ``\\`chat with user\\``` → CHAT_WITH_USER."""
    name = heading.replace("`", "").replace("*", "").strip().rstrip(":").strip()
    return re.sub(r"[\s-]+", "_", name).upper()


def action_type_of(heading: str) -> ActionType | None:
    r"""The action a ``###`` heading's text names (``\`create\``` → CREATE), or None."""
    try:
        return ActionType(action_name(heading))
    except ValueError:
        return None


def section_of(heading: str) -> str | None:
    """The top-level section a ``##`` heading's text names (``Rationale`` …), or None."""
    return SECTIONS.get(norm_key(heading.replace("`", "").replace("*", "")))


def is_edit_label(text: str) -> bool:
    """Whether a paragraph's or heading's text is a ``FIND:`` or ``REPLACE:`` label."""
    return LABEL_RE.fullmatch(text) is not None
