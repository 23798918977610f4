"""Running a plan: validation, edits, actions, the shell runner, reports, the turn
transition, and the approval contract that ``review/`` implements."""
