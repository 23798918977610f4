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
from collections.abc import Iterator
from dataclasses import dataclass

from plankit.teddy.format.fence_events import (
    ACTION,
    BLANK_LINES_RE,
    EVENT_RE,
    FENCE,
    FREE_ACTIONS,
    LABEL,
    LIST_ONLY_ACTIONS,
    METADATA_LINES_RE,
    ONE_BLOCK_ACTIONS,
    REMARKS_AFTER,
    REMARKS_RE,
    REST_BLANK_RE,
    SECTION,
    SECTION_RANK,
    STRUCTURED,
    Event,
    closer_re,
    event_at,
    nest,
    runs_re,
)
from plankit.teddy.format.model import ActionType
from plankit.teddy.format.parse import check_plan

FENCE_LINE_RE = re.compile(r"( {0,3})(`{3,}|~{3,})([^\r]*)\r?")


@dataclass(frozen=True, slots=True)
class Change:
    """One repair, reported on stderr by ``teddy preprocess``."""

    line: int
    """1-based line in the input: the fence that was lengthened, the opening fence of a
    block that never closed, or the first line dropped."""
    message: str
    """What was done there."""
    kind: str = "fence"
    """``fence`` (a fence lengthened or inserted), or what unwrapping a model's answer
    dropped (:mod:`plankit.teddy.format.answer`): ``preamble`` (text before the plan's
    title), ``wrapper`` (a fence around the whole plan, and what followed it) or
    ``remarks`` (text after the last action's block)."""


@dataclass(frozen=True, slots=True)
class Preprocessed:
    """The sanitizer's result."""

    text: str
    """The repaired text (the input itself when nothing needed repair)."""
    changes: tuple[Change, ...]
    """What was changed, in line order."""

    @property
    def changed(self) -> bool:
        """Whether the text differs from the input."""
        return bool(self.changes)


class OutOfBudget(Exception):
    """The text makes the nested readings scan too much: it is left as it is."""


@dataclass(frozen=True, slots=True)
class _Pending:
    """A block that kept a fallback end (see :meth:`Sanitizer.defer`)."""

    opener: Event
    structured: bool
    limit: int  # where its reading stopped
    edits: int  # how many edits and notes there were before it
    notes: int


@dataclass(slots=True)
class _Place:
    """Where a block opens: the section or action it is in, and the plan's position."""

    context: str  # "header", a section name, or an action type
    rank: int  # rank of the current section (0 in the header)

    @property
    def structured(self) -> bool:
        return self.context in STRUCTURED


