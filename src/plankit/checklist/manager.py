"""PlanManager: the eight operations of the spec on a store, and what an agent needs
beyond them: any status, notes, structural edits that keep progress, lint.

The plan lives in one cell (``AGENT_BASE!C2`` by default); the cell above it holds the
marker ``PLAN.md Contents`` once the plan system is set up.  Every method reads the
cell afresh; on a store that offers ``transaction()`` a read-update-write runs under
one lock, so concurrent managers do not lose each other's updates, and nothing is
written when a method raises.
"""

from __future__ import annotations

import datetime as _dt
import functools
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from plankit.checklist import scan
from plankit.checklist.edit import add_note, set_status
from plankit.checklist.errors import (
    AmbiguousStepError,
    NoPlanError,
    NotAPlanError,
    PlanExistsError,
    UnknownStepError,
    WriteConflictError,
)
from plankit.checklist.frontends import FrontEnd
from plankit.checklist.locate import analyze
from plankit.checklist.model import Phase, PhaseInput, Plan, PlanTask, TaskStatus
from plankit.checklist.plan import parse_plan, task_from_line
from plankit.checklist.refs import parse_ref
from plankit.checklist.render import (
    PLAN_MARKER,
    STARTER_PLAN,
    fallback_plan,
    render_new_plan,
)
from plankit.checklist.stores.base import (
    SheetsClient,
    Transactional,
    cell_limit,
    check_cell_size,
    describe_cell,
    store_label,
)
from plankit.errors import Diagnostic, InputError

if TYPE_CHECKING:
    import logging

    from plankit.checklist.analysis import PlanAnalysis
    from plankit.checklist.structure import Structure

R = TypeVar("R")

DEFAULT_CELL = "AGENT_BASE!C2"
"""Where the spec keeps the plan."""
CONFLICT_ATTEMPTS = 10
"""How many times a read-update-write is redone when another writer changed the cell
in between (stores with conditional writes: Google Sheets)."""


def _log() -> logging.Logger:
    """The ``plankit.checklist`` logger (logging is loaded when there is something to say)."""
    import logging

    return logging.getLogger("plankit.checklist")


