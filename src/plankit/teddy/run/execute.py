"""``teddy execute``: validate, approve, execute, and prepare the next turn.

The turn transition follows ``teddy-session-workflow.md`` section 6, in order:

1. validation (a failure writes a Validation Failed report and prepares the next turn
   without that report in its context);
2. approval, then execution of the approved actions in plan order (after a failure or
   Ctrl-C the rest are skipped), memo changes applied;
3. the next turn is initialised as a continuation: the prompt and ``turn.context``
   copied, ``meta.yaml`` with ``parent_turn_id`` and the same ``caller_turn_id``;
4. READ adds to the next context, PRUNE removes from it (for actions that ran);
5. INVOKE replaces the context with its handoff resources and the prompt with the
   invoked agent's, and records the caller; CONCLUDE restores the caller's context
   (plus handoff resources) and prompt, and returns to the caller's own caller;
6. ``report.md`` is written and its path appended to the next turn's context.

The next turn is built in a staging directory and renamed into place, so it appears
whole or not at all; a lock on the session refuses a second concurrent execute.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from plankit.errors import Diagnostic
from plankit.syncing import shared_syncs
from plankit.teddy.format.model import Action, Plan
from plankit.teddy.format.render import render_plan
from plankit.teddy.run.actions import Interrupted, Runtime, run_action
from plankit.teddy.run.approval import (
    Approval,
    ApprovalUnavailable,
    Approver,
    ChatResponder,
    Decision,
)
from plankit.teddy.run.batch import after_failure, group_size, run_group
from plankit.teddy.run.journal import NOT_STARTED, PLAN_SKIPPED, Journal
from plankit.teddy.run.outcome import (
    ExecuteError,
    Outcome,
    check_executable,
    load_plan,
    now,
    turn_to_execute,
)
from plankit.teddy.run.recovery import finish_from_journal
from plankit.teddy.run.report import ActionResult, Report, Status, overall_status, render_report
from plankit.teddy.run.transition import prepare_next
from plankit.teddy.run.validate import (
    Workspace,
    describe,
    turn_workspace,
    validate_plan,
)
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import Turn
from plankit.teddy.session.memos import MemoResult, apply_memos, load_memos
from plankit.textio import discard_unfinished, read_text, write_text_atomic

if TYPE_CHECKING:
    from plankit.teddy.run.checkpoint import TurnCheckpoint


def _run(
    plan: Plan,
    approver: Approver,
    runtime: Runtime,
    plan_file: Path | None,
    journal: Journal | None = None,
    checkpoint: TurnCheckpoint | None = None,
) -> tuple[list[ActionResult], tuple[MemoResult, ...], Decision, bool, str]:
    """Approval and execution, told to the ``journal`` (in a session) as it goes; the
    ``checkpoint`` is taken before anything has an effect and sealed after the actions.

    Returns the results, the memo results, the decision, a flag (interrupted; or, when
    the decision is QUIT, whether approval was impossible) and a message.
    """
    try:
        answer = approver.review(plan, plan_file)
    except ApprovalUnavailable as exc:
        return [], (), Decision.QUIT, True, str(exc)
    approval = answer if isinstance(answer, Approval) else Approval(answer)
    decision = approval.decision
    if decision is Decision.QUIT:
        return [], (), decision, False, "quit: nothing was executed"
    actions = approval.actions if approval.actions is not None else plan.actions
    if checkpoint is not None and decision is not Decision.SKIP:
        checkpoint.take(actions, memos=bool(plan.memos))
    if journal is not None:
        journal.begin(render_plan(replace(plan, actions=tuple(actions))), str(decision))
    if decision is Decision.SKIP:
        skipped = [ActionResult(a, False, PLAN_SKIPPED) for a in plan.actions]
        return skipped, (), decision, False, ""
    picked = [
        approval.memos_selected is None or i in approval.memos_selected
        for i in range(len(plan.memos))
    ]
    chosen = [m for m, keep in zip(plan.memos, picked, strict=True) if keep]
    if not chosen:
        applied: list[MemoResult] = []
    elif (runtime.root / ".teddy").is_dir():
        applied = apply_memos(runtime.root, chosen)
    else:
        applied = [MemoResult(m, False, "no .teddy/ workspace in this project") for m in chosen]
    done = iter(applied)
    memo_results = [
        next(done) if keep else MemoResult(m, False, "not selected")
        for m, keep in zip(plan.memos, picked, strict=True)
    ]
    if journal is not None:
        journal.memos(memo_results)
    with _shared_syncs(journal):
        results, interrupted = _run_actions(actions, approval, runtime, journal)
    if interrupted:  # a Ctrl-C between a write's staging and its record of it
        discard_unfinished()
    if checkpoint is not None:
        checkpoint.seal()
    return results, tuple(memo_results), decision, interrupted, ""


def _shared_syncs(journal: Journal | None) -> AbstractContextManager[bool]:
    """The turn's flushes to disk gathered, one per action (:mod:`plankit.syncing`);
    the journal's file system is synced when they begin."""
    fd = journal.descriptor() if journal is not None else None
    return shared_syncs(*(() if fd is None else (fd,)))


