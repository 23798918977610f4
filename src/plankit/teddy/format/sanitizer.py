"""One reading of a plan's fences: :class:`Sanitizer` (the rules are in :mod:`.preprocess`).

The walk finds each block's end from the plan's structure and records its repairs as
edits of the text and notes; :func:`plankit.teddy.format.preprocess.propose` applies
them (and reads the text again when a repair was a fallback).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from plankit.teddy.format.changes import Change
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
            # (or right after a bare fence, with only blank lines between, that leaves
            # only the FIND block open: too short to close it, or closing a block
            # nested in it with the same fence, as a model does that closes two blocks
            # with one line; prose between is a Markdown file's text about a FIND)
            stack: list[tuple[str, int]] = []
            short: int | None = None  # where such a bare fence's line ends
            for ev in events:
                self.spend()
                if ev.kind == FENCE:
                    top = stack[-1] if stack else None
                    nest(stack, ev, "")
                    ends_find = (
                        len(stack) == 1
                        and top == stack[-1]
                        and ev.bare
                        and ev.char == top[0]
                        and ev.length <= top[1]
                    )
                    short = ev.nxt if ends_find else None
                    continue
                if ev.kind == LABEL and ev.name == "REPLACE":
                    if not stack:
                        return True
                    if short is not None and not self.text[short : ev.start].strip():
                        return True
                short = None
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
