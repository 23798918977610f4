"""The repairs of a turn's plan that changed what an action does, for report.md and the
re-plan feedback.

``teddy plan`` keeps a model's answer as ``answer.md`` when making it a plan changed
it.  The changes that alter an action (a fence lengthened or inserted, a remark taken
off a closing fence's line: :attr:`~plankit.teddy.format.changes.Change.touches_action`)
are read again from it, as long as ``plan.md`` is still what the answer gave (a plan
edited since is the person's, and its repairs no longer apply).
"""

from __future__ import annotations

from pathlib import Path


def action_repairs(answer: Path, plan: Path) -> tuple[str, ...]:
    """One line per repair of ``answer`` that changed what an action of ``plan`` does:
    ``answer.md line N: what was done``; none when there is no answer file, or the plan
    is no longer what the answer gave."""
    if not answer.is_file():  # before the imports: most turns have no answer kept
        return ()
    from plankit.errors import InputError
    from plankit.teddy.format.answer import answer_to_plan
    from plankit.textio import read_text

    try:
        made = answer_to_plan(read_text(answer).text)
        current = read_text(plan).text
    except InputError:
        return ()
    # read_text has taken off any byte-order mark: only line endings at the end differ
    if made.text.rstrip("\n") != current.rstrip("\n"):
        return ()
    return tuple(
        f"{answer.name} line {c.line}: {c.message}" for c in made.changes if c.touches_action
    )