class Sanitizer:
    """One reading of a text: :meth:`run` walks its blocks and records the repairs as
    ``edits`` (offsets in the text, never the repaired text itself), the ``notes`` that
    become the reported changes, and where the plan's last block ends; :func:`preprocess`
    applies them, and :func:`~plankit.teddy.format.answer.answer_edits` hands them on."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
        self.notes: list[tuple[int, str, tuple[int, ...]]] = []  # (offset, message, offsets)
        self.budget = 2 * text.count("\n") + 10_000  # events scanned beyond the walk
        self.first: dict[int, Event | None] = {}  # offset -> the first event from there
        self.fitting: dict[int, bool] = {}  # offset of an action heading -> fits_under
        self.pending: _Pending | None = None
        self.last: _Place = _Place("header", 0)  # where the walk ended
        self.open_end = False  # whether a block that runs to the end of the text was closed
        self.unsure = False  # whether a block was given an end that does not fit the plan
        self.after: int = 0  # offset after the last block or action heading the walk passed

    # --- events ------------------------------------------------------------------------

    def spend(self) -> None:
        """Count one event scanned beyond the walk; give up when there were too many."""
        self.budget -= 1
        if self.budget < 0:
            raise OutOfBudget

    def events(self, pos: int) -> Iterator[Event]:
        """The events from offset ``pos`` on."""
        text, known = self.text, self.first
        for m in EVENT_RE.finditer(text, pos):
            ev = known.get(m.start())
            if ev is None or ev.start != m.start():
                ev = event_at(text, m)
            if ev is not None:
                yield ev

    def first_event(self, pos: int) -> Event | None:
        """The first event at or after offset ``pos`` (remembered: the walk, ``follows``
        and ``fits_under`` ask for the same ones)."""
        try:
            return self.first[pos]
        except KeyError:
            pass
        text = self.text
        ev: Event | None = None
        m = EVENT_RE.search(text, pos)
        while m is not None:
            ev = event_at(text, m)
            if ev is not None:
                break
            m = EVENT_RE.search(text, m.end() + 1)
        self.first[pos] = ev
        return ev

    # --- what may follow a block ---------------------------------------------------------

    def boundary(self, ev: Event, place: _Place) -> bool:
        """Whether ``ev`` may start what comes after a block opened at ``place``."""
        if ev.kind == ACTION:
            return place.rank == 3
        if ev.kind == SECTION:
            return SECTION_RANK[ev.name] > place.rank
        return ev.kind == LABEL and place.context == ActionType.EDIT

    def fits_under(self, head: Event) -> bool:
        """Whether what is under an action heading fits that action."""
        if head.kind != ACTION or head.name in FREE_ACTIONS:
            return True
        fits = self.fitting.get(head.start)
        if fits is None:
            fits = self.fitting[head.start] = self._fits_under(head)
        return fits

    def _fits_under(self, head: Event) -> bool:
        first = self.first_event(head.nxt)
        if head.name in ONE_BLOCK_ACTIONS:
            return first is not None and first.kind == FENCE
        if first is None:
            return head.name != ActionType.EDIT
        events = self.events(first.nxt)
        if head.name == ActionType.EDIT:
            if first.kind != LABEL or first.name != "FIND":
                return False
            # a REPLACE: label outside fenced blocks, before the next action or section
            # (or right after a bare fence too short to close the FIND block it ends)
            stack: list[tuple[str, int]] = []
            short = False  # the last event was a bare fence too short to close its block
            for ev in events:
                self.spend()
                if ev.kind == FENCE:
                    top = stack[-1] if stack else None
                    nest(stack, ev, "")
                    short = (
                        len(stack) == 1
                        and top == stack[-1]
                        and ev.bare
                        and ev.char == top[0]
                        and ev.length < top[1]
                    )
                    continue
                if ev.kind == LABEL and ev.name == "REPLACE" and (not stack or short):
                    return True
                short = False
                if stack:
                    continue
                if ev.kind in (ACTION, SECTION):
                    return False
            return False
        # READ and PRUNE: no fenced block before the next action or section
        item: Event | None = first
        while item is not None and item.kind not in (ACTION, SECTION):
            if item.kind == FENCE:
                return False
            item = next(events, None)
        return True

    def follows(self, after: int, place: _Place) -> bool:
        """Whether what comes from offset ``after`` (the line after a closing fence) on
        fits the plan's structure."""
        text = self.text
        blank = BLANK_LINES_RE.match(text, after)
        pos = blank.end() if blank is not None else after
        if REST_BLANK_RE.match(text, pos):
            return True
        ev = self.first_event(after)
        if ev is None:  # only text to the end: remarks after the last action?
            return (
                place.rank == SECTION_RANK["Action Plan"]
                and place.context in REMARKS_AFTER
                and REMARKS_RE.match(text, after) is not None
            )
        if ev.start != pos:
            return False  # text that is not an event comes first
        if ev.kind == FENCE:
            return place.context == ActionType.RESEARCH
        return self.boundary(ev, place) and self.fits_under(ev)

    # --- the walk ------------------------------------------------------------------------

    def run(self) -> None:
        text = self.text
        place = _Place("header", 0)
        pos = 0
        while True:
            ev = self.first_event(pos)
            if ev is None:
                return
            if ev.kind == ACTION:
                place = _Place(ev.name, place.rank)
                pos = self.after = ev.nxt
            elif ev.kind == SECTION:
                place = _Place(ev.name, SECTION_RANK[ev.name])
                pos = self.after = ev.nxt
            elif ev.kind == FENCE:
                pos = self.after = self.block(ev, place)
            else:
                pos = self.after = ev.nxt
            self.last = place
            if self.pending is not None and pos >= self.pending.limit:
                self.pending = None
            if pos >= len(text):
                return

    def block(self, opener: Event, place: _Place) -> int:
        """Handle the block that ``opener`` opens; return the offset to go on from."""
        text = self.text
        m = closer_re(opener.char, opener.length).search(text, opener.nxt)
        if m is None:
            return self.nested(opener, place, -1)
        if text.find(opener.char * opener.length, opener.nxt, m.start()) < 0 and (
            not place.structured or self.follows(m.end() + 1, place)
        ):
            return m.end() + 1  # it follows the fencing rule, and the plan goes on after it
        return self.nested(opener, place, m.start())

    def nested(self, opener: Event, place: _Place, cm_start: int) -> int:
        """Read a block with its nesting (rule 3); ``cm_start`` is CommonMark's end."""
        structured = place.structured
        stack: list[tuple[str, int]] = []
        candidate: Event | None = None  # first candidate end that did not fit
        cm_outside = False  # whether CommonMark's end is outside inner blocks
        cm_event: Event | None = None
        end: Event | None = None
        stop: Event | None = None
        for ev in self.events(opener.nxt):
            self.spend()
            if ev.kind != FENCE:
                if not stack and self.boundary(ev, place) and self.fits_under(ev):
                    stop = ev
                    break
                continue
            if not stack and not ev.bare and place.context == ActionType.RESEARCH:
                stop = ev  # a block opened with an info string: RESEARCH's next query
                break
            is_cm = ev.start == cm_start
            if is_cm:
                cm_event = ev
                if structured and self.follows(ev.nxt, place):
                    return ev.nxt  # CommonMark's end fits the plan: keep it
            if nest(stack, ev, opener.char):
                continue
            if not structured:
                if ev.length >= opener.length:
                    end = ev
                    break
            elif self.follows(ev.nxt, place):
                end = ev
                break
            else:
                cm_outside = cm_outside or is_cm
                if candidate is None:
                    candidate = ev
        if end is not None:
            if end.start != cm_start:
                self.lengthen(opener, end)
            return end.nxt
        limit = stop.start if stop is not None else len(self.text)
        if cm_event is not None and cm_event.start < limit and (cm_outside or not structured):
            self.defer(opener, place, limit, stack)
            return cm_event.nxt  # a plausible end; what follows is for the parser to report
        if candidate is not None:
            self.defer(opener, place, limit, stack)
            self.lengthen(opener, candidate)
            self.unsure = True  # an end that does not fit: the next reading may differ
            return candidate.nxt
        self.close(opener, limit)
        return limit

    def defer(self, opener: Event, place: _Place, limit: int, stack: list[tuple[str, int]]) -> None:
        """Remember a block that ends short of ``limit`` only for want of a better end.

        Should a block after it, before ``limit``, be closed at ``limit`` by an inserted
        fence, that fence would be the better end (a second pass would take it, as it
        fits the plan), so the block is closed there instead (see :meth:`close`).
        """
        if not stack and (self.pending is None or self.pending.limit != limit):
            self.pending = _Pending(
                opener, place.structured, limit, len(self.edits), len(self.notes)
            )

    # --- repairs -------------------------------------------------------------------------

    def fence_length(self, opener: Event, stop: int) -> int:
        """One more than the longest run of the fence character between the opening
        fence and ``stop``, and at least the opening fence's length."""
        runs = runs_re(opener.char, opener.length).finditer(self.text, opener.nxt, stop)
        return max((m.end() - m.start() + 1 for m in runs), default=opener.length)

    def set_run(self, ev: Event, length: int) -> None:
        self.edits.append((ev.run_start, ev.run_start + ev.length, ev.char * length))

    def lengthen(self, opener: Event, closer: Event) -> None:
        """Make ``opener`` … ``closer`` one block: both fences longer than any run inside."""
        length = self.fence_length(opener, closer.start)
        if length != opener.length:
            self.set_run(opener, length)
            self.notes.append(
                (
                    opener.start,
                    f"lengthened the opening fence from {opener.length} to {length} "
                    "(the block ends at line {0})",
                    (closer.start,),
                )
            )
        if length > closer.length:  # a longer closing fence closes the block as it is
            self.set_run(closer, length)
            self.notes.append(
                (
                    closer.start,
                    f"lengthened the closing fence from {closer.length} to {length} "
                    "(the block opens at line {0})",
                    (opener.start,),
                )
            )

    def close(self, opener: Event, limit: int) -> None:
        """Insert a closing fence after the block's last non-blank line before ``limit``."""
        text = self.text
        last = limit
        while last > opener.end and text[last - 1] in " \t\r\n":
            last -= 1
        if last <= opener.end:
            eol = opener.end
        else:
            eol = text.find("\n", last)
            if eol < 0:
                eol = len(text)
            elif text[eol - 1] == "\r":
                eol -= 1
        length = self.fence_length(opener, eol)
        fence = opener.char * length
        earlier = self.pending
        if (
            earlier is not None
            and earlier.limit == limit
            and earlier.opener is not opener
            and earlier.opener.char == opener.char
            and (earlier.structured or length >= earlier.opener.length)
        ):
            # the block that ended short of ``limit`` takes everything up to it instead
            self.pending = None
            del self.edits[earlier.edits :]
            del self.notes[earlier.notes :]
            self.close(earlier.opener, limit)
            return
        # the new line ends as the line it follows does (after a last line without a
        # newline, as the line before that one does)
        lf = text.find("\n", eol) if eol < len(text) else text.rfind("\n", 0, eol)
        newline = "\r\n" if lf > 0 and text[lf - 1] == "\r" else "\n"
        self.edits.append((eol, eol, newline + fence))
        if limit >= len(text):
            self.open_end = True
        what = "the block opened here never closed: "
        if length != opener.length:
            self.set_run(opener, length)
            what += f"lengthened its opening fence from {opener.length} to {length} and "
        self.notes.append(
            (opener.start, what + f"inserted the closing fence {fence} after line {{0}}", (eol,))
        )

    def remarks(self) -> tuple[int, int] | None:
        """Where the walk found text after the last action that cannot belong to it:
        ``(end of the action, start of that text)``, or None.

        Only after an action that ends with its last block (CREATE, EDIT, EXECUTE,
        RESEARCH) or its metadata list (READ, PRUNE): after CHAT_WITH_USER, INVOKE or
        CONCLUDE any text is the message.
        """
        place = self.last
        if place.rank != SECTION_RANK["Action Plan"] or place.context not in REMARKS_AFTER:
            return None
        text, end = self.text, self.after
        if place.context in LIST_ONLY_ACTIONS:
            m = METADATA_LINES_RE.match(text, end)
            if m is not None:  # the action ends with the last line of its list
                last = end + len(m.group().rstrip())
                if last > end:
                    eol = text.find("\n", last)
                    end = len(text) if eol < 0 else eol + 1
        blank = BLANK_LINES_RE.match(text, end)
        start = blank.end() if blank is not None else end
        if REST_BLANK_RE.match(text, start) or not REMARKS_RE.match(text, end):
            return None  # nothing, or not prose set apart by a blank line
        return end, start

    # --- the result ----------------------------------------------------------------------

    def result(self) -> str:
        if not self.edits:
            return self.text
        out: list[str] = []
        pos = 0
        for start, end, replacement in sorted(self.edits):
            out.append(self.text[pos:start])
            out.append(replacement)
            pos = end
        out.append(self.text[pos:])
        return "".join(out)

    def changes(self) -> tuple[Change, ...]:
        offsets = sorted({o for n in self.notes for o in (n[0], *n[2])})
        lines: dict[int, int] = {}
        line, pos = 1, 0
        for offset in offsets:
            line += self.text.count("\n", pos, offset)
            pos = offset
            lines[offset] = line
        out = [
            Change(lines[offset], message.format(*(lines[o] for o in refs)))
            for offset, message, refs in self.notes
        ]
        return tuple(sorted(out, key=lambda c: c.line))


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
    for block in parse_document(after.removeprefix("\ufeff")).blocks:
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
