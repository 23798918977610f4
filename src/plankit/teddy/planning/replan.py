"""The automated re-plan loop (``teddy-session-workflow.md`` section 8.3).

When a turn's plan fails validation, ``teddy execute`` has written its Validation
Failed report and prepared the next turn without that report in its context.
:func:`replan` then sends the feedback message (the errors and the faulty plan
verbatim) as the next turn's message, and validates the new plan.  A plan that fails
again is logged the same way and re-planned, at most ``replan.max_attempts`` times in
a row; then the loop stops and says so.  A plan that passes is left for the person to
review and execute: nothing is executed here.

:func:`correct_failed_plan` is the whole rule every front end applies after a
validation failure: pick the planner (:func:`choose_replanner`), run the loop, or, with
no planner to use, leave the feedback in the next turn's ``message.md`` for the person.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from plankit.markdown.fences import fenced
from plankit.teddy.planning.models import Planner, Retry
from plankit.teddy.planning.turn import MESSAGE_FILE, Planned, plan_turn
from plankit.teddy.session.layout import Turn
from plankit.textio import write_text_atomic

if TYPE_CHECKING:
    from plankit.teddy.format.model import Plan
    from plankit.teddy.run.approval import Decision
    from plankit.teddy.run.outcome import Outcome
    from plankit.teddy.session.config import Config

FEEDBACK_INTRO = (
    "The previous plan failed validation. Please review the errors and the original plan, "
    "then generate a corrected version."
)


def feedback_message(errors: Sequence[str], plan_text: str, repairs: Sequence[str] = ()) -> str:
    """The re-plan message: the validation errors (each as ``report.md`` lists it, a diff
    against the closest region fenced under a FIND that matches nowhere), the repairs of
    the model's answer that changed what an action does (``repairs``, with their lines
    in the answer), then the faulty plan verbatim in a fence longer than any backtick run
    inside it."""
    from plankit.teddy.run.report import error_item

    out = [FEEDBACK_INTRO, "", "## Validation Errors:"]
    out += [error_item(error) for error in errors]
    if repairs:
        out += ["", "## Repairs Made to Your Answer (check that they kept your meaning):"]
        out += [f"- {line}" for line in repairs]
    out += ["", "## Original Faulty Plan:", fenced(plan_text.rstrip("\n"), "markdown")]
    return "\n".join(out) + "\n"


def _repairs(turn: Turn) -> tuple[str, ...]:
    from plankit.teddy.format.repairs import action_repairs

    return action_repairs(turn.file("answer.md"), turn.plan_path)


def choose_replanner(
    failed: Turn,
    *,
    model: str | None,
    manual: bool,
    config: Config,
    interactive: bool,
    retry: Retry | None = None,
    stdin: TextIO | None = None,
    err: TextIO | None = None,
) -> Planner | None:
    """The planner that corrects ``failed``'s plan, or None when there is none to use.

    ``manual`` forces manual mode; a model named by ``--model``, ``TEDDY_MODEL`` or
    config.yaml comes next; else the model that wrote the faulty plan (``meta.yaml``).
    A plan pasted in manual mode is corrected in manual mode when someone is at the
    terminal (``interactive``).  A plan written straight into ``plan.md`` gets no
    automatic re-plan: llm's default model is never used implicitly here.
    """
    from plankit.teddy.planning.manual import ManualPlanner
    from plankit.teddy.planning.models import MANUAL, ModelPlanner, configured_model, planning_model

    if manual:
        return ManualPlanner(stdin=stdin, err=err)
    name = configured_model(model, config.model) or failed.meta().model
    if name is not None and name != MANUAL:
        return ModelPlanner(planning_model(name), retry=retry, err=err)
    if name == MANUAL and interactive:
        return ManualPlanner(stdin=stdin, err=err)
    return None


# --- the re-plan loop --------------------------------------------------------------------


class ValidateOnly:
    """An approver that stops every plan that passed validation before it runs."""

    def review(self, plan: Plan, plan_file: Path | None) -> Decision:
        """Never approve: the person reviews a re-planned turn themselves."""
        from plankit.teddy.run.approval import Decision

        return Decision.QUIT


@dataclass(frozen=True, slots=True)
class Replanned:
    """How the re-plan loop ended."""

    turn: Turn
    """The last turn it worked on: the one holding the valid plan, or (when it gave up)
    the turn prepared after the last failure, with the feedback in its message.md."""
    valid: bool
    """Whether the last plan passed validation."""
    attempts: int
    """Plans generated."""
    failed_turns: tuple[str, ...]
    """Turns whose re-generated plan failed validation again."""


def replan(
    failed: Turn,
    outcome: Outcome,
    planner: Planner,
    config: Config,
    *,
    max_attempts: int | None = None,
    fetch: Callable[[str], str] | None = None,
    on_planned: Callable[[Planned], None] | None = None,
) -> Replanned:
    """The automated re-plan loop for ``failed``, whose execution ``outcome`` is a
    validation failure (see the module documentation)."""
    from plankit.teddy.run.approval import NoReply
    from plankit.teddy.run.execute import execute_turn
    from plankit.teddy.run.validate import describe

    if not outcome.validation or outcome.next_turn is None:
        raise ValueError("replan() needs the outcome of a validation failure in a session")
    limit = config.replan_max_attempts if max_attempts is None else max_attempts
    current, issues, target = failed, outcome.validation, outcome.next_turn
    failed_turns: list[str] = []
    attempts = 0
    while True:
        faulty = current.plan_path.read_text(encoding="utf-8", errors="replace")
        message = feedback_message(describe(issues), faulty, _repairs(current))
        if attempts >= limit:
            write_text_atomic(target.file(MESSAGE_FILE), message)
            return Replanned(target, False, attempts, tuple(failed_turns))
        planned = plan_turn(target, message, planner, config, fetch=fetch)
        attempts += 1
        if on_planned is not None:
            on_planned(planned)
        check = execute_turn(target, approver=ValidateOnly(), chat=NoReply(), config=config)
        if not check.validation:
            return Replanned(target, True, attempts, tuple(failed_turns))
        assert check.next_turn is not None
        failed_turns.append(target.name)
        current, issues, target = target, check.validation, check.next_turn


@dataclass(frozen=True, slots=True)
class Correction:
    """What :func:`correct_failed_plan` did after a validation failure."""

    planner: str | None
    """The planner's name ("manual" for manual mode); None when there was none to use."""
    result: Replanned | None
    """How the re-plan loop ended; None when there was no planner."""
    message_file: Path | None
    """With no planner: the next turn's ``message.md``, holding the errors for the
    person to plan from (``teddy plan`` uses it)."""


