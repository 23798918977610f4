"""``teddy acp``'s re-plan loop: the one ``teddy execute`` runs, shown to the client.

When a prompt's plan fails validation, :func:`replan_in_acp` runs
:func:`plankit.teddy.planning.replan.correct_failed_plan` (the model named by
``teddy acp --model``, ``TEDDY_MODEL`` or config.yaml, else the one that wrote the
plan; at most ``replan.max_attempts`` plans).  Each attempt is shown to the client as
it comes: the model's answer streamed as message chunks (as the first plan's is), a
message, and the new plan as a ``plan`` update.  ``session/cancel`` stops a model
still writing (:func:`plankit.acp.planning.streamed`).  A corrected plan that
passes validation is then executed like any prompt's plan, its actions as tool calls;
when the attempts run out, the turn ends with the last errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from plankit.teddy.planning.turn import Planned
    from plankit.teddy.run.outcome import Outcome
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import Turn


def replan_in_acp(
    failed: Turn,
    outcome: Outcome,
    config: Config,
    *,
    model: str | None,
    send: Callable[[Mapping[str, Any]], None],
    execute: Callable[[Turn], str],
    cancel: asyncio.Event | None = None,
) -> str | None:
    """Re-plan ``failed`` after its validation failure (worker thread): ``send`` shows
    each attempt to the client, ``execute`` runs a corrected turn and says how it went.
    The message that ends the prompt, or None when there is no planner to use (the
    caller then ends with the errors)."""
    from plankit.acp.entries import plan_update, teddy_entries
    from plankit.acp.planning import streamed
    from plankit.acp.updates import message_update
    from plankit.errors import InputError
    from plankit.teddy.planning.replan import choose_replanner, correct_failed_plan

    attempts = 0

    def started(name: str, limit: int) -> None:
        send(
            message_update(
                f"The plan failed validation: re-planning with {name}, at most {limit} "
                f"attempt{'s' * (limit != 1)}."
            )
        )

    def planned(done: Planned) -> None:
        nonlocal attempts
        attempts += 1
        if done.plan is None:
            problem = done.problems[0] if done.problems else "it does not parse"
            send(message_update(f"Attempt {attempts} (turn {done.turn.name}): {problem}"))
            return
        entries = teddy_entries(done.plan)
        send(plan_update(entries, kind="teddy", title=done.plan.title, attempt=attempts))
        send(
            message_update(
                f"Attempt {attempts} (turn {done.turn.name}): “{done.plan.title}”; validating it."
            )
        )

    try:
        planner = choose_replanner(
            failed, model=model, manual=False, config=config, interactive=False
        )
        if planner is not None:
            planner = streamed(planner, lambda chunk: send(message_update(chunk)), cancel)
        correction = correct_failed_plan(
            failed,
            outcome,
            config,
            model=model,
            manual=False,
            interactive=False,
            on_start=started,
            on_planned=planned,
            planner=planner,
        )
    except InputError as exc:
        if cancel is not None and cancel.is_set():
            return f"Turn {failed.name}'s plan failed validation; re-planning was cancelled."
        send(message_update(f"No automatic re-plan: {exc}"))
        return None
    result = correction.result
    if result is None:
        return None
    if not result.valid:
        errors = (
            result.turn.file("message.md")
            .read_text(encoding="utf-8")
            .partition("## Validation Errors:\n")[2]
            .partition("\n\n## Original Faulty Plan:")[0]
        )
        turns = ", ".join(result.failed_turns)
        return (
            f"Validation Failed 🔴: the plan was not run, and {result.attempts} automatic "
            f"re-plan{'s' * (result.attempts != 1)} failed validation too (turns {turns}); "
            f"the last errors:\n{errors}\n\nTurn {result.turn.name}'s message.md holds them."
        )
    if cancel is not None and cancel.is_set():
        return f"Turn {result.turn.name} has a corrected plan that passes validation; not run."
    count = result.attempts
    return (
        f"Re-planned in turn {result.turn.name} after {count} attempt{'s' * (count != 1)}. "
        + execute(result.turn)
    )