def _run_actions(
    actions: Sequence[Action], approval: Approval, runtime: Runtime, journal: Journal | None
) -> tuple[list[ActionResult], bool]:
    results: list[ActionResult] = []
    interrupted = False
    stop_reason: str | None = None
    progress = runtime.progress
    index = 0
    while index < len(actions):
        action = actions[index]
        size = group_size(actions, index, approval, runtime) if stop_reason is None else 0
        if size > 1:  # a run of file writes sharing one flush (plankit.teddy.run.batch)
            indices = range(index, index + size)
            group = run_group(actions, indices, approval, runtime, journal, run_action)
            results += group.results
            index += len(group.results)
            interrupted = group.interrupted
            if interrupted:
                stop_reason = NOT_STARTED
            elif group.failed is not None:
                stop_reason = after_failure(group.failed)
            continue
        if approval.selected is not None and index not in approval.selected:
            result = ActionResult(action, False, "not selected")
        elif stop_reason is not None:
            result = ActionResult(action, True, stop_reason)
        elif runtime.permit is not None and (refusal := runtime.permit(index, action)):
            result = ActionResult(action, False, refusal)
        else:
            if journal is not None:
                journal.start(index, action)
            result, interrupted = _run_one(index, action, approval, runtime)
            if interrupted:
                stop_reason = NOT_STARTED
            elif result.success is False:
                stop_reason = after_failure(action.type)
        if progress is not None and result.success is None:
            progress.finished(index, result)
        if journal is not None:
            journal.finish(index, result)
        results.append(result)
        index += 1
    return results, interrupted


def _run_one(
    index: int, action: Action, approval: Approval, runtime: Runtime
) -> tuple[ActionResult, bool]:
    """Run one action; the flag says whether Ctrl-C interrupted it."""
    progress = runtime.progress
    if progress is not None:
        progress.started(index, action)
    interrupted = False
    try:
        result = run_action(action, runtime)
    except Interrupted as exc:
        result, interrupted = exc.result, True
    if index in approval.modified:
        result = replace(result, modified=approval.modified[index])
    if progress is not None:
        progress.finished(index, result)
    return result, interrupted


def _validation_report(
    plan: Plan | None,
    issues: Sequence[Diagnostic],
    plan_path: str | None,
    start: _dt.datetime,
    notes: tuple[str, ...] = (),
) -> Report:
    return Report(
        title=plan.title if plan else "(unparsable plan)",
        status=Status.VALIDATION_FAILED,
        plan_path=plan_path,
        start=start,
        end=now(),
        rationale=plan.rationale if plan else "",
        validation_errors=tuple(describe(issues)),
        # every action is counted (and none ran): "8 total / 0 approved / 8 skipped"
        results=tuple(ActionResult(a, False, "the plan failed validation") for a in plan.actions)
        if plan
        else (),
        notes=notes,
    )


def _run_report(
    plan: Plan,
    run: tuple[list[ActionResult], tuple[MemoResult, ...], Decision, bool, str],
    plan_path: str | None,
    start: _dt.datetime,
    notes: tuple[str, ...] = (),
) -> Report:
    results, memo_results, decision, interrupted, _ = run
    if decision is Decision.SKIP:
        status = Status.SKIPPED
    else:
        status = overall_status(results, interrupted=interrupted)
    if interrupted:
        notes += ("execution was interrupted (Ctrl-C)",)
    return Report(
        title=plan.title,
        status=status,
        plan_path=plan_path,
        start=start,
        end=now(),
        rationale=plan.rationale,
        memos=memo_results,
        results=tuple(results),
        notes=notes,
    )


def execute_turn(
    turn: Turn,
    *,
    approver: Approver,
    chat: ChatResponder,
    config: Config,
    runtime: Runtime | None = None,
) -> Outcome:
    """Execute the turn's ``plan.md`` (see the module documentation)."""
    from plankit.locking import try_lock

    session = turn.session
    with try_lock(session.path / ".lock") as held:
        if not held:
            raise ExecuteError(
                f"another `teddy execute` is running on session {session.name}; wait for it to end",
                code="locked",
            )
        recovered = finish_from_journal(session.latest())
        if recovered is not None:
            return recovered
        check_executable(turn, session.latest())
        return _execute_locked(turn, approver, chat, config, runtime)


def _repairs(turn: Turn) -> tuple[str, ...]:
    """report.md's notes on the repairs of the model's answer that changed an action."""
    from plankit.teddy.format.repairs import action_repairs

    found = action_repairs(turn.file("answer.md"), turn.plan_path)
    return tuple(f"repaired from the model's answer: {line}" for line in found)


