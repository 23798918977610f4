"""A fenced block whose closing fence is really an inner block's: reported, never read.

A model that forgets a closing fence leaves a block open; when a later action has a
fenced block of its own (an EXECUTE's ```` ```shell ````), that block's closing fence
ends the open one, and the actions in between become file content: the plan still
parses, one action short.  The same happens to a RESEARCH query left open before the
next one.  Two signs together say that this happened, never one alone:

1. the block breaks the dynamic fencing rule: a run of its fence, as long as its
   opening one, is inside it (a block fenced longer than anything inside ends where
   its author said, and is never reported);
2. its content ends inside an inner block opened with its own fence character: the
   closing fence closes that inner block.

With a level-3 heading naming an action before that inner block, outside inner blocks,
the problem is ``action-in-fence`` at the heading's line (an action would vanish);
otherwise ``fence-ambiguous`` at the inner block's opening line (the block was never
closed, or its fences are too short).  Both name the fix; ``teddy parse`` adds that
``teddy preprocess`` makes the plan valid when it does
(:mod:`plankit.teddy.format.preprocess` repairs what it can read).

Inner blocks are tracked as the fence sanitizer reads a block with its nesting
(:func:`plankit.teddy.format.fence_events.nest`): a fence line with an info string, or a
bare fence of the other character, opens one; inside it only fences of its character
and at least its length count.  Only top-level blocks whose content holds their own
fence run are scanned, with one regular expression.
"""

from __future__ import annotations

import re

from plankit.errors import Diagnostic
from plankit.markdown.tree import Document, Fence
from plankit.teddy.format.parse.names import action_type_of

_LINE_RE = re.compile(
    r"^ {0,3}(?:(?P<run>`{3,}|~{3,})(?P<rest>[^\n]*)|###[ \t]+(?P<title>[^\n]*?)[ \t]*)$",
    re.MULTILINE,
)


def _title(text: str) -> str:
    stripped = text.rstrip("#")
    if stripped != text and (not stripped or stripped[-1] in " \t"):
        return stripped.strip()  # a closing sequence of #
    return text


def swallowed_action(fence: Fence) -> Diagnostic | None:
    """The diagnostic for ``fence`` when its closing fence really closes an inner block
    (see the module documentation), else None."""
    content = fence.content
    if not fence.closed or fence.char * fence.length not in content:
        return None  # a block that follows the dynamic fencing rule ends where it says
    stack: list[tuple[str, int, int, str]] = []  # inner blocks: char, length, offset, info
    heading: tuple[int, str] | None = None  # offset and text of the first action heading
    for m in _LINE_RE.finditer(content):
        run = m.group("run")
        if run is None:
            if not stack and heading is None:
                title = _title(m.group("title"))
                if action_type_of(title) is not None:
                    heading = (m.start(), title)
            continue
        rest = m.group("rest")
        if run[0] == "`" and "`" in rest:
            continue  # not a fence line
        bare = not rest.strip()
        if stack:
            char, length, _, _ = stack[-1]
            if run[0] != char or len(run) < length:
                continue
            if bare:
                stack.pop()
            else:
                stack.append((run[0], len(run), m.start(), rest.strip()))
        elif not (bare and run[0] == fence.char):
            stack.append((run[0], len(run), m.start(), rest.strip()))
    if not stack or stack[0][0] != fence.char:
        return None
    first = fence.start + 1  # the content's first line
    char, length, opened, info = stack[0]
    inner = first + content.count("\n", 0, opened)
    outer = fence.char * fence.length + fence.info
    closes = (
        f"whose closing fence (line {fence.end}) closes the {char * length}{info} block of "
        f"line {inner} instead"
    )
    if heading is not None and heading[0] < opened:
        at, title = heading
        line = first + content.count("\n", 0, at)
        return Diagnostic(
            line,
            "action-in-fence",
            f"'### {title}' is inside the {outer} block opened at line {fence.start}, "
            f"{closes}: the block of line {fence.start} was probably never closed; close it "
            f"before line {line}",
        )
    return Diagnostic(
        inner,
        "fence-ambiguous",
        f"the {outer} block opened at line {fence.start} holds this opening fence, {closes}: "
        f"either the block of line {fence.start} was never closed, or its fences are too "
        f"short; close it before line {inner}, or make its "
        f"fences longer than any run of {fence.char} inside",
    )


def swallowed_actions(doc: Document) -> list[Diagnostic]:
    """A diagnostic for each top-level fenced block of ``doc`` that swallowed an action."""
    out: list[Diagnostic] = []
    for block in doc.blocks:
        if isinstance(block, Fence):
            found = swallowed_action(block)
            if found is not None:
                out.append(found)
    return out
