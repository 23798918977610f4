"""Validation of plan directories: every rule, every error, all at once.

Rules (each :class:`~plankit.agentflow.model.Problem` names one):

=====================  ==============================================================
``plan-missing``       the directory has no ``plan.md`` (or does not exist)
``plan-frontmatter``   ``plan.md`` has no front matter, invalid or unsafe YAML, or a
                       ``title`` that is not text
``title-empty``        ``title`` is missing, null or blank
``task-frontmatter``   a task file has no front matter, invalid or unsafe YAML, a
                       missing ``id`` or a field of the wrong type
``unknown-field``      a front matter field the format does not define
``id-duplicate``       two tasks of one plan share an id
``id-format``          an id is not kebab-case (``^[a-z0-9]+(-[a-z0-9]+)*$``)
``depends-unknown``    ``depends_on`` names an id no task of the plan has
``depends-cycle``      tasks depend on each other in a cycle (or a task on itself)
``sort-index-duplicate``  two task files share their ``NN`` prefix
``body-empty``         a task has no description after its front matter
``filename``           a file in ``tasks/`` is not named ``NN-slug.md``
``symlink-outside``    a plan file is a symlink leading out of the plan directory
``file-unreadable``    a plan file is not a readable UTF-8 text file
=====================  ==============================================================
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable

from plankit.agentflow.graph import cycles
from plankit.agentflow.model import Plan, PlanDirError, Problem, Task, problem
from plankit.agentflow.plandir import LoadedDir, LoadedTask, load_dir

ID_FORMAT = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)
"""A task id: kebab-case."""

MAX_SUGGESTIONS = 20
"""Unknown dependencies that get a "did you mean" (the search is costly on big plans)."""


def check_loaded(loaded: LoadedDir) -> tuple[Plan | None, list[Problem]]:
    """Check a loaded directory across its files; the plan when there is no problem."""
    problems = list(loaded.problems)
    if not loaded.exists:
        return None, problems
    if loaded.empty:
        problems.append(
            problem(
                loaded.where("plan.md"),
                None,
                "plan-missing",
                "the plan directory is empty; write plan.md (and tasks/NN-slug.md files)",
            )
        )
        return None, problems
    tasks = sorted(loaded.tasks, key=_order)
    problems += _sort_indices(loaded, tasks)
    problems += _bodies(loaded, tasks)
    problems += _ids(loaded, tasks)
    problems += _dependencies(loaded, tasks)
    if problems or loaded.plan is None or loaded.plan.fields is None:
        return None, problems
    title = loaded.plan.fields.title
    assert title is not None
    plan = Plan(loaded.path, title, loaded.plan.body, tuple(_task(task) for task in tasks))
    return plan, problems


def _order(task: LoadedTask) -> tuple[int, str]:
    """Where a task is listed: by its sort index (a misnamed file's last), then file."""
    index = task.sort_index
    return (100 if index is None else index), task.file


def _task(loaded: LoadedTask) -> Task:
    fields = loaded.fields
    assert fields is not None and fields.id is not None and loaded.body is not None
    assert loaded.sort_index is not None
    return Task(
        id=fields.id,
        sort_index=loaded.sort_index,
        file=loaded.file,
        depends_on=tuple(dep for dep, _ in fields.depends_on),
        agent=fields.agent,
        subtasks=fields.subtasks,
        body=loaded.body,
    )


def _sort_indices(loaded: LoadedDir, tasks: list[LoadedTask]) -> Iterable[Problem]:
    # Every plan of over 100 tasks has these problems (9,900 at 10,000 tasks): the
    # message of each index is written once, when its first duplicate is found.
    first: dict[int, str] = {}
    messages: dict[int, str] = {}
    base = loaded.where("")
    for task in tasks:
        index = task.sort_index
        if index is None:
            continue
        if index not in first:
            first[index] = task.file
            continue
        message = messages.get(index)
        if message is None:
            message = messages[index] = (
                f"sort index {index:02d} is also used by {first[index]}; "
                "give each task file its own NN prefix"
            )
        yield problem(base + task.file, None, "sort-index-duplicate", message)


def _bodies(loaded: LoadedDir, tasks: list[LoadedTask]) -> Iterable[Problem]:
    for task in tasks:
        body = task.body  # blank: what strip() would empty, without stripping a copy
        if body is not None and (not body or body.isspace()):
            yield problem(
                loaded.where(task.file),
                None,
                "body-empty",
                "the task has no description; write what to do and how to tell it is done "
                "after the front matter",
            )


def _ids(loaded: LoadedDir, tasks: list[LoadedTask]) -> Iterable[Problem]:
    first: dict[str, str] = {}
    for task in tasks:
        if task.fields is None or task.fields.id is None:
            continue
        task_id, line = task.fields.id, task.fields.id_line
        if ID_FORMAT.fullmatch(task_id) is None:
            yield problem(
                loaded.where(task.file),
                line,
                "id-format",
                f"id {task_id!r} is not kebab-case (lowercase letters and digits joined by "
                f"single hyphens){_kebab_hint(task_id)}",
            )
        if task_id in first:
            yield problem(
                loaded.where(task.file),
                line,
                "id-duplicate",
                f"id {task_id!r} is already used by {first[task_id]}; ids must be unique "
                "within a plan",
            )
        else:
            first[task_id] = task.file


def _kebab_hint(task_id: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", task_id)
    fixed = re.sub(r"[^a-z0-9]+", "-", spaced.lower()).strip("-")
    return f"; try {fixed!r}" if fixed and ID_FORMAT.fullmatch(fixed) else ""


def _dependencies(loaded: LoadedDir, tasks: list[LoadedTask]) -> Iterable[Problem]:
    known = [task for task in tasks if task.fields is not None and task.fields.id is not None]
    ids = {task.fields.id for task in known if task.fields is not None and task.fields.id}
    # A task whose id could not be read might be the one a dependency names: check
    # dependencies only when every task's id is known.
    complete = len(known) == len(tasks)
    suggestions = 0
    edges: dict[str, list[str]] = {}
    order: list[str] = []
    where: dict[str, list[LoadedTask]] = {}
    for task in known:
        fields = task.fields
        assert fields is not None and fields.id is not None
        tasks_with_id = where.get(fields.id)
        if tasks_with_id is None:
            where[fields.id] = [task]
            order.append(fields.id)
            edges[fields.id] = targets = []
        else:
            tasks_with_id.append(task)
            targets = edges[fields.id]
        depends_on = fields.depends_on
        if not depends_on:
            continue
        named = [dep for dep, _ in depends_on if dep in ids]
        targets += named
        if len(named) == len(depends_on) or not complete:
            continue  # the usual task: every dependency is a task of the plan
        for dep, line in depends_on:
            if dep in ids:
                continue
            hint = ""
            if suggestions < MAX_SUGGESTIONS:
                suggestions += 1
                hint = _close(dep, ids)
            yield problem(
                loaded.where(task.file),
                line,
                "depends-unknown",
                f"depends_on names {dep!r}, which is not the id of a task in this plan{hint}",
            )
    for cycle in cycles(order, edges):
        # With duplicate ids, report the file that holds the edge to the next task.
        task = where[cycle[0]][0]
        at: int | None = None
        for candidate in where[cycle[0]]:
            assert candidate.fields is not None
            found = [ln for dep, ln in candidate.fields.depends_on if dep == cycle[1]]
            if found:
                task, at = candidate, found[0]
                break
        if len(cycle) == 2:
            message = f"task {cycle[0]!r} depends on itself: {cycle[0]} → {cycle[0]}"
        else:
            message = "dependency cycle: " + " → ".join(cycle)
        yield problem(
            loaded.where(task.file),
            at,
            "depends-cycle",
            message + "; remove one of these dependencies",
        )


def _close(word: str, candidates: set[str]) -> str:
    import difflib

    match = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def check_dir(path: str, *, fast: bool = True) -> tuple[Plan | None, list[Problem]]:
    """Load and check the plan directory at ``path``: the plan, or every problem."""
    # Loading builds many small acyclic objects (nodes, fields, problems) that reference
    # counting frees on its own; the cycle collector would only rescan them, a tenth of
    # the time at 10,000 tasks. Its pause ends with the check, whatever happens.
    paused = gc.isenabled()
    gc.disable()
    try:
        return check_loaded(load_dir(path, fast=fast))
    finally:
        if paused:
            gc.enable()


def check_dirs(paths: Iterable[str]) -> tuple[list[Plan], list[Problem]]:
    """Check several directories; the plans of the valid ones and every problem found."""
    plans: list[Plan] = []
    problems: list[Problem] = []
    for path in paths:
        plan, found = check_dir(path)
        if plan is not None:
            plans.append(plan)
        problems += found
    return plans, sorted(problems, key=Problem.by_file)


def load_plan(path: str) -> Plan:
    """The valid plan at ``path``; raises :class:`PlanDirError` with every problem."""
    plan, problems = check_dir(path)
    if plan is None:
        raise PlanDirError(problems)
    return plan
