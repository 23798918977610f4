"""``teddy run``: plan, validate, approve, execute, and again, until a reason to stop.

Each round works on the session's latest turn.  A turn that already has its plan (a
plan written by hand, or a corrected plan from the re-plan loop) is executed as it
is; otherwise it is planned from the message: ``-m`` for the first turn (else the
turn's message.md), then the reply to a CHAT_WITH_USER, else :data:`CONTINUE`.  A plan
that fails validation goes through the re-plan loop (``replan.max_attempts``), and the
corrected plan is executed in the next round.

The run stops, each reason with its exit status (:data:`EXIT_STATUS`):

- ``concluded`` (0): a CONCLUDE ran in a turn nobody invoked: the work is done;
- ``question`` (3): a CHAT_WITH_USER asked something and nobody answered (``-y``, or no
  terminal): the answer is the next message (``teddy run -m ANSWER``);
- ``turn_failed`` (1): an action failed, or the plan was skipped, or validation failed
  again after the re-plan attempts;
- ``max_turns`` / ``max_cost`` (4): a limit, checked before each model call;
- ``quit`` (5): the person quit at the approval prompt (or nobody could approve);
- ``interrupted`` (130): Ctrl-C.

Nothing here reads the terminal: approval, chat and the events go through the objects
the caller passes (the CLI's console ones, or the shipped scripted ones in tests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plankit.errors import InputError
from plankit.teddy.planning.costs import GuardedPlanner, LimitReached, Limits, Spend

if TYPE_CHECKING:
    from plankit.teddy.planning.models import Planner
    from plankit.teddy.run.actions import Progress
    from plankit.teddy.run.approval import Approver, ChatResponder
    from plankit.teddy.run.outcome import Outcome
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import Session, Turn

CONTINUE = (
    "Continue with the task. The report of the previous turn is in your context: build on "
    "what it shows, and end with CONCLUDE when the work is done, or CHAT_WITH_USER when "
    "you need the user."
)
"""The message of a turn that follows a completed one when nobody typed another."""

EXIT_STATUS: Mapping[str, int] = {
    "concluded": 0,
    "turn_failed": 1,
    "question": 3,
    "max_turns": 4,
    "max_cost": 4,
    "quit": 5,
    "interrupted": 130,
}
"""The exit status of ``teddy run`` for each reason it stops."""

Emit = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Stopped:
    """Why and where ``teddy run`` stopped."""

    reason: str
    """A key of :data:`EXIT_STATUS`."""
    message: str
    """One line for the person."""
    turn: Turn
    """The session's latest turn when it stopped."""
    spend: Spend
    """Model calls, tokens and cost of the run."""
    rounds: int
    """Turns executed."""

    @property
    def exit_status(self) -> int:
        """The documented exit status."""
        return EXIT_STATUS[self.reason]


class _Recording:
    """A chat responder that remembers the replies it passed on."""

    def __init__(self, inner: ChatResponder) -> None:
        self.inner = inner
        self.asked = 0
        self.replies: list[str] = []

    def reply(self, message: str) -> str | None:
        self.asked += 1
        answer = self.inner.reply(message)
        if answer is not None and answer.strip():
            self.replies.append(answer)
        return answer


def run_session(
    session: Session,
    *,
    planner: Planner,
    config: Config,
    approver: Approver,
    chat: ChatResponder,
    message: str | None = None,
    limits: Limits | None = None,
    emit: Emit | None = None,
    progress: Callable[[Turn], Progress] | None = None,
) -> Stopped:
    """Run ``session`` until a reason to stop (see the module documentation)."""
    from plankit.teddy.planning.costs import price_per_million

    limits = limits or Limits()
    prices = price_per_million(planner.name, config) if limits.max_cost is not None else None
    spend = Spend()
    guarded = GuardedPlanner(planner, limits, spend, prices)
    send: Emit = emit or (lambda event: None)
    rounds = 0
    turn = session.latest()

    def stop(reason: str, text: str) -> Stopped:
        send({"event": "stopped", "reason": reason, "message": text, **_totals(spend, rounds)})
        return Stopped(reason, text, session.latest(), spend, rounds)

    while True:
        try:
            if not (turn.plan_path.exists() and not turn.report_path.exists()):
                text = message if message is not None else _saved(turn)
                if text is None:
                    raise InputError(
                        f"turn {turn.name} has no message: pass -m MESSAGE", code="no-message"
                    )
                send({"event": "turn_started", "turn": turn.name, "message": text})
                _plan(turn, text, guarded, config, send)
            recording = _Recording(chat)
            outcome = _execute(turn, approver, recording, config, progress)
        except LimitReached as exc:
            return stop(exc.reason, exc.message)
        except KeyboardInterrupt:
            return stop("interrupted", "interrupted (Ctrl-C)")
        rounds += 1
        message = None
        if outcome.status is None:
            reason = "turn_failed" if outcome.refused else "quit"  # refused: nobody to ask
            return stop(reason, outcome.message or "quit: nothing was executed")
        if outcome.validation:
            send(_validation_event(turn, outcome))
            try:
                corrected = _correct(turn, outcome, guarded, config, send)
            except LimitReached as exc:
                return stop(exc.reason, exc.message)
            if corrected is None:
                return stop("turn_failed", "validation failed again after the re-plan attempts")
            turn = corrected
            continue
        send(_finished_event(turn, outcome, spend, rounds))
        if outcome.interrupted:
            return stop("interrupted", "interrupted (Ctrl-C)")
        verdict = _verdict(turn, outcome, recording)
        if verdict is not None:
            return stop(*verdict)
        assert outcome.next_turn is not None
        turn = outcome.next_turn
        message = recording.replies[-1] if recording.replies else CONTINUE


