"""Errors raised by the checklist system.

Every one is a :class:`~plankit.errors.PlankitError`, so the CLI prints it as one line
and the MCP tools return it as a tool error; none is raised after anything was
written.

::

    InputError
    ├── NoPlanError         the plan cell is empty
    ├── NotAPlanError       the plan cell holds text that is not a PLAN.md plan
    ├── PlanExistsError     create_plan without replace found a plan (not the starter)
    ├── UnknownStepError    no task has that step number
    ├── AmbiguousStepError  more than one task has that step number
    └── CellTooLargeError   the plan would not fit in one cell of the store
    PlankitError
    └── StoreError          the store failed: locked, read-only, not a workbook, network
        └── WriteConflictError  the cell changed between reading and writing it
"""

from __future__ import annotations

from plankit.checklist.frontends import FrontEnd, how
from plankit.errors import InputError, PlankitError


class NoPlanError(InputError):
    """The plan cell is empty (the spec's ``No plan``)."""

    def __init__(self, cell: str, where: str | None = None, front_end: FrontEnd = "python"):
        self.cell = cell
        super().__init__(
            f"No plan in {where or cell}; create one with {how(front_end, 'create')}",
            code="no-plan",
        )


class NotAPlanError(InputError):
    """The plan cell holds text without a ``# Plan:`` title or a ``### Phase`` heading."""

    def __init__(
        self,
        cell: str,
        text: str,
        where: str | None = None,
        front_end: FrontEnd = "python",
        *,
        file: bool = False,
    ):
        self.cell = cell
        preview = " ".join(text.split())
        if len(preview) > 60:
            preview = preview[:59] + "…"
        what = "the file" if file else "the cell"
        super().__init__(
            f"{where or cell} does not hold a PLAN.md plan (no '# Plan:' title and no "
            f"'### Phase N:' heading); it holds {preview!r}. To write a plan over it, "
            f"{how(front_end, 'replace')}; or clear {what}, or "
            f"{how(front_end, 'elsewhere', file=file)}",
            code="not-a-plan",
        )


class PlanExistsError(InputError):
    """``create_plan(..., replace=False)`` found a plan other than the starter plan."""

    def __init__(
        self,
        cell: str,
        title: str,
        done: int,
        total: int,
        where: str | None = None,
        front_end: FrontEnd = "python",
    ):
        self.cell = cell
        self.title = title
        super().__init__(
            f"{where or cell} already holds the plan {title!r} ({done} of {total} steps "
            f"done); nothing was written. To replace it, {how(front_end, 'replace')}",
            code="plan-exists",
        )


class UnknownStepError(InputError):
    """No task of the plan has the step number asked for."""

    def __init__(self, step: str, known: list[str]):
        import difflib

        self.step = step
        self.known = known
        if not known:
            listing = "the plan has no tasks"
        else:
            shown = ", ".join(known[:30]) + (
                f", … ({len(known)} in all)" if len(known) > 30 else ""
            )
            listing = f"known steps: {shown}"
        close = difflib.get_close_matches(step, known, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        super().__init__(f"no task {step!r} in the plan ({listing}){hint}", code="unknown-step")


class AmbiguousStepError(InputError):
    """More than one task has the step number asked for: an update would have to guess."""

    def __init__(self, step: str, lines: list[int], front_end: FrontEnd = "python"):
        self.step = step
        self.lines = lines
        where = ", ".join(str(n) for n in lines[:-1]) + f" and {lines[-1]}"
        super().__init__(
            f"step {step!r} is ambiguous: the tasks on lines {where} all have that number; "
            f"nothing was changed. Give each step its own number ({how(front_end, 'renumber')}"
            f"), then try again; {how(front_end, 'lint')} lists every duplicate",
            code="ambiguous-step",
            line=lines[1],
        )


class CellTooLargeError(InputError):
    """The plan is longer than one cell of the store can hold."""

    def __init__(self, cell: str, length: int, limit: int, store: str):
        self.length = length
        self.limit = limit
        super().__init__(
            f"the plan would be {length:,} characters, more than the {limit:,} a cell of "
            f"{store} holds ({cell}); nothing was written. Shorten the plan (move detail "
            "to Notes elsewhere, drop finished phases) or use a PLAN.md file",
            code="cell-too-large",
        )


class StoreError(PlankitError):
    """The store could not be read or written; ``str(err)`` says why and what to do."""

    def __init__(self, message: str, *, code: str = "store-failed"):
        self.code = code
        super().__init__(message)


class WriteConflictError(StoreError):
    """A conditional write found the cell changed since it was read (another writer):
    nothing was written.  :class:`~plankit.checklist.manager.PlanManager` reads the plan
    again and redoes the update."""

    def __init__(self, ref: str, attempts: int = 1):
        self.ref = ref
        tail = f", {attempts} times in a row" if attempts > 1 else ""
        super().__init__(
            f"{ref} changed while this update was being written (another agent is updating "
            f"the plan){tail}; nothing of this update was written; try again",
            code="conflict",
        )
