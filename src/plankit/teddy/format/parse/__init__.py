"""TeDDy plan text → :class:`~plankit.teddy.format.model.Plan`, with every problem reported.

:func:`check_plan` walks the Markdown tree once and returns the plan (when there is
no problem) and the list of :class:`~plankit.errors.Diagnostic`; :func:`parse_plan`
raises :class:`~plankit.errors.PlanError` instead.  Nothing that does not fit the
format is dropped silently: it is a diagnostic.

What real plans vary in, and is accepted without losing meaning: action headings
with or without backticks and in any letter case; metadata keys in any letter case,
with or without bold; backtick or tilde fences of any legal length; ``FIND:`` and
``REPLACE:`` labels as paragraphs or headings; link text mangled by emphasis (the
destination is used); characters damaged by double encoding (outside file contents
and commands, which are kept byte for byte).

The parts: :mod:`.checker` (the document and the diagnostics of one check),
:mod:`.names` (what headings and labels name), :mod:`.document` (the title and the
``##`` sections), :mod:`.sections` (header, Rationale, Memos), :mod:`.actions` (the
Action Plan), :mod:`.fields` (an action's metadata list: paths, resources, env) and
:mod:`.bodies` (each action kind's body).
"""

from __future__ import annotations

from plankit.errors import Diagnostic, PlanError
from plankit.markdown.tree import parse_document
from plankit.teddy.format.model import Plan
from plankit.teddy.format.parse.checker import Checker
from plankit.teddy.format.parse.document import read_plan
from plankit.teddy.format.parse.names import (
    RATIONALE_SECTIONS,
    action_type_of,
    is_edit_label,
    section_of,
)
from plankit.teddy.format.parse.swallowed import swallowed_actions

__all__ = [
    "RATIONALE_SECTIONS",
    "action_type_of",
    "check_plan",
    "is_edit_label",
    "parse_plan",
    "section_of",
]


def check_plan(text: str) -> tuple[Plan | None, list[Diagnostic]]:
    """Parse plan ``text``; return the plan (None when invalid) and every diagnostic."""
    doc = parse_document(text.removeprefix("\ufeff"))
    if not doc.blocks:
        return None, [Diagnostic(1, "plan-empty", "the plan is empty; expected a `# Title`")]
    checker = Checker(doc)
    plan = read_plan(checker)
    swallowed = swallowed_actions(doc)  # a plan one action short is not a valid plan
    if swallowed:
        checker.diags += swallowed
        plan = None
    return plan, sorted(checker.diags)


def parse_plan(text: str) -> Plan:
    """Parse plan ``text`` or raise :class:`PlanError` with every diagnostic."""
    plan, diags = check_plan(text)
    if plan is None:
        raise PlanError(diags)
    return plan
