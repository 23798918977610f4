"""A prompt's plan executed as one TeDDy turn of ``teddy acp`` (worker thread).

:class:`TurnExecution` writes the plan into the session's current turn and runs
:func:`plankit.teddy.run.execute.execute_turn` on it, with a :class:`~.turn.TurnRun`
as its runtime hooks (tool calls, permission requests, the plan's statuses); a plan
that fails validation is re-planned as ``teddy execute`` does (:mod:`.replan`) and
the corrected plan run the same way.  Everything it says to the client goes through
the event loop of the connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from plankit.acp.sessions import Silent, summary
from plankit.acp.turn import ClientCaps, SessionState, TurnRun
from plankit.acp.updates import send_update, thought_update

if TYPE_CHECKING:
    from plankit.teddy.run.outcome import Outcome
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import Turn

log = logging.getLogger("plankit.acp")


def send_from_thread(
    conn: Any,
    gone: asyncio.Event,
    session_id: str,
    loop: asyncio.AbstractEventLoop,
    update: Mapping[str, Any],
) -> None:
    """Send one ``session/update`` from a worker thread (nothing once the client is
    gone; a failed send is logged)."""
    if gone.is_set():
        return
    try:
        coro = send_update(conn, session_id, update)
        asyncio.run_coroutine_threadsafe(coro, loop).result()
    except (ConnectionError, OSError) as exc:
        log.warning("an update could not be sent: %s", exc)


class TurnExecution:
    """One prompt's plan, executed (see the module documentation)."""

    def __init__(
        self,
        conn: Any,
        caps: ClientCaps,
        gone: asyncio.Event,
        model: str | None,
        state: SessionState,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.conn = conn
        self.caps = caps
        self.gone = gone
        self.model = model
        """``teddy acp --model``, for re-planning."""
        self.state = state
        self.loop = loop

    def send(self, update: Mapping[str, Any]) -> None:
        send_from_thread(self.conn, self.gone, self.state.session_id, self.loop, update)

    def run(self, text: str) -> str:
        """Write the plan into the current turn and execute it; after a validation
        failure, re-plan as ``teddy execute`` does and run the corrected plan.  The
        message that ends the prompt."""
        from plankit.teddy.format.answer import answer_to_plan, repairs_note
        from plankit.teddy.session.config import load_config
        from plankit.teddy.session.layout import find_session
        from plankit.textio import write_text_atomic

        state = self.state
        config = load_config(state.root)
        turn = find_session(state.root, state.session_id).latest()
        made = answer_to_plan(text)  # as teddy plan makes a model's answer a plan
        if made.problems:
            return repairs_note("The plan reads two ways, so nothing ran", made.problems)
        text = made.text
        write_text_atomic(turn.plan_path, text if text.endswith("\n") else text + "\n")
        outcome, run = self.execute(turn, config)
        cancelled = state.cancel is not None and state.cancel.is_set()
        if outcome.validation and outcome.next_turn is not None and not cancelled:
            from plankit.acp.replan import replan_in_acp

            def run_turn(target: Turn) -> str:
                done, shown = self.execute(target, config)
                return summary(done, shown, target.rel("report.md"))

            ended = replan_in_acp(
                turn,
                outcome,
                config,
                model=self.model,
                send=self.send,
                execute=run_turn,
                cancel=state.cancel,
            )
            if ended is not None:
                return ended
        told = summary(outcome, run, turn.rel("report.md"))
        if made.changes:
            told = repairs_note("The plan was repaired before it ran", made.changes) + "\n\n" + told
        return told

    def execute(self, turn: Turn, config: Config) -> tuple[Outcome, TurnRun | None]:
        """Execute the plan.md of ``turn``, its actions shown as tool calls."""
        from plankit.errors import PlanError
        from plankit.teddy.format.parse import parse_plan
        from plankit.teddy.run.actions import Runtime
        from plankit.teddy.run.approval import AutoApprover
        from plankit.teddy.run.execute import execute_turn

        state = self.state
        text = turn.plan_path.read_text(encoding="utf-8", errors="replace")
        try:
            plan = parse_plan(text)
        except PlanError:
            plan = None
        run: TurnRun | None = None
        if plan is not None:
            run = TurnRun(
                conn=self.conn,
                loop=self.loop,
                state=state,
                plan=plan,
                caps=self.caps,
                label=f"turn-{turn.name}",
                gone=self.gone,
            )
            if plan.rationale.strip():
                run.send(thought_update(plan.rationale.strip()))
            run.send_plan()
            runtime = Runtime(
                state.root,
                config,
                run,
                files=run.files,
                run=run.runner,
                progress=run,
                permit=run.permit,
            )
        else:
            runtime = None
        outcome = execute_turn(
            turn,
            approver=AutoApprover(),
            chat=run if run is not None else Silent(),
            config=config,
            runtime=runtime,
        )
        if run is not None:
            run.finish_unrun("the plan did not pass validation")
        return outcome, run
