"""agentctl and the MCP tools report failures through one mapping (problems_of), and
print each problem in the shared diagnostic shape."""

from __future__ import annotations

from plankit.agentflow.model import PlanDirError, problem
from plankit.agentflow.records import ControlError, problems_of
from plankit.errors import InputError


def test_each_kind_of_failure_becomes_problems() -> None:
    refused = ControlError("thread-current", "the current thread cannot be removed")
    assert problems_of(refused) == [
        problem("", None, "thread-current", "the current thread cannot be removed")
    ]
    invalid = PlanDirError([problem("b.md", 2, "id-format", "m"), problem("a.md", None, "x", "m")])
    assert [p.file for p in problems_of(invalid) or []] == ["a.md", "b.md"]
    bad_input = InputError("not UTF-8 text", code="not-utf8", path="plan.md", line=4)
    assert problems_of(bad_input) == [problem("plan.md", 4, "not-utf8", "not UTF-8 text")]
    denied = PermissionError(13, "Permission denied", "/plans/thread_1")
    assert problems_of(denied) == [
        problem("/plans/thread_1", None, "io-error", "Permission denied")
    ]
    assert problems_of(ValueError("a bug")) is None


def test_a_problem_prints_in_the_shared_shape() -> None:
    assert problem("tasks/01-a.md", 3, "depends-unknown", "m").to_json() == {
        "code": "depends-unknown",
        "message": "m",
        "line": 3,
        "file": "tasks/01-a.md",
    }
    assert problem("", None, "session-missing", "m").to_json() == {
        "code": "session-missing",
        "message": "m",
        "line": None,
        "file": None,
    }
