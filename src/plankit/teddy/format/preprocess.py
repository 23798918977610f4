"""The fence sanitizer: the fence step of :func:`plankit.teddy.format.answer.answer_to_plan`.

Models often wrap content that contains fences in a fence no longer than the inner
ones (a CREATE of a Markdown file with code blocks, a FIND that contains three
backticks), so CommonMark closes the outer block early.  The sanitizer reads the
plan's structure to find where each block really ends and lengthens its fences.

It never loops over lines: one regular expression finds the *event* lines (fence
lines, headings that name an action or a section, ``FIND:``/``REPLACE:`` labels), and
the walk jumps from a block's opening fence straight to its CommonMark closing fence.
Each block is judged by where it opens: in a *structured* place (the Rationale, the
Memos, a CREATE, EDIT, EXECUTE or RESEARCH) or in free Markdown (a CHAT_WITH_USER,
INVOKE or CONCLUDE message, and anywhere else).

1. A plan that parses without any problem is returned byte for byte unchanged.
2. A block is left alone when its fence follows the dynamic fencing rule (no run of
   its fence character inside is as long as the fence: one substring search) and, in
   a structured place, what comes after it *fits the plan*: after blank lines only,
   the end of the text, a section that comes later in the plan, an action heading in
   the Action Plan whose content fits its action (a fenced block first for CREATE,
   EXECUTE and RESEARCH; no fenced block for READ and PRUNE; ``FIND:`` and then,
   outside fenced blocks or right after a bare fence too short to close the block it
   ends, ``REPLACE:`` for EDIT), a label in an EDIT, the next query block in a
   RESEARCH, or, after the plan's last action when it is one that ends with its block,
   only *remarks* to the end of the text (prose set apart by a blank line, which
   :mod:`~plankit.teddy.format.answer` drops).
3. Any other block is read again with its nesting.  Inside it, a fence line with an
   info string, or a bare fence of the other character, opens an inner block; inside
   an inner block only fences of its character and at least its length count (bare
   ones close it, others open a block nested in it, as models write them), anything
   else is its content, as in CommonMark.  A bare fence of the block's own character
   outside inner blocks is a *candidate* end.  The end is:

   - in a structured place, CommonMark's end when it fits the plan (even if it closes
     an inner block), else the first candidate that fits the plan;
   - in free Markdown, the first candidate at least as long as the opening fence.

   The reading stops at the first heading outside inner blocks that may come next
   (as above) and whose content fits, and in a RESEARCH at the first fence line with an
   info string outside inner blocks (the next query).  Without an end before it, the block keeps
   CommonMark's end when that comes first and is outside inner blocks (in free
   Markdown: when it comes first), or else ends at its first candidate; with no
   candidate either, it never closed.

   A block with a new end has its fences made one longer than the longest run of the
   fence character inside it (a closing fence already long enough stays).  A block
   that never closed gets a closing fence after its last non-blank line before that
   heading (or the end of the text), and its opening fence is lengthened the same way.
   When a later block in the same stretch is found never to close, the earlier block
   that kept a fallback end takes the whole stretch instead: that is what a second
   pass would do, as the inserted fence fits the plan.

Only fence runs are lengthened and closing fences inserted: every other byte,
including CRLF line endings and a UTF-8 byte-order mark, stays as it was.  A repaired
block follows the dynamic fencing rule and is followed by what fits the plan, so a
second pass leaves it alone.  A block that could only be given a fallback end (a
candidate that does not fit) may read differently once repaired, so such a text is
read again and repaired again until a reading changes nothing (at most
:data:`MAX_PASSES` readings; a text that needs more is left as it is): the result is
idempotent.  Each repair is reported as a :class:`Change` with its line in the input.

Cost: the walk is linear in the text and, on a clean plan, touches only the lines
between blocks; the nested reading of a broken block scans its events once.  The events
scanned beyond the walk are counted against a budget proportional to the text's lines,
so even adversarial text stays linear: text that would need more (only deliberately
pathological text does) is returned unchanged, which also keeps the result idempotent.
A plan with repairs is also parsed once, for rule 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plankit.teddy.format.changes import Change, Preprocessed
from plankit.teddy.format.parse import check_plan
from plankit.teddy.format.sanitizer import OutOfBudget, Sanitizer

__all__ = [
    "Change",
    "OutOfBudget",
    "Preprocessed",
    "Proposal",
    "Sanitizer",
    "preprocess",
    "propose",
]

FENCE_LINE_RE = re.compile(r"( {0,3})(`{3,}|~{3,})([^\r]*)\r?")


@dataclass(frozen=True, slots=True)
class Proposal:
    """What the sanitizer would change in a plan's text, before rule 1 is applied."""

    text: str
    """The text with its fences repaired (the input itself when there is nothing to
    repair)."""
    changes: tuple[Change, ...]
    """The repairs, in line order."""
    remarks: tuple[int, int] | None
    """Text after the last action that cannot belong to it (``"Hope this helps!"``
    after a CREATE's block): the offset in :attr:`text` where the action ends, and the
    offset in the input where that text starts; None when there is none."""
    open_end: bool = False
    """Whether a block that ran to the end of the text got a closing fence."""


