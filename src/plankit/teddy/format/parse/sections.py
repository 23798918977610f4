"""The plan's header and its Rationale and Memos sections.

The header is the metadata list under the ``# Title``.  The Rationale and the Memos
are each one fenced block (or, written without a fence, the section's raw text): the
Rationale with its four sections in order, the Memos with one ``[+]``/``[-]`` line per
memo.
"""

from __future__ import annotations

import re

from plankit.markdown.encoding import repair_double_encoding as _fix
from plankit.markdown.tree import Block, Fence, Heading, ListBlock
from plankit.teddy.format.model import Memo, MemoOp
from plankit.teddy.format.parse.checker import Checker, clip, norm_key
from plankit.teddy.format.parse.fields import field
from plankit.teddy.format.parse.names import RATIONALE_SECTIONS

# A line naming a Rationale section: ``### 1. Synthesis``, ``**Justification:**`` ….
# Possessive quantifiers keep a line that is not one (a line of code in a runaway
# fenced block, say) from being tried in every way its spaces could be split.
_RATIONALE_HEAD_RE = re.compile(
    r"^[ \t]*+(?:#{1,6}+[ \t]*+)?(?:\*\*)?[ \t]*+(?:\d++\.?[ \t]*+)?"
    r"(?P<name>[A-Za-z][A-Za-z ]*+)[ \t]*+(?:\*\*)?[ \t]*+:?[ \t]*+(?:\*\*)?[ \t]*+$",
    re.MULTILINE,
)
_MEMO_RE = re.compile(r"(?:[-*+][ \t]+)?\[(?P<op>[+-])\][ \t]*(?P<rest>.*)")
_COMMENT_RE = re.compile(r"\s#")


def header(c: Checker, blocks: list[Block]) -> tuple[tuple[str, str], ...]:
    """The ``(key, value)`` pairs of the metadata list under the title, in order."""
    pairs: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for i, block in enumerate(blocks):
        if i == 0 and isinstance(block, ListBlock) and not block.ordered:
            for item in block.items:
                fld = field(c, item, "the plan's metadata list")
                if fld is None:
                    continue
                if fld.key in seen:
                    c.error(
                        fld.line,
                        "metadata-duplicate",
                        f"'{fld.label}' appears twice in the metadata (first at line "
                        f"{seen[fld.key]})",
                    )
                    continue
                seen[fld.key] = fld.line
                if len(item.children) > 1:
                    c.stray(item.children[1], f"inside the metadata item '{fld.label}'")
                pairs.append((_fix(fld.label), _fix(fld.value)))
            continue
        c.stray(block, "in the plan header (only the metadata list follows the title)")
    return tuple(pairs)


def section_text(
    c: Checker, heading: Heading, blocks: list[Block], name: str
) -> tuple[str | None, int]:
    """A section's text: the content of its single fenced block, or its raw source.

    The raw source is accepted only for a section written without a fence (whatever
    code blocks its prose holds).  A section that opens with a fenced block and goes
    on after it had its fence closed early (or a second block added): reading the
    raw lines would quietly fold fence lines into the text, so it is an error.
    """
    if not blocks:
        return "", heading.start
    if len(blocks) == 1 and isinstance(blocks[0], Fence):
        fence = blocks[0]
        c.closed(fence)
        return fence.content, fence.start + 1
    if isinstance(blocks[0], Fence):
        for block in blocks[1:]:
            c.stray(
                block,
                f"in the {name} section, which holds one fenced block (did a fence inside "
                "it close the block early? make its fences longer than any fence inside)",
            )
        return None, heading.start
    return c.doc.lines(blocks[0].start, blocks[-1].end), blocks[0].start


def rationale(c: Checker, heading: Heading, blocks: list[Block]) -> str:
    """The Rationale's text; its four sections checked for presence and order."""
    raw, first = section_text(c, heading, blocks, "Rationale")
    if raw is None:
        return ""
    text = _fix(raw)
    if not text.strip():
        c.error(heading.start, "rationale-empty", "the Rationale is empty")
        return text
    found: list[str] = []
    wanted = {norm_key(s): s for s in RATIONALE_SECTIONS}
    for m in _RATIONALE_HEAD_RE.finditer(text):
        name = wanted.get(norm_key(m.group("name")))
        if name is not None and name not in found:
            found.append(name)
    missing = [s for s in RATIONALE_SECTIONS if s not in found]
    if missing:
        c.error(
            first,
            "rationale-sections",
            "the Rationale lacks "
            + ", ".join(f"'{RATIONALE_SECTIONS.index(s) + 1}. {s}'" for s in missing)
            + "; it needs the four sections "
            + ", ".join(f"{i}. {s}" for i, s in enumerate(RATIONALE_SECTIONS, 1)),
        )
    elif found != list(RATIONALE_SECTIONS):
        c.error(
            first,
            "rationale-order",
            "the Rationale's sections are out of order (found "
            + ", ".join(found)
            + "); expected "
            + ", ".join(RATIONALE_SECTIONS),
        )
    return text


def memos(c: Checker, heading: Heading, blocks: list[Block]) -> tuple[Memo, ...]:
    """The Memos: one ``[+] text`` or ``[-] text`` per line, ``# comment`` allowed."""
    text, first = section_text(c, heading, blocks, "Memos")
    if text is None:
        return ()
    out: list[Memo] = []
    for offset, raw in enumerate(text.split("\n")):
        line = raw.strip()
        if not line:
            continue
        m = _MEMO_RE.fullmatch(line)
        if m is None:
            c.error(
                first + offset,
                "memo-invalid",
                f"a memo line must start with [+] or [-]; found '{clip(line)}'",
            )
            continue
        op: MemoOp = "+" if m.group("op") == "+" else "-"
        rest = _fix(m.group("rest"))
        comment: str | None = None
        found = _COMMENT_RE.search(rest)
        if found is not None:
            comment = rest[found.end() :].strip() or None
            rest = rest[: found.start()]
        rest = rest.strip()
        if not rest:
            c.error(first + offset, "memo-empty", f"the [{op}] memo has no text")
            continue
        out.append(Memo(op, rest, comment))
    return tuple(out)
