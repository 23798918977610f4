"""``teddy plan``: from a message to a saved ``plan.md``.

Planning a turn (``teddy-session-workflow.md`` section 6, ``teddy plan``):

1. the message is saved as ``message.md`` in the turn, and ``input.md`` is rebuilt
   (the ``teddy context`` logic);
2. the planner (a model, or a person in manual mode) gets the turn's
   ``system_prompt.xml`` as system prompt and ``input.md`` followed by the message as
   prompt;
3. the answer becomes the plan the way every front end makes it
   (:func:`plankit.teddy.format.answer.answer_to_plan`: text around the plan and a
   fence wrapped around it dropped, ambiguous fences repaired, remarks after the last
   action dropped; a plan that parses is kept byte for byte);
4. ``plan.md`` is written atomically (and ``answer.md`` keeps the raw answer when it
   had to be changed); ``meta.yaml`` records the model and its token usage.

The re-plan loop after a validation failure is in :mod:`plankit.teddy.planning.replan`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from plankit.errors import InputError
from plankit.teddy.planning.models import Answer, Planner, PlanRequest, Retry
from plankit.teddy.session.layout import Turn
from plankit.textio import write_text_atomic

if TYPE_CHECKING:
    from plankit.teddy.format.model import Plan
    from plankit.teddy.format.preprocess import Change
    from plankit.teddy.planning.manual import ManualOptions
    from plankit.teddy.session.config import Config

MESSAGE_FILE = "message.md"
"""The message a turn was planned from (a person's, or the re-plan feedback)."""
ANSWER_FILE = "answer.md"
"""The planner's raw answer, kept when unwrapping or the sanitizer changed it."""


class PlanningError(InputError):
    """A turn that cannot be planned (already executed, locked, an empty answer …)."""


# --- prompts and messages --------------------------------------------------------------


def user_prompt(payload: str, message: str) -> str:
    """The prompt a planner gets: ``input.md``, then the message under its own heading."""
    return f"{payload.rstrip()}\n\n---\n\n# User Message\n\n{message.strip()}\n"


def saved_message(turn: Turn) -> str | None:
    """The turn's ``message.md`` (None when there is none or it is blank)."""
    path = turn.file(MESSAGE_FILE)
    if not path.is_file():
        return None
    from plankit.textio import read_text

    text = read_text(path, allow_empty=True).text
    return text if text.strip() else None


# --- planning one turn -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Planned:
    """A turn that got its ``plan.md``."""

    turn: Turn
    """The turn."""
    answer: Answer
    """The planner's raw answer, model and usage."""
    plan: Plan | None
    """The saved plan, parsed (None when it does not parse)."""
    problems: tuple[str, ...]
    """Why it does not parse (``line N: code message``), when it does not."""
    changes: tuple[Change, ...] = ()
    """What making the answer a plan changed, with lines in the answer."""

    @property
    def repaired(self) -> int:
        """Fences the sanitizer repaired."""
        return sum(c.kind == "fence" for c in self.changes)

    @property
    def unwrapped(self) -> bool:
        """Whether text around the plan (a preamble, a wrapping fence, remarks) was
        dropped."""
        return any(c.kind != "fence" for c in self.changes)

    @property
    def plan_path(self) -> Path:
        """``plan.md``."""
        return self.turn.plan_path


def check_plannable(turn: Turn, replace_plan: bool = False) -> None:
    """Raise :class:`PlanningError` when ``turn`` cannot get a (new) plan."""
    if turn.report_path.exists():
        raise PlanningError(
            f"turn {turn.name} was already executed (its report.md exists); "
            "plan the session's next turn instead",
            code="already-executed",
        )
    if turn.plan_path.exists() and not replace_plan:
        raise PlanningError(
            f"turn {turn.name} already has a plan.md; execute it (`teddy execute`), "
            "or pass --replace to plan the turn again",
            code="plan-exists",
        )
    if not turn.prompt_path.is_file():
        raise PlanningError(
            f"turn {turn.name} has no system_prompt.xml; copy one in, or "
            "`teddy get-prompt AGENT > system_prompt.xml`",
            code="no-prompt",
        )


def plan_turn(
    turn: Turn,
    message: str,
    planner: Planner,
    config: Config,
    *,
    replace_plan: bool = False,
    fetch: Callable[[str], str] | None = None,
) -> Planned:
    """Plan ``turn`` from ``message`` (see the module documentation)."""
    from plankit.locking import try_lock

    if not message.strip():
        raise PlanningError("the message is empty; say what this turn should do", code="no-message")
    session = turn.session
    if turn.number != session.latest().number:
        raise PlanningError(
            f"turn {turn.name} is not the session's latest turn ({session.latest().name})",
            code="not-latest",
        )
    with try_lock(session.path / ".lock") as held:
        if not held:
            raise PlanningError(
                f"another teddy command is working on session {session.name}; wait for it to end",
                code="locked",
            )
        check_plannable(turn, replace_plan)
        return _plan_locked(turn, message, planner, config, fetch)


def _plan_locked(
    turn: Turn,
    message: str,
    planner: Planner,
    config: Config,
    fetch: Callable[[str], str] | None,
) -> Planned:
    from plankit.teddy.context.payload import build_payload, config_budget
    from plankit.teddy.format.answer import answer_to_plan
    from plankit.teddy.format.parse import check_plan
    from plankit.textio import read_text

    root = turn.session.root
    if saved_message(turn) != message:
        write_text_atomic(
            turn.file(MESSAGE_FILE), message if message.endswith("\n") else message + "\n"
        )
    payload = build_payload(
        root,
        turn.session.path,
        turn.path,
        max_file_bytes=config.context_max_file_bytes,
        fetch=fetch,
        budget=config_budget(config),
        protected_read=config.protected_read,
    )
    write_text_atomic(turn.file("input.md"), payload)
    system = read_text(turn.prompt_path).text
    request = PlanRequest(system, user_prompt(payload, message), turn.path, f"turn {turn.name}")
    answer = planner.answer(request)
    made = answer_to_plan(answer.text)
    text = made.text
    if not text.strip():
        raise PlanningError(
            f"{answer.model} gave an empty answer; nothing was saved (run the command again)",
            code="empty-answer",
        )
    raw = turn.file(ANSWER_FILE)
    if answer.text != text:
        write_text_atomic(raw, answer.text)
    elif raw.exists():
        raw.unlink()
    write_text_atomic(turn.plan_path, text)
    _record(turn, answer)
    plan, diagnostics = check_plan(text)
    problems = (
        tuple(f"line {d.line}: {d.code} {d.message}" for d in diagnostics) if plan is None else ()
    )
    return Planned(turn, answer, plan, problems, made.changes)


def _record(turn: Turn, answer: Answer) -> None:
    from plankit.teddy.session.layout import write_meta

    meta = turn.meta()
    usage = answer.usage
    write_meta(
        turn.path / "meta.yaml",
        replace(
            meta,
            model=answer.model,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
        ),
    )


# --- choosing the planner --------------------------------------------------------------


def choose_planner(
    *,
    model: str | None,
    manual: bool,
    config: Config,
    manual_options: ManualOptions | None = None,
    manual_fallback: bool = True,
    retry: Retry | None = None,
    stdin: TextIO | None = None,
    err: TextIO | None = None,
) -> Planner | None:
    """The planner to use.

    ``manual`` forces manual mode.  A model named by ``--model``, ``TEDDY_MODEL`` or
    config.yaml must be usable (else :class:`~plankit.teddy.planning.models.ModelError`).  With
    none named, llm's default model is used when it is known and has its key; otherwise
    manual mode, or None when ``manual_fallback`` is false.
    """
    from plankit.teddy.planning.manual import ManualPlanner
    from plankit.teddy.planning.models import (
        ModelError,
        ModelPlanner,
        configured_model,
        planning_model,
    )

    def by_hand() -> Planner:
        return ManualPlanner(manual_options, stdin=stdin, err=err)

    if manual:
        return by_hand()
    name = configured_model(model, config.model)
    if name is not None:
        return ModelPlanner(planning_model(name), retry=retry, err=err)
    try:
        return ModelPlanner(planning_model(None), retry=retry, err=err)
    except ModelError as exc:
        if not manual_fallback:
            return None
        import sys

        out = err if err is not None else sys.stderr
        out.write(
            f"teddy: no model is set (--model, TEDDY_MODEL or `model:` in config.yaml) and "
            f"llm's default cannot be used ({re.split('[:;]', exc.detail)[0]}): planning by hand\n"
        )
        return by_hand()


def next_step(turn: Turn) -> str:
    """What ``teddy resume`` does with the session's latest ``turn``: ``"execute"`` its
    plan (it has plan.md and no report.md) or ``"plan"`` it; a turn that was executed
    but got no next turn cannot go on."""
    if turn.plan_path.exists() and not turn.report_path.exists():
        return "execute"
    if turn.report_path.exists():
        raise PlanningError(
            f"turn {turn.name} was executed but the session has no next turn; "
            "start a new session with `teddy new NAME`",
            code="no-next-turn",
        )
    return "plan"