MAX_PASSES = 4
"""How many readings a text whose repair gave a block an end that does not fit may get
before it is left as it is (see :func:`propose`)."""


def propose(text: str) -> Proposal:
    """The sanitizer's repairs of ``text`` (without a byte-order mark), not yet checked
    against rule 1: the caller parses the input when there is anything to change.

    A repair that gave some block an end that does not fit the plan (a fallback) is read
    again, and repaired again, until a reading changes nothing: what is returned is what
    a further pass leaves alone.  A text that needs more than :data:`MAX_PASSES`
    readings is left as it is.  The changes of several passes are reported against the
    input, fence by fence.
    """
    sanitizer = Sanitizer(text)
    try:
        sanitizer.run()
    except OutOfBudget:
        return Proposal(text, (), None)
    if not sanitizer.edits:
        return Proposal(text, (), sanitizer.remarks())
    first, current, open_end = sanitizer, sanitizer.result(), sanitizer.open_end
    for _ in range(MAX_PASSES - 1):
        if not sanitizer.unsure:
            break
        sanitizer = Sanitizer(current)
        try:
            sanitizer.run()
        except OutOfBudget:
            return Proposal(text, (), None)
        if not sanitizer.edits:
            break
        current, open_end = sanitizer.result(), open_end or sanitizer.open_end
    else:
        if sanitizer.unsure:
            return Proposal(text, (), None)  # no reading it keeps: leave it as it is
    remarks = sanitizer.remarks()
    if remarks is not None:  # remarks hold no fence: nothing after the action moved
        end, start = remarks
        if sanitizer.edits:
            end += sum(len(new) - (b - a) for a, b, new in sanitizer.edits if a <= end)
        remarks = (end, start - (len(sanitizer.text) - len(text)))
    changes = first.changes() if sanitizer is first else _compare(text, current)
    return Proposal(current, changes, remarks, open_end)


def _compare(before: str, after: str) -> tuple[Change, ...]:
    """The repairs that turned ``before`` into ``after`` (fence runs lengthened, closing
    fences inserted), fence by fence, with the partner of each fence read from the
    repaired text's blocks."""
    from plankit.markdown.tree import Fence, parse_document

    # a closing fence inserted after a last line without a newline gives that line one
    old = [line.removesuffix("\r") for line in before.split("\n")]
    new = [line.removesuffix("\r") for line in after.split("\n")]
    partner: dict[int, tuple[str, int]] = {}  # line in ``after`` -> its block's other end
    for block in parse_document(after).blocks:
        if isinstance(block, Fence) and block.closed:
            partner[block.start] = ("opening", block.end)
            partner[block.end] = ("closing", block.start)
    back: dict[int, int] = {}  # line in ``after`` -> line in ``before``
    found: list[tuple[int, int, str]] = []  # (line in after, line in before, what)
    i = 0
    for j, text in enumerate(new, 1):
        if i < len(old) and text == old[i]:
            i += 1
            back[j] = i
            continue
        was = FENCE_LINE_RE.fullmatch(old[i]) if i < len(old) else None
        now = FENCE_LINE_RE.fullmatch(text)
        if now is None:  # cannot happen: only fences change
            i += 1
            continue
        if was is not None and was.group(1, 3) == now.group(1, 3) and was[2][0] == now[2][0]:
            i += 1
            back[j] = i
            found.append((j, i, f"from {len(was[2])} to {len(now[2])}"))
        else:
            found.append((j, i, now[2]))
    out: list[Change] = []
    for j, line, what in found:
        kind, other = partner.get(j, ("", 0))
        ref = back.get(other, 0)
        if what.startswith("from"):
            name = f"the {kind} fence" if kind else "the fence"
            if kind and ref:
                verb = "ends" if kind == "opening" else "opens"
                what += f" (the block {verb} at line {ref})"
            out.append(Change(line, f"lengthened {name} {what}"))
        else:
            out.append(
                Change(
                    ref if kind == "closing" and ref else max(line, 1),
                    f"the block opened here never closed: inserted the closing fence {what} "
                    f"after line {line}",
                )
            )
    return tuple(sorted(out, key=lambda c: c.line))


def preprocess(text: str) -> Preprocessed:
    """Repair ambiguous fences in plan ``text`` (see the module documentation)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    proposal = propose(body)
    if not proposal.changes:
        return Preprocessed(text, ())
    plan, _ = check_plan(body)
    if plan is not None:
        return Preprocessed(text, ())
    return Preprocessed(bom + proposal.text, proposal.changes)
