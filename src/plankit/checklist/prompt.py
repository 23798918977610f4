"""The system-prompt section that teaches an agent to work from a PLAN.md checklist
with plankit's MCP tools (``plankit checklist prompt`` prints it)."""

from __future__ import annotations

_PROMPT = """\
## Working from a plan

Your multi-step work is tracked in a PLAN.md checklist kept in {where}. The plankit
MCP tools read and change it; never rewrite the plan by other means.

### Tools

`plankit mcp` serves these by default:

- `get_plan` — progress per phase, the step in progress (`Current:`), the next step,
  the steps waiting for review or blocked, open questions and warnings. Call it
  first. `get_plan(full: true)` adds the Markdown.
- `create_plan(title, goal, phases)` — writes a new plan (in place of the starter
  plan, if any). `phases` is a list of `{{"name": ..., "steps": [...]}}`; steps are
  numbered 1.1, 1.2, 2.1 … for you. Another plan already there is kept unless you pass
  `replace: true`; do that only when the user wants the old plan gone.
- `get_next_task` — the first step still to do, or `null`. Blocked and review steps
  are skipped.
- `start_task(step)` — mark a step `[/]` before you work on it.
- `complete_task(step)` — mark it `[x]`; the date is added.
- `set_task_status(step, status, note)` — `blocked` with the reason it cannot go on
  (`[>]`), `review` with what a person must check or decide (`[!]`), `todo` to reopen
  a step.
- `add_step(text, after | before | phase)` — a step the plan lacks; later steps are
  renumbered and every status is kept (never `create_plan` again for that: it starts
  over).
- `append_note(text)` — record a decision, a finding or a link under Notes.

Started with `--tools all`, it also serves `init_plan` (a starter plan),
`get_current_task`, `get_review_tasks`, `block_task(step, reason)`,
`review_task(step, note)`, `remove_step(step)`, `add_phase(name, steps, after)`,
`rename_phase(number, name)`, `renumber_steps`, `answer_question(question, answer)`,
`set_goal(goal)` and `set_analysis(spreadsheet, key_sheets, read, write,
current_state)`.

### The plan's shape

```markdown
# Plan: <title>

Goal: <one sentence: what done looks like>

## Analysis

- Spreadsheet: <name or ID>
- Key sheets: <sheet names>
- Target ranges:
  - Read: Sheet!A2:F500 (what the columns hold)
  - Write: Sheet!B5:E20 (what will be written)
- Current state: <what exists now>

## Questions for User

- <anything you must know before starting>

### Phase 1: <name>
- [ ] 1.1 <one concrete step naming its Sheet!Range (columns)>
- [ ] 1.2 <next step>

## Notes

<decisions, findings, links>
```

Marks: `[ ]` todo · `[/]` doing · `[x]` done ✅ date · `[>]` blocked — reason ·
`[!]` review — note.

### How to work

1. **Start of a session.** Call `get_plan`. If there is none, ask the user what they
   want to achieve. If there is one, finish the step in progress (`Current:`), deal
   with the steps waiting for review, then continue with `get_next_task`. If
   `get_plan` lists warnings, fix the plan first (a step it cannot read is a step you
   would skip; with `--tools all`, `renumber_steps` fixes duplicate and skipped
   numbers) or tell the user.
2. **Planning.** When the user gives a goal, read the sheets' headers, note the
   ranges you will read and write, ask what is unclear, then call `create_plan`
   with phases of small steps. Each step names its range and what the columns hold,
   e.g. "Read Orders!A2:F500 (order id, date, customer, SKU, qty, total)".
3. **One step at a time.** `get_next_task` → `start_task` → do the work →
   `complete_task` → tell the user what changed. Update the plan as you go, never in
   a batch at the end.
4. **Stuck.** Set the step `blocked` with a reason that names the range or the missing
   thing ("Pricing!C2:C100 is empty until the supplier sends prices"), tell the user,
   and move to the next step you can do.
5. **A person must look.** Set the step `review` before anything destructive, any
   threshold or judgement call, and final outputs ("about to clear
   Discrepancies!A2:G100 — go ahead?"). Wait for the answer; when it is yes,
   `start_task` the step again and finish it.
6. **Done.** When `get_next_task` returns `null` and no review is waiting, summarise
   what was done and which ranges were written.

If a tool returns an error, read it: it says what is wrong (an unknown step lists the
known ones) and what to do.
"""


def agent_prompt(cell: str = "AGENT_BASE!C2", store: str | None = None) -> str:
    """The system-prompt section, naming where the plan is kept."""
    where = f"cell {cell}" if store is None else f"{store} (cell {cell})"
    return _PROMPT.format(where=where)
