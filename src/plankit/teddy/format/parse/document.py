"""The whole plan: the ``# Title``, its header, the ``##`` sections, each read in turn.

:func:`read_plan` splits the document's top-level blocks at the title and the section
headings (``## Rationale``, ``## Memos``, ``## Action Plan``), reports whatever is
missing, duplicated or out of place, and has each section read
(:mod:`~plankit.teddy.format.parse.sections`, :mod:`~plankit.teddy.format.parse.actions`).
"""

from __future__ import annotations

from plankit.markdown.encoding import repair_double_encoding as _fix
from plankit.markdown.tree import Block, Heading
from plankit.teddy.format.model import Action, Memo, Plan
from plankit.teddy.format.parse.actions import actions
from plankit.teddy.format.parse.checker import Checker, describe, suggest
from plankit.teddy.format.parse.names import (
    LABEL_RE,
    RATIONALE_SECTIONS,
    SECTIONS,
    section_of,
)
from plankit.teddy.format.parse.sections import header, memos, rationale

_Sections = dict[str, tuple[Heading, list[Block]]]


def read_plan(c: Checker) -> Plan | None:
    """The plan in ``c``'s document, or None when anything was reported."""
    doc = c.doc
    if doc.too_deep_line is not None:
        c.error(
            doc.too_deep_line,
            "nesting-too-deep",
            "lists or quotes are nested too deeply (20 list levels or 40 quote levels"
            " at most); flatten them",
        )
    title, head, sections = _split(c, doc.blocks)
    metadata: tuple[tuple[str, str], ...] = ()
    if title is None:
        if not any(d.code == "title-missing" for d in c.diags):
            c.error(1, "title-missing", "the plan has no `# Title` heading")
    else:
        metadata = header(c, head)
    text = ""
    if "Rationale" in sections:
        text = rationale(c, *sections["Rationale"])
    else:
        first_section = min((h.start for h, _ in sections.values()), default=None)
        c.error(
            first_section or c.end(),
            "rationale-missing",
            "the plan has no '## Rationale' section (a fenced block with the four "
            "sections " + ", ".join(RATIONALE_SECTIONS) + ")",
        )
    notes: tuple[Memo, ...] = ()
    if "Memos" in sections:
        notes = memos(c, *sections["Memos"])
    steps: tuple[Action, ...] = ()
    if "Action Plan" in sections:
        steps = actions(c, *sections["Action Plan"])
    else:
        c.error(
            c.end(),
            "action-plan-missing",
            "the plan has no '## Action Plan' section; add it with at least one action",
        )
    if c.diags or title is None:
        return None
    return Plan(title, metadata, text, notes, steps)


def _split(c: Checker, blocks: tuple[Block, ...]) -> tuple[str | None, list[Block], _Sections]:
    """The title, the header's blocks and each known section's heading and blocks."""
    title: str | None = None
    sections: _Sections = {}
    current: list[Block] | None = None  # blocks of the section being read
    head: list[Block] = []
    in_actions = False
    for block in blocks:
        if isinstance(block, Heading) and block.level <= 2:
            if in_actions and LABEL_RE.fullmatch(block.text):
                assert current is not None
                current.append(block)
                continue
            if block.level == 1:
                if title is None and not sections:
                    title = _fix(block.text)
                    if not title:
                        c.error(block.start, "title-empty", "the plan's title is empty")
                    current = head
                    continue
                c.error(
                    block.start,
                    "title-duplicate",
                    "a second level-1 heading; a plan has exactly one `# Title`"
                    " (use ## for sections, ### for actions, #### inside a message)",
                )
                continue
            name = section_of(block.text)
            if name is None:
                c.error(
                    block.start,
                    "unknown-section",
                    f"unknown section '## {block.text}'; expected ## Rationale, "
                    "## Memos or ## Action Plan"
                    + suggest(block.text, list(SECTIONS.values()))
                    + " (a heading inside a message must be #### or deeper)",
                )
                current = []
                in_actions = False
                continue
            if title is None and not sections:
                c.error(block.start, "title-missing", "the plan has no `# Title` heading")
            if name in sections:
                c.error(
                    block.start,
                    "section-duplicate",
                    f"'## {name}' appears twice (first at line {sections[name][0].start})",
                )
                current = []
                in_actions = False
                continue
            current = []
            sections[name] = (block, current)
            in_actions = name == "Action Plan"
            continue
        if current is None:
            c.error(
                block.start,
                "content-before-title",
                f"unexpected {describe(block)} before the `# Title` heading",
            )
            continue
        current.append(block)
    return title, head, sections
