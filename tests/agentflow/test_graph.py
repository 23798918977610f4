"""Dependency cycles and waves."""

from __future__ import annotations

from plankit.agentflow.graph import cycles, waves
from plankit.agentflow.model import Task


def _tasks(spec: dict[str, list[str]]) -> list[Task]:
    return [
        Task(id=name, sort_index=i, file=f"tasks/{i:02d}-{name}.md", depends_on=tuple(deps))
        for i, (name, deps) in enumerate(spec.items())
    ]


def test_waves_group_tasks_that_can_run_in_parallel() -> None:
    tasks = _tasks({"a": [], "b": [], "c": ["a"], "d": ["a", "b"], "e": ["c", "d"], "f": []})
    assert [[t.id for t in wave] for wave in waves(tasks)] == [["a", "b", "f"], ["c", "d"], ["e"]]


def test_waves_leave_out_tasks_on_a_cycle_and_ignore_unknown_ids() -> None:
    tasks = _tasks({"a": ["zz"], "b": ["c"], "c": ["b"], "d": ["a"]})
    assert [[t.id for t in wave] for wave in waves(tasks)] == [["a"], ["d"]]


def test_cycles_name_each_cycle_from_its_earliest_task() -> None:
    edges = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["d"], "e": ["a"]}
    assert cycles(["a", "b", "c", "d", "e"], edges) == [["a", "b", "c", "a"], ["d", "d"]]
    assert cycles(["c", "b", "a"], edges) == [["c", "a", "b", "c"]]


def test_a_long_chain_needs_no_recursion() -> None:
    n = 50_000
    order = [f"t{i}" for i in range(n)]
    edges = {f"t{i}": [f"t{i + 1}"] for i in range(n - 1)}
    assert cycles(order, edges) == []
    edges[f"t{n - 1}"] = ["t0"]
    (found,) = cycles(order, edges)
    assert len(found) == n + 1 and found[0] == found[-1] == "t0"
    chain = _tasks({f"t{i}": [f"t{i - 1}"] if i else [] for i in range(2000)})
    assert len(waves(chain)) == 2000


def test_a_node_listed_twice_is_one_node() -> None:
    assert cycles(["a", "b", "a"], {"b": ["a"]}) == []
    assert cycles(["b", "a", "a"], {"b": ["a"], "a": ["c"], "c": []}) == []
    (cycle,) = cycles(["a", "b", "a"], {"a": ["b"], "b": ["a"]})
    assert sorted(cycle[:-1]) == ["a", "b"] and cycle[0] == cycle[-1]


def test_a_task_that_waits_on_a_cycle_is_not_on_it() -> None:
    # peeling leaves d (it depends on the cycle b ⇄ c) for the search; only b and c are
    # reported, once
    edges = {"a": [], "b": ["c", "a"], "c": ["b"], "d": ["b", "b"], "e": ["d", "x"]}
    assert cycles(["a", "b", "c", "d", "e"], edges) == [["b", "c", "b"]]
