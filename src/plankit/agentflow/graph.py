"""The task dependency graph: cycles (every one, as a path) and waves.

A task that ``depends_on`` another is an edge from it to the other.  :func:`cycles`
first takes away every task whose dependencies can all be met (Kahn's peeling), then
finds the strongly connected components of what is left (Tarjan's algorithm,
iteratively, so a long chain cannot overflow the stack) and names one cycle through
each; a task depending
on itself is a cycle of one.  :func:`waves` groups the tasks of an acyclic plan into
layers: the first holds the tasks with no dependencies, each next one the tasks whose
dependencies are all in earlier layers, so the tasks of a wave can run in parallel.
Both are linear in tasks plus dependencies.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar


class Node(Protocol):
    """What :func:`waves` reads of a task (:class:`plankit.agentflow.model.Task`)."""

    @property
    def id(self) -> str: ...

    @property
    def depends_on(self) -> Sequence[str]: ...


N = TypeVar("N", bound=Node)


def cycles(order: Sequence[str], edges: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """One cycle per strongly connected component that has one, as ``[a, b, …, a]``.

    ``order`` lists the nodes (the order decides where each reported cycle starts:
    at its earliest node); ``edges`` maps a node to the nodes it depends on.
    Edges to nodes not in ``order`` are ignored.
    """
    position = {node: i for i, node in enumerate(order)}
    live = _unsorted(order, edges, position)
    if not live:
        return []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in order:
        if root in index or root not in live:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, next_edge = work[-1]
            if next_edge == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, ())
            advanced = False
            while next_edge < len(targets):
                target = targets[next_edge]
                next_edge += 1
                if target not in live:
                    continue
                if target not in index:
                    work[-1] = (node, next_edge)
                    work.append((target, 0))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(_cycle_in(set(component), edges, position))
    found.sort(key=lambda cycle: position[cycle[0]])
    return found


def _unsorted(
    order: Sequence[str], edges: Mapping[str, Sequence[str]], position: Mapping[str, int]
) -> set[str]:
    """The nodes left when those whose dependencies can all be met are taken away
    (Kahn's peeling): every cycle is among them, and in a plan without one, none is.

    Peeling costs a count and a list per edge, a fraction of Tarjan's bookkeeping, so
    the search for cycles runs only on what is left.
    """
    waiting: dict[str, int] = {}  # a node → its dependencies not taken away yet
    dependents: dict[str, list[str]] = {}
    ready: list[str] = []
    for node in dict.fromkeys(order):  # a node listed twice is counted once
        count = 0
        for target in edges.get(node, ()):
            if target in position:
                count += 1
                if target in dependents:
                    dependents[target].append(node)
                else:
                    dependents[target] = [node]
        if count:
            waiting[node] = count
        else:
            ready.append(node)
    while ready:
        for dependent in dependents.get(ready.pop(), ()):
            left = waiting[dependent] - 1
            if left:
                waiting[dependent] = left
            else:
                del waiting[dependent]
                ready.append(dependent)
    return set(waiting)


def _cycle_in(
    component: set[str], edges: Mapping[str, Sequence[str]], position: dict[str, int]
) -> list[str]:
    """A shortest cycle through the component's earliest node (breadth-first)."""
    start = min(component, key=position.__getitem__)
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in edges.get(node, ()):
            if target not in component:
                continue
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                path.reverse()
                return [*path, start]
            if target not in parent:
                parent[target] = node
                queue.append(target)
    raise AssertionError("a strongly connected component always has a cycle")  # pragma: no cover


def waves(tasks: Sequence[N]) -> list[list[N]]:
    """The tasks in dependency waves, each wave in sort order.

    Dependencies on unknown ids are ignored; tasks on a cycle (an invalid plan) are
    left out.
    """
    by_id = {task.id: task for task in tasks}
    waiting: dict[str, int] = {}
    dependents: dict[str, list[str]] = {}
    for task in tasks:
        known = [dep for dep in task.depends_on if dep in by_id]
        waiting[task.id] = len(known)
        for dep in known:
            dependents.setdefault(dep, []).append(task.id)
    order = {task.id: i for i, task in enumerate(tasks)}
    current = [task.id for task in tasks if waiting[task.id] == 0]
    result: list[list[N]] = []
    while current:
        result.append([by_id[task_id] for task_id in current])
        following: list[str] = []
        for task_id in current:
            for dependent in dependents.get(task_id, ()):
                waiting[dependent] -= 1
                if waiting[dependent] == 0:
                    following.append(dependent)
        following.sort(key=order.__getitem__)
        current = following
    return result