def correct_failed_plan(
    failed: Turn,
    outcome: Outcome,
    config: Config,
    *,
    model: str | None,
    manual: bool,
    interactive: bool,
    on_start: Callable[[str, int], None] | None = None,
    on_planned: Callable[[Planned], None] | None = None,
    retry: Retry | None = None,
    stdin: TextIO | None = None,
    err: TextIO | None = None,
    planner: Planner | None = None,
) -> Correction:
    """After ``failed``'s plan failed validation (``outcome``): re-plan it with
    ``planner``, else the planner :func:`choose_replanner` picks, or, with none, write
    the feedback into the next turn's ``message.md``.  ``on_start(planner name, max
    attempts)`` is called before the loop starts; ``on_planned`` after each plan."""
    from plankit.teddy.run.validate import describe

    if not outcome.validation or outcome.next_turn is None:
        raise ValueError("correct_failed_plan() needs a validation failure in a session")
    if planner is None:
        planner = choose_replanner(
            failed,
            model=model,
            manual=manual,
            config=config,
            interactive=interactive,
            retry=retry,
            stdin=stdin,
            err=err,
        )
    if planner is None:
        faulty = failed.plan_path.read_text(encoding="utf-8", errors="replace")
        target = outcome.next_turn.file(MESSAGE_FILE)
        feedback = feedback_message(describe(outcome.validation), faulty, _repairs(failed))
        write_text_atomic(target, feedback)
        return Correction(None, None, target)
    if on_start is not None:
        on_start(planner.name, config.replan_max_attempts)
    result = replan(failed, outcome, planner, config, on_planned=on_planned)
    return Correction(planner.name, result, None)