def _saved(turn: Turn) -> str | None:
    from plankit.teddy.planning.turn import saved_message

    return saved_message(turn)


def _plan(turn: Turn, text: str, planner: GuardedPlanner, config: Config, send: Emit) -> None:
    from plankit.teddy.planning.turn import plan_turn

    planned = plan_turn(turn, text, planner, config)
    usage = planned.answer.usage
    send(
        {
            "event": "plan_written",
            "turn": turn.name,
            "plan": str(planned.plan_path),
            "title": planned.plan.title if planned.plan else None,
            "actions": len(planned.plan.actions) if planned.plan else None,
            "parses": planned.plan is not None,
            "model": planned.answer.model,
            "input_tokens": usage.input_tokens if usage else None,
            "output_tokens": usage.output_tokens if usage else None,
            **_totals(planner.spend, None),
        }
    )


def _execute(
    turn: Turn,
    approver: Approver,
    chat: ChatResponder,
    config: Config,
    progress: Callable[[Turn], Progress] | None,
) -> Outcome:
    from plankit.teddy.run.actions import Runtime
    from plankit.teddy.run.execute import execute_turn

    root = turn.session.root
    runtime = Runtime(root, config, chat, progress=progress(turn) if progress else None)
    return execute_turn(turn, approver=approver, chat=chat, config=config, runtime=runtime)


def _correct(
    turn: Turn, outcome: Outcome, planner: GuardedPlanner, config: Config, send: Emit
) -> Turn | None:
    """The re-plan loop with the run's own (guarded) planner; the turn holding the
    corrected plan, or None when the attempts ran out."""
    from plankit.teddy.planning.replan import correct_failed_plan

    def planned(done: Any) -> None:
        send(
            {
                "event": "plan_written",
                "turn": done.turn.name,
                "plan": str(done.plan_path),
                "title": done.plan.title if done.plan else None,
                "replan": True,
                **_totals(planner.spend, None),
            }
        )

    correction = correct_failed_plan(
        turn,
        outcome,
        config,
        model=None,
        manual=False,
        interactive=False,
        planner=planner,
        on_planned=planned,
    )
    result = correction.result
    if result is None or not result.valid:
        return None
    return result.turn


def _verdict(turn: Turn, outcome: Outcome, chat: _Recording) -> tuple[str, str] | None:
    """Why the run stops after this executed turn, or None to go on."""
    from plankit.teddy.format.model import ChatWithUser, Conclude
    from plankit.teddy.run.report import Status

    if outcome.status is Status.SKIPPED:
        return "turn_failed", f"turn {turn.name}'s plan was skipped"
    if outcome.status is not Status.COMPLETED:
        return "turn_failed", f"turn {turn.name} ended {outcome.status}: see its report.md"
    plan = _executed_plan(turn)
    actions = plan.actions if plan is not None else ()
    if any(isinstance(a, Conclude) for a in actions) and turn.meta().caller_turn_id is None:
        return "concluded", f"turn {turn.name} concluded the work"
    asked = any(isinstance(a, ChatWithUser) for a in actions)
    if asked and not chat.replies:
        return "question", f"turn {turn.name} asks you something: answer with teddy run -m …"
    return None


def _executed_plan(turn: Turn) -> Any:
    from plankit.errors import PlanError
    from plankit.teddy.format.parse import parse_plan

    try:
        return parse_plan(turn.plan_path.read_text(encoding="utf-8"))
    except (OSError, PlanError):
        return None


def _validation_event(turn: Turn, outcome: Outcome) -> dict[str, Any]:
    from plankit.errors import diagnostics_json

    errors = diagnostics_json(outcome.validation, turn.rel("plan.md"))
    return {"event": "validation_failed", "turn": turn.name, "errors": errors}


def _finished_event(turn: Turn, outcome: Outcome, spend: Spend, rounds: int) -> dict[str, Any]:
    return {
        "event": "turn_finished",
        "turn": turn.name,
        "status": str(outcome.status),
        "report": str(turn.report_path),
        "next_turn": outcome.next_turn.name if outcome.next_turn else None,
        "interrupted": outcome.interrupted,
        **_totals(spend, rounds),
    }


def _totals(spend: Spend, rounds: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"usage": spend.as_json()}
    if rounds is not None:
        out["turns"] = rounds
    return out