def _execute_locked(
    turn: Turn,
    approver: Approver,
    chat: ChatResponder,
    config: Config,
    runtime: Runtime | None,
) -> Outcome:
    root = turn.session.root
    start = now()
    plan, issues, _ = load_plan(turn.plan_path)
    if plan is not None:
        issues = validate_plan(plan, turn_workspace(turn, config))
    plan_rel = turn.rel("plan.md")
    journal = Journal(turn)
    try:
        if issues:
            journal.validation_failed()
            report = _validation_report(plan, issues, plan_rel, start, _repairs(turn))
            text = render_report(report)
            write_text_atomic(turn.report_path, text)
            journal.reported()
            next_turn = prepare_next(turn, plan, [], None)
            journal.closed(next_turn.name)
            return Outcome(report.status, text, next_turn, validation=tuple(issues))
        assert plan is not None
        rt = runtime or Runtime(root, config, chat)
        if rt.fetch is None:  # a READ's URL is fetched in its turn, cached for input.md
            rt.fetch = _session_fetch(turn)
        from plankit.teddy.run.checkpoint import TurnCheckpoint  # a session's turn only

        checkpoint = TurnCheckpoint(turn, enabled=config.execute_checkpoint)
        try:
            run = _run(plan, approver, rt, turn.plan_path, journal, checkpoint)
            if run[2] is Decision.QUIT:
                return Outcome(None, None, None, run[4], refused=run[3])
            report = _run_report(plan, run, plan_rel, start, _repairs(turn) + checkpoint.notes)
            text = render_report(report)
            write_text_atomic(turn.report_path, text)
            journal.reported()
            next_turn = prepare_next(turn, plan, run[0], turn.rel("report.md"))
            journal.closed(next_turn.name)
        except KeyboardInterrupt:
            # Ctrl-C outside an action (between two, while the report is written …):
            # the journal knows what ran; finish the turn from it, as after a crash.
            journal.close()
            recovered = finish_from_journal(turn)
            if recovered is None:
                raise
            return recovered
        return Outcome(report.status, text, next_turn, interrupted=run[3])
    finally:
        journal.close()


def execute_stateless(
    plan_path: Path,
    root: Path,
    *,
    approver: Approver,
    chat: ChatResponder,
    config: Config,
    runtime: Runtime | None = None,
) -> Outcome:
    """Run a plan that is not part of a session against ``root``; nothing is written but
    what the actions do (and memos.yaml when the project has a ``.teddy/`` directory)."""
    start = now()
    plan, issues, _ = load_plan(plan_path)
    if plan is not None:
        issues = validate_plan(
            plan,
            Workspace(
                root=root,
                memos=tuple(load_memos(root)),
                known_agents=None,
                config=config,
            ),
        )
    try:
        shown: str | None = os.path.relpath(plan_path.resolve(), root.resolve())
    except ValueError:
        shown = None
    if shown is not None and shown.startswith(".."):
        shown = None
    notes = ("stateless mode: no session; the report is printed, not saved",)
    if issues:
        report = _validation_report(plan, issues, shown, start, notes)
        return Outcome(report.status, render_report(report), None, validation=tuple(issues))
    assert plan is not None
    rt = runtime or Runtime(root, config, chat)
    run = _run(plan, approver, rt, plan_path)
    if run[2] is Decision.QUIT:
        return Outcome(None, None, None, run[4], refused=run[3])
    report = _run_report(plan, run, shown, start, notes)
    return Outcome(report.status, render_report(report), None, interrupted=run[3])


def execute_plan(
    root: Path,
    plan: Path | None,
    *,
    session_name: str | None = None,
    approver: Approver,
    chat: ChatResponder,
    config: Config,
    runtime: Runtime | None = None,
) -> tuple[Turn | None, Outcome]:
    """``teddy execute [PLAN]``: which plan runs, and how.

    With no ``plan``: the latest turn of the session (default: the current one).  A
    ``plan.md`` inside ``.teddy/``: that turn (it must be the latest).  Any other file:
    stateless mode against ``root``.  Returns the turn (None in stateless mode) and the
    outcome.
    """
    turn = turn_to_execute(root, plan, session_name)
    if turn is not None:
        outcome = execute_turn(turn, approver=approver, chat=chat, config=config, runtime=runtime)
        return turn, outcome
    assert plan is not None
    read_text(plan)  # a clear error for a missing or unreadable file
    outcome = execute_stateless(
        plan, root, approver=approver, chat=chat, config=config, runtime=runtime
    )
    return None, outcome


def _session_fetch(turn: Turn) -> Callable[[str], str]:
    """URL fetches through the session's cache, which the next ``input.md`` reads."""

    def fetch(url: str) -> str:  # the context builder is imported by a turn that fetches
        from plankit.teddy.context.payload import URL_CACHE
        from plankit.teddy.context.urls import fetch_url

        return fetch_url(url, turn.session.path / URL_CACHE, root=turn.session.root)

    return fetch
