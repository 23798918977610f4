"""The fence sanitizer behind ``teddy preprocess`` and ``teddy plan``.

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
   outside fenced blocks, ``REPLACE:`` for EDIT), a label in an EDIT, or the next
   query block in a RESEARCH.
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
   (as above) and whose content fits.  Without an end before it, the block keeps
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
second pass leaves it alone: the result is idempotent.  Each repair is reported as a
:class:`Change` with its line.

Cost: the walk is linear in the text and, on a clean plan, touches only the lines
between blocks; the nested reading of a broken block scans its events once.  The events
scanned beyond the walk are counted against a budget proportional to the text's lines,
so even adversarial text stays linear: text that would need more (only deliberately
pathological text does) is returned unchanged, which also keeps the result idempotent.
A plan with repairs is also parsed once, for rule 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from plankit.teddy.format.fence_events import (
    ACTION,
    BLANK_LINES_RE,
    EVENT_RE,
    FENCE,
    FREE_ACTIONS,
    LABEL,
    ONE_BLOCK_ACTIONS,
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


@dataclass(frozen=True, slots=True)
class Change:
    """One repair, reported on stderr by ``teddy preprocess``."""

    line: int
    """1-based line in the input: the fence that was lengthened, or the opening fence of
    a block that never closed."""
    message: str
    """What was done there."""


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


class _OutOfBudget(Exception):
    """The text makes the nested readings scan too much: it is left as it is."""


@dataclass(frozen=True, slots=True)
class _Pending:
    """A block that kept a fallback end (see :meth:`_Sanitizer.defer`)."""

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


class _Sanitizer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
        self.notes: list[tuple[int, str, tuple[int, ...]]] = []  # (offset, message, offsets)
        self.budget = 2 * text.count("\n") + 10_000  # events scanned beyond the walk
        self.first: dict[int, Event | None] = {}  # offset -> the first event from there
        self.fitting: dict[int, bool] = {}  # offset of an action heading -> fits_under
        self.pending: _Pending | None = None

    # --- events ------------------------------------------------------------------------

    def spend(self) -> None:
        """Count one event scanned beyond the walk; give up when there were too many."""
        self.budget -= 1
        if self.budget < 0:
            raise _OutOfBudget

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
            stack: list[tuple[str, int]] = []
            for ev in events:
                self.spend()
                if ev.kind == FENCE:
                    nest(stack, ev, "")
                elif stack:
                    continue
                elif ev.kind == LABEL and ev.name == "REPLACE":
                    return True
                elif ev.kind in (ACTION, SECTION):
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
        if ev is None or ev.start != pos:
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
                pos = ev.nxt
            elif ev.kind == SECTION:
                place = _Place(ev.name, SECTION_RANK[ev.name])
                pos = ev.nxt
            elif ev.kind == FENCE:
                pos = self.block(ev, place)
            else:
                pos = ev.nxt
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
        newline = "\r\n" if text.startswith("\r\n", opener.end) else "\n"
        self.edits.append((eol, eol, newline + fence))
        what = "the block opened here never closed: "
        if length != opener.length:
            self.set_run(opener, length)
            what += f"lengthened its opening fence from {opener.length} to {length} and "
        self.notes.append(
            (opener.start, what + f"inserted the closing fence {fence} after line {{0}}", (eol,))
        )

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


def preprocess(text: str) -> Preprocessed:
    """Repair ambiguous fences in plan ``text`` (see the module documentation)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    sanitizer = _Sanitizer(body)
    try:
        sanitizer.run()
    except _OutOfBudget:
        return Preprocessed(text, ())
    if not sanitizer.edits:
        return Preprocessed(text, ())
    plan, _ = check_plan(body)
    if plan is not None:
        return Preprocessed(text, ())
    return Preprocessed(bom + sanitizer.result(), sanitizer.changes())