class PlanManager:
    """Read and change the plan kept in one cell of ``store``."""

    def __init__(
        self,
        store: SheetsClient,
        cell: str = DEFAULT_CELL,
        *,
        today: Callable[[], _dt.date] | None = None,
        front_end: FrontEnd = "python",
    ) -> None:
        """``cell`` must be below row 1 (the row above holds the marker); ``today`` gives
        the completion date (``date.today`` by default); ``front_end`` says in whose
        words errors tell the fix (:mod:`plankit.checklist.frontends`)."""
        ref = parse_ref(cell)
        if ref.row < 2:
            raise InputError(
                f"the plan cell {cell} must be below row 1: the cell above it holds the "
                f"{PLAN_MARKER!r} marker",
                code="bad-cell-ref",
            )
        self.store = store
        self.cell = ref.a1
        """The plan cell, normalised (``AGENT_BASE!C2``)."""
        self.marker_cell = ref.above().a1
        """The cell holding the marker (``AGENT_BASE!C1``)."""
        self.sheet = ref.sheet
        """The sheet both cells are on."""
        self._today = today or _dt.date.today
        self.front_end: FrontEnd = front_end
        """Who reads the errors: ``python``, ``cli`` or ``mcp``."""

    def __repr__(self) -> str:
        return f"PlanManager({self.store!r}, {self.cell!r})"

    def _atomic(self, body: Callable[[SheetsClient], R]) -> R:
        """Run ``body`` as one read-update-write; when the store refuses the write
        because the cell changed meanwhile (Google Sheets), read again and redo it."""
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            try:
                with self._session() as s:
                    return body(s)
            except AmbiguousStepError as exc:  # raised by the edits, which know no front end
                raise AmbiguousStepError(exc.step, exc.lines, self.front_end) from None
            except WriteConflictError as exc:
                if attempt == CONFLICT_ATTEMPTS:
                    raise WriteConflictError(exc.ref, attempt) from None
                _log().info("%s changed while being written; reading it again", exc.ref)
                # a short random pause, so that two writers do not collide again at once
                import random

                time.sleep(random.uniform(0, 0.02 * attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _session(self) -> Iterator[SheetsClient]:
        if isinstance(self.store, Transactional):
            with self.store.transaction() as session:
                yield session
        else:
            yield self.store

    def _check_size(self, text: str) -> None:
        check_cell_size(self.cell, text, cell_limit(self.store), store_label(self.store))

    @property
    def where(self) -> str:
        """How messages name the plan: the file, or the store and cell."""
        return describe_cell(self.store, self.cell)

    def _not_a_plan(self, text: str) -> NotAPlanError:
        file = bool(getattr(self.store, "plan_is_file", False))
        return NotAPlanError(self.cell, text, self.where, self.front_end, file=file)

    def _read(self, store: SheetsClient) -> tuple[str, Structure]:
        return self._analyzed(store.get_cell(self.cell))

    def _analyzed(self, text: str) -> tuple[str, Structure]:
        if not text.strip():
            raise NoPlanError(self.cell, self.where, self.front_end)
        found = analyze(text)
        if not found.is_plan:
            raise self._not_a_plan(text)
        return text, found

    def _ensure_sheet(self, store: SheetsClient) -> None:
        if self.sheet not in store.list_sheets():
            store.create_sheet(self.sheet)
        if store.get_cell(self.marker_cell) != PLAN_MARKER:
            store.set_cell(self.marker_cell, PLAN_MARKER)

    # --- initialise -------------------------------------------------------------------

    def init_plan(self, *, raise_errors: bool = False) -> Plan:
        """Set up the plan system and return the plan; safe to call again.

        A plan already in the cell is returned unchanged (the marker is added when it
        is missing).  An empty cell gets the starter plan, and the marker.  When the
        store fails, nothing is written and the "Initialization Error" plan is returned
        (or, with ``raise_errors``, the error is raised).  Text in the cell that is not
        a plan is never overwritten: that is an error too.
        """

        def body(s: SheetsClient) -> Plan:
            if self.sheet in s.list_sheets():
                marker = s.get_cell(self.marker_cell)
                current = s.get_cell(self.cell)
                if current.strip():
                    if not analyze(current).is_plan:
                        raise self._not_a_plan(current)
                    if marker != PLAN_MARKER:
                        s.set_cell(self.marker_cell, PLAN_MARKER)
                    return parse_plan(current)
            else:
                s.create_sheet(self.sheet)
            s.set_cell(self.marker_cell, PLAN_MARKER)
            s.set_cell(self.cell, STARTER_PLAN)
            return parse_plan(STARTER_PLAN)

        try:
            return self._atomic(body)
        except Exception as exc:
            if raise_errors:
                raise
            _log().warning("init_plan failed: %s", exc)
            return parse_plan(fallback_plan(str(exc)))

    # --- read ---------------------------------------------------------------------------

    def get_plan(self) -> Plan | None:
        """The plan, or None when the cell is empty.  A read takes no lock: it never
        waits for a writer (the file stores replace the file in one rename)."""
        text = self.store.get_cell(self.cell)
        if not text.strip():
            return None
        if not analyze(text).is_plan:
            raise self._not_a_plan(text)
        return parse_plan(text)

    def get_next_task(self) -> PlanTask | None:
        """The first todo task, phase by phase; None when none is left (or no plan)."""
        plan = self.get_plan()
        return None if plan is None else plan.next_task()

    def get_review_tasks(self) -> list[PlanTask]:
        """Every task waiting for review ([] when there is no plan)."""
        plan = self.get_plan()
        return [] if plan is None else plan.review_tasks()

    # --- write --------------------------------------------------------------------------

    def create_plan(
        self,
        title: str,
        goal: str,
        phases: Sequence[PhaseInput | dict[str, Any]],
        *,
        replace: bool = True,
    ) -> Plan:
        """Write a new plan: ``phases`` as :class:`PhaseInput` or
        ``{"name": …, "steps": […]}``; steps are numbered ``N.1``, ``N.2`` …

        ``replace`` says what may be overwritten.  True (the spec's behaviour) replaces
        whatever the cell holds.  False replaces only an empty cell or the starter plan
        of :meth:`init_plan` (also when some of its steps were worked through, as the
        spec's workflow does before the goal is known): any other plan raises
        :class:`PlanExistsError` and text that is not a plan :class:`NotAPlanError`,
        with nothing written.  The check and the write happen under one lock, so a plan
        written meanwhile is never lost.  ``plankit checklist create`` (without
        ``--force``) and the ``create_plan`` MCP tool (without ``replace``) ask for
        False.

        The sheet and the marker are created when missing, so a later ``init_plan``
        keeps this plan.
        """
        markdown = render_new_plan(title, goal, phases)
        self._check_size(markdown)

        def body(s: SheetsClient) -> None:
            if not replace:
                self._check_replaceable(s)
            self._ensure_sheet(s)
            s.set_cell(self.cell, markdown)

        self._atomic(body)
        return parse_plan(markdown)

    def _check_replaceable(self, store: SheetsClient) -> None:
        """Raise unless the cell is empty or holds the starter plan."""
        current = store.get_cell(self.cell)
        if not current.strip() or current == STARTER_PLAN:
            return
        if not analyze(current).is_plan:
            raise self._not_a_plan(current)
        plan = parse_plan(current)
        if _outline(plan) != _starter_outline():
            progress = plan.progress
            raise PlanExistsError(
                self.cell, plan.title, progress.done, progress.total, self.where, self.front_end
            )

    def _set(self, step: str, status: TaskStatus, annotation: str | None = None) -> PlanTask:
        step = str(step).strip()
        if status in (TaskStatus.BLOCKED, TaskStatus.REVIEW) and not (annotation or "").strip():
            if status is TaskStatus.BLOCKED:
                raise InputError(
                    f"blocking step {step} needs a reason: say what it waits for (a person, "
                    "data, access …); nothing was changed",
                    code="empty-reason",
                )
            raise InputError(
                f"asking for a review of step {step} needs a note: say what a person should "
                "check or decide; nothing was changed",
                code="empty-note",
            )

        def body(s: SheetsClient) -> tuple[tuple[int, int], str | None]:
            text = s.get_cell(self.cell)
            quick = scan.phase_task_line(text, step)
            if quick is not None:  # a text never seen, its task found without parsing
                updated, line_text = set_status(text, step, status, annotation, today=self._today())
                if updated != text:
                    self._check_size(updated)
                    s.set_cell(self.cell, updated)
                return quick, line_text
            text, found = self._analyzed(text)
            slot = found.phase_steps.get(step)
            if slot is None:
                raise UnknownStepError(step, found.steps)
            if step in found.ambiguous:
                raise AmbiguousStepError(step, found.step_lines(step))
            updated, line_text = set_status(text, step, status, annotation, today=self._today())
            if updated != text:
                self._check_size(updated)
                s.set_cell(self.cell, updated)
            return slot, line_text

        (line, phase), line_text = self._atomic(body)
        task = task_from_line(line_text or "", line, phase)
        assert task is not None
        return task

    def start_task(self, step: str) -> PlanTask:
        """Mark ``step`` as in progress ``[/]``; returns the task as now written."""
        return self._set(step, TaskStatus.DOING)

    def complete_task(self, step: str) -> PlanTask:
        """Mark ``step`` as done ``[x]`` with today's date."""
        return self._set(step, TaskStatus.DONE)

    def block_task(self, step: str, reason: str) -> PlanTask:
        """Mark ``step`` as blocked ``[>]`` with `` — reason``."""
        return self._set(step, TaskStatus.BLOCKED, reason)

    def review_task(self, step: str, note: str) -> PlanTask:
        """Mark ``step`` as waiting for review ``[!]`` with `` — note``."""
        return self._set(step, TaskStatus.REVIEW, note)

    def set_task_status(
        self, step: str, status: TaskStatus | str, annotation: str | None = None
    ) -> PlanTask:
        """Any status change (``todo`` included), as the four methods above do."""
        from plankit.checklist.model import coerce_status

        return self._set(step, coerce_status(status), annotation)

    def append_note(self, text: str) -> str:
        """Add ``- text`` at the end of the Notes section (adding the section if needed);
        returns the note as written (on one line, spaces collapsed)."""
        note = " ".join(text.split())

        def body(s: SheetsClient) -> None:
            current, _ = self._read(s)
            updated = add_note(current, note)
            self._check_size(updated)
            s.set_cell(self.cell, updated)

        self._atomic(body)
        return note

    # --- structure (progress kept) -------------------------------------------------------

    def _edit(self, change: Callable[[str], tuple[str, R]]) -> tuple[str, R]:
        """Apply ``change`` to the plan's text under one lock; write it if it changed."""

        def body(s: SheetsClient) -> tuple[str, R]:
            text, _ = self._read(s)
            updated, result = change(text)
            if updated != text:
                self._check_size(updated)
                s.set_cell(self.cell, updated)
            return updated, result

        return self._atomic(body)

    def add_step(
        self,
        text: str,
        *,
        after: str | None = None,
        before: str | None = None,
        phase: int | None = None,
    ) -> PlanTask:
        """Add a todo step after a step, before one, or at the end of a phase; the steps
        that follow are renumbered, every status kept.  Returns the new task."""
        from plankit.checklist import restructure  # loaded when a plan's shape changes

        updated, step = self._edit(
            lambda t: restructure.add_step(t, text, after=after, before=before, phase=phase)
        )
        task = parse_plan(updated).task(step)
        assert task is not None
        return task

    def remove_step(self, step: str) -> PlanTask:
        """Remove a step (and its sub-steps); the steps after it are renumbered.  Returns
        the task as it was."""
        from plankit.checklist import restructure

        removed: list[PlanTask] = []

        def change(text: str) -> tuple[str, None]:
            task = parse_plan(text).task(str(step).strip())
            updated = restructure.remove_step(text, str(step))
            assert task is not None
            removed.append(task)
            return updated, None

        self._edit(change)
        return removed[0]

    def add_phase(self, name: str, steps: Sequence[str] = (), *, after: int | None = None) -> Phase:
        """Add a phase of todo steps after phase ``after`` (0: first; None: last); the
        phases after it are renumbered with their steps.  Returns the new phase."""
        from plankit.checklist import restructure

        updated, number = self._edit(
            lambda t: restructure.add_phase(t, name, list(steps), after=after)
        )
        return next(p for p in parse_plan(updated).phases if p.number == number)

    def renumber(self) -> Plan:
        """Number phases 1, 2 … and steps N.1, N.2 … in document order (duplicates, gaps
        and misplaced numbers gone, progress kept); returns the plan."""
        from plankit.checklist import restructure

        updated, _ = self._edit(lambda t: (restructure.renumber(t), None))
        return parse_plan(updated)

    def rename_phase(self, number: int, name: str) -> Phase:
        """Rename phase ``number``; its steps are untouched."""
        from plankit.checklist import restructure

        updated, _ = self._edit(lambda t: (restructure.rename_phase(t, number, name), None))
        return next(p for p in parse_plan(updated).phases if p.number == int(number))

    def answer_question(self, question: int | str, answer: str) -> str:
        """Write the answer after a question of the Questions section (its 1-based number
        or the start of its text); returns the question as now written."""
        from plankit.checklist import restructure

        return self._edit(lambda t: restructure.answer_question(t, question, answer))[1]

    def set_goal(self, goal: str) -> str:
        """Replace the goal; returns it as written (on one line)."""
        from plankit.checklist import restructure

        updated, _ = self._edit(lambda t: (restructure.set_goal(t, goal), None))
        return parse_plan(updated).goal

    def set_analysis(
        self,
        *,
        spreadsheet: str | None = None,
        key_sheets: Sequence[str] | None = None,
        read: Sequence[str] | None = None,
        write: Sequence[str] | None = None,
        current_state: str | None = None,
    ) -> PlanAnalysis:
        """Set fields of the Analysis section (None keeps a field); returns them all."""
        from plankit.checklist import restructure

        return self._edit(
            lambda t: restructure.set_analysis(
                t,
                spreadsheet=spreadsheet,
                key_sheets=key_sheets,
                read=read,
                write=write,
                current_state=current_state,
            )
        )[1]

    def reopen_task(self, step: str) -> PlanTask:
        """Set ``step`` back to todo ``[ ]`` (its date or note is dropped)."""
        return self._set(step, TaskStatus.TODO)

    def current_task(self) -> PlanTask | None:
        """The first task in progress ``[/]``: where an agent that resumes picks up."""
        plan = self.get_plan()
        return None if plan is None else plan.current_task()

    def lint(self) -> list[Diagnostic]:
        """What the reader cannot see in the plan (:func:`plankit.checklist.lint.lint_plan`)."""
        from plankit.checklist.lint import lint_plan

        text, _ = self._read(self.store)
        return lint_plan(text)


def _outline(plan: Plan) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A plan's title and its steps' numbers and titles: what stays the same while the
    plan is worked through (statuses, dates, reasons and notes change)."""
    return plan.title, tuple((task.step, task.title) for task in plan.tasks)


@functools.cache
def _starter_outline() -> tuple[str, tuple[tuple[str, str], ...]]:
    return _outline(parse_plan(STARTER_PLAN))
