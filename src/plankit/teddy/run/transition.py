"""The next turn (``teddy-session-workflow.md`` section 6, steps 3 to 6).

After a turn's report is written, :func:`prepare_next` initialises the next turn as a
continuation: the prompt and ``turn.context`` copied, ``meta.yaml`` with
``parent_turn_id`` and the same ``caller_turn_id``; READ adds to the next context and
PRUNE removes from it (for actions that ran); INVOKE replaces the context with its
handoff resources and the prompt with the invoked agent's, and records the caller;
CONCLUDE restores the caller's context (plus handoff resources) and prompt; the
report's path is appended.  The turn is built in a staging directory and renamed into
place, so it appears whole or not at all.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from plankit.teddy.format.model import Conclude, Invoke, Plan, Prune, Read
from plankit.teddy.run.report import ActionResult
from plankit.teddy.session.layout import Turn, TurnMeta, turn_name, write_meta
from plankit.teddy.session.prompts import agent_name, get_prompt
from plankit.textio import write_text_atomic


def read_context(path: Path) -> list[str]:
    from plankit.teddy.context.files import read_context_file

    return read_context_file(path)


def write_context(path: Path, entries: Sequence[str]) -> None:
    from plankit.teddy.context.files import write_context_file

    write_context_file(path, entries)


def prepare_next(
    turn: Turn, plan: Plan | None, results: Sequence[ActionResult], report_entry: str | None
) -> Turn:
    """Steps 3-6 of the transition (the report itself is already written)."""
    session = turn.session
    meta = turn.meta()
    name = turn_name(turn.number + 1)
    while (session.path / name).exists():  # a branch copied by hand took the number
        name = turn_name(int(name) + 1)
    staging = session.path / f".next-{name}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    # 3. a continuation of the current turn
    shutil.copyfile(turn.prompt_path, staging / "system_prompt.xml")
    context = read_context(turn.context_path)
    next_meta = TurnMeta(name, turn.name, meta.caller_turn_id, meta.agent)
    ran = [r.action for r in results if r.success]
    # 4. READ adds, PRUNE removes
    for action in ran:
        if isinstance(action, Read) and action.resource.target not in context:
            context.append(action.resource.target)
        elif isinstance(action, Prune) and action.resource.target in context:
            context.remove(action.resource.target)
    # 5. INVOKE and CONCLUDE
    for action in ran:
        if isinstance(action, Invoke):
            context = list(dict.fromkeys(action.handoff_resources))
            prompt = get_prompt(action.agent, session.root)
            write_text_atomic(staging / "system_prompt.xml", prompt)
            next_meta = TurnMeta(name, turn.name, turn.name, agent_name(prompt, action.agent))
        elif isinstance(action, Conclude) and meta.caller_turn_id:
            caller = session.turn(meta.caller_turn_id)
            caller_meta = caller.meta()
            context = read_context(caller.context_path)
            for entry in action.handoff_resources:
                if entry not in context:
                    context.append(entry)
            shutil.copyfile(caller.prompt_path, staging / "system_prompt.xml")
            next_meta = TurnMeta(name, caller.name, caller_meta.caller_turn_id, caller_meta.agent)
    # 6. the report's path
    if report_entry is not None and report_entry not in context:
        context.append(report_entry)
    write_context(staging / "turn.context", context)
    write_meta(staging / "meta.yaml", next_meta)
    os.rename(staging, session.path / name)
    return Turn(session, name)
