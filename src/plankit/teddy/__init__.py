"""TeDDy: Markdown action plans and the turn-based session workflow.

The names below are imported on first use, so that ``import plankit.teddy`` (done by
the ``teddy`` command) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plankit.lazy import lazy_exports

if TYPE_CHECKING:
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
        Memo,
        Plan,
        Prune,
        Read,
        Research,
        Resource,
        plan_to_dict,
    )
    from plankit.teddy.format.parse import check_plan, parse_plan
    from plankit.teddy.format.preprocess import Preprocessed, preprocess
    from plankit.teddy.format.render import render_action, render_plan

_PLAN_NAMES = (
    "Action",
    "ActionType",
    "ChatWithUser",
    "Conclude",
    "Create",
    "Edit",
    "EditPair",
    "Execute",
    "Invoke",
    "Memo",
    "Plan",
    "Prune",
    "Read",
    "Research",
    "Resource",
    "plan_to_dict",
)
_WHERE = {
    "check_plan": "format.parse",
    "parse_plan": "format.parse",
    "render_plan": "format.render",
    "render_action": "format.render",
    "preprocess": "format.preprocess",
    "Preprocessed": "format.preprocess",
    **dict.fromkeys(_PLAN_NAMES, "format.model"),
}

__all__ = [
    "Action",
    "ActionType",
    "ChatWithUser",
    "Conclude",
    "Create",
    "Edit",
    "EditPair",
    "Execute",
    "Invoke",
    "Memo",
    "Plan",
    "Preprocessed",
    "Prune",
    "Read",
    "Research",
    "Resource",
    "check_plan",
    "parse_plan",
    "plan_to_dict",
    "preprocess",
    "render_action",
    "render_plan",
]


__getattr__ = lazy_exports(__name__, _WHERE)
