"""Planning a plain request for ``teddy acp``, with the session's own project settings.

Which model plans is decided per session, when its prompt arrives: ``teddy acp
--model``, else ``TEDDY_MODEL``, else ``model:`` in the ``.teddy/config.yaml`` of the
session's project (the ``cwd`` of ``session/new``, not the directory the agent was
launched in).  No model: the client is told what TeDDy needs.

The turn is planned like ``teddy plan -m TEXT`` (:func:`plankit.teddy.planning.turn.plan_turn`:
context payload, unwrapping, the fence sanitizer, ``plan.md`` saved), and the model's
answer is handed to ``on_chunk`` piece by piece as it arrives, so the client sees it
stream instead of waiting in silence.  Never manual mode: under ACP, stdin is the
protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plankit.teddy.session.layout import Turn


def session_model(root: Path, model: str | None) -> str | None:
    """The model that plans in the project ``root`` (None: none is set).  Raises
    :class:`~plankit.errors.InputError` for a broken config.yaml."""
    from plankit.teddy.planning.models import configured_model
    from plankit.teddy.session.config import load_config

    return configured_model(model, load_config(root).model)


class StreamingPlanner:
    """``(request text, turn) → plan Markdown`` with a model, streaming its answer."""

    def __init__(self, model: str | None, on_chunk: Callable[[str], None]) -> None:
        self.model = model
        self.on_chunk = on_chunk

    def __call__(self, text: str, turn: Turn) -> str:
        from plankit.teddy.planning.models import ModelPlanner
        from plankit.teddy.planning.turn import PlanningError, choose_planner, plan_turn
        from plankit.teddy.session.config import load_config

        config = load_config(turn.session.root)
        planner = choose_planner(
            model=self.model, manual=False, config=config, manual_fallback=False
        )
        if planner is None:
            raise PlanningError(
                "no model is set: start `teddy acp --model NAME`, set TEDDY_MODEL, or put "
                "`model:` in .teddy/config.yaml (or send a TeDDy plan instead)",
                code="no-model",
            )
        if isinstance(planner, ModelPlanner):
            planner.on_chunk = self.on_chunk
        planned = plan_turn(turn, text, planner, config, replace_plan=True)
        return planned.plan_path.read_text(encoding="utf-8")
