"""agentflow plan directories on the board (plankit.board.agentflow_view), written by
hand: task states from ``state.json`` or from the session that owns the directory, files
that cannot be read, and the dependency graph with its critical path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plankit.board.agentflow_view import detail, graph_layout, summary, text

REL = "plans/auth"


def _task(tid: str, depends: list[str]) -> str:
    return f"---\nid: {tid}\ndepends_on: [{', '.join(depends)}]\n---\n\nDo {tid}.\n"


def _plan_dir(root: Path, title: str | None = "Add user authentication") -> Path:
    path = root / "plans" / "auth"
    (path / "tasks").mkdir(parents=True)
    head = f'---\ntitle: "{title}"\n---\n' if title is not None else "---\nowner: me\n---\n"
    (path / "plan.md").write_text(head + "\nAdd JWT authentication to the API.\n")
    (path / "tasks" / "01-create-schema.md").write_text(_task("create-schema", []))
    (path / "tasks" / "02-implement-service.md").write_text(
        _task("implement-service", ["create-schema"])
    )
    (path / "tasks" / "03-wire-handler.md").write_text(_task("wire-handler", ["implement-service"]))
    return path


def test_states_beside_the_plan_give_its_progress_and_status(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    (path / "state.json").write_text('{"create-schema": "done", "implement-service": "claimed"}')
    found = summary(path, REL)
    assert found["title"] == "Add user authentication"
    assert (found["progress"], found["status"], found["state"]) == (
        {"done": 1, "total": 3},
        "1 doing",
        "doing",
    )
    assert "owner_session" not in found
    (path / "state.json").write_text(
        '{"create-schema": "done", "implement-service": "failed", "wire-handler": "blocked"}'
    )
    assert summary(path, REL)["status"] == "1 failed, 1 blocked"
    (path / "state.json").write_text(
        '{"create-schema": "done", "implement-service": "done", "wire-handler": "done"}'
    )
    found = summary(path, REL)
    assert (found["progress"], found["status"], found["state"]) == (
        {"done": 3, "total": 3},
        "done",
        "done",
    )


def test_the_owning_sessions_states_win_over_state_json(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    (path / "state.json").write_text('{"create-schema": "done"}')
    tracked = (
        "s-42",
        {"create-schema": "done", "implement-service": "in_progress", "wire-handler": "waiting"},
    )
    found = summary(path, REL, tracked)
    assert (found["progress"], found["status"], found["owner_session"]) == (
        {"done": 1, "total": 3},
        "1 doing",
        "s-42",
    )
    page = detail(path, REL, tracked)
    assert [(n["id"], n["state"], n["native"]) for n in page["graph"]["nodes"]] == [
        ("create-schema", "done", "done"),
        ("implement-service", "doing", "in_progress"),
        ("wire-handler", "waiting", "waiting"),
    ]


def test_a_state_json_that_is_not_a_mapping_of_states_is_no_state(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    for broken in ('["create-schema"]', '{"create-schema": "do', ""):
        (path / "state.json").write_text(broken)
        found = summary(path, REL)
        assert (found["progress"], found["status"], found["state"]) == (
            {"done": 0, "total": 3},
            None,
            "todo",
        )
    (path / "state.json").write_text('{"create-schema": 1}')
    assert summary(path, REL)["progress"] == {"done": 0, "total": 3}  # 1 is not "done"


def test_a_plan_without_a_title_is_named_after_its_folder(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path, title=None)
    assert summary(path, REL)["title"] == "auth"
    (path / "plan.md").write_text("---\ntitle: [unclosed\n")
    assert summary(path, REL)["title"] == "auth"
    (path / "plan.md").write_text("No front matter at all.\n")
    assert summary(path, REL)["title"] == "auth"


def test_updated_is_the_latest_change_among_plan_and_tasks(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    for i, file in enumerate([path, path / "plan.md", *sorted((path / "tasks").iterdir())]):
        os.utime(file, (1_700_000_000 + i, 1_700_000_000 + i))
    os.utime(path / "tasks" / "02-implement-service.md", (1_764_150_764, 1_764_150_764))
    assert summary(path, REL)["updated"] == "2025-11-26T09:52:44Z"
    os.utime(path / "plan.md", (1_764_160_000, 1_764_160_000))  # the plan edited last
    assert summary(path, REL)["updated"] == "2025-11-26T12:26:40Z"


def test_a_plan_md_that_is_a_fifo_is_said(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    (path / "plan.md").unlink()
    os.mkfifo(path / "plan.md")
    assert summary(path, REL)["status"].startswith("not shown: plan.md is a named pipe (FIFO)")


def test_the_history_text_is_the_plan_and_each_task_file(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    (path / "tasks" / "notes.txt").write_text("not a task\n")
    assert text(path) == "\n".join(
        [
            (path / "plan.md").read_text(),
            "--- 01-create-schema.md\n" + _task("create-schema", []),
            "--- 02-implement-service.md\n" + _task("implement-service", ["create-schema"]),
            "--- 03-wire-handler.md\n" + _task("wire-handler", ["implement-service"]),
        ]
    )


def test_an_empty_task_file_adds_only_its_name_to_the_history_text(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    (path / "tasks" / "04-write-docs.md").write_text("")  # created, not written yet
    (path / "plan.md").unlink()
    assert text(path).split("\n--- ")[0] == ""
    assert text(path).endswith("\n--- 04-write-docs.md\n")


def test_a_plan_directory_removed_after_the_walk_is_named_from_the_root(tmp_path: Path) -> None:
    path = tmp_path / "plans" / "gone"
    page = detail(path, "plans/gone")
    assert page["plan"] is None
    assert [(e["code"], e["file"]) for e in page["errors"]] == [("plan-missing", "plans/gone")]


def test_problems_name_files_from_the_root_and_state_json_refusals_are_said(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    (path / "tasks" / "02-implement-service.md").write_text("---\nid: [\n")
    os.mkfifo(path / "state.json")
    page = detail(path, REL)
    assert page["plan"] is None and page["graph"] is None
    files = [e["file"] for e in page["errors"]]
    assert "plans/auth/tasks/02-implement-service.md" in files and "plans/auth/state.json" in files
    owned = detail(path, REL, ("s-1", {}))
    assert "plans/auth/state.json" not in [e["file"] for e in owned["errors"]]


def test_a_good_plans_page_has_its_path_and_graph(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    page = detail(path, REL)
    assert page["errors"] == [] and page["plan"]["path"] == REL
    assert page["graph"]["critical_path"] == ["create-schema", "implement-service", "wire-handler"]
    assert [n["native"] for n in page["graph"]["nodes"]] == ["pending"] * 3


def test_the_critical_path_is_the_longest_chain_of_dependencies() -> None:
    plan = {
        "tasks": [
            {"id": "schema", "depends_on": []},
            {"id": "docs", "depends_on": []},
            {"id": "store", "depends_on": ["schema"]},
            {"id": "api", "depends_on": ["schema"]},
            {"id": "handler", "depends_on": ["api", "store"]},
            {"id": "release", "depends_on": ["docs", "handler"]},
        ],
        "waves": [["schema", "docs"], ["store", "api"], ["handler"], ["release"]],
    }
    graph = graph_layout(plan, {"schema": "done", "store": "claimed"})
    assert graph["critical_path"] == ["schema", "api", "handler", "release"]
    assert [(n["id"], n["x"], n["y"], n["state"]) for n in graph["nodes"]] == [
        ("schema", 0, 0, "done"),
        ("docs", 0, 1, "todo"),
        ("store", 1, 0, "doing"),
        ("api", 1, 1, "todo"),
        ("handler", 2, 0, "todo"),
        ("release", 3, 0, "todo"),
    ]
    critical = {(e["from"], e["to"]) for e in graph["edges"] if e["critical"]}
    assert critical == {("schema", "api"), ("api", "handler"), ("handler", "release")}
    assert len(graph["edges"]) == 6


def test_of_chains_of_equal_length_the_first_found_is_critical() -> None:
    plan = {
        "tasks": [
            {"id": "a", "depends_on": []},
            {"id": "c", "depends_on": []},
            {"id": "b", "depends_on": ["a"]},
            {"id": "d", "depends_on": ["c"]},
        ],
        "waves": [["a", "c"], ["b", "d"]],
    }
    assert graph_layout(plan, {})["critical_path"] == ["a", "b"]
    assert graph_layout({"tasks": [], "waves": []}, {}) == {
        "nodes": [],
        "edges": [],
        "critical_path": [],
    }


def test_a_title_is_read_from_a_plan_saved_with_windows_line_endings(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    (path / "plan.md").write_bytes(
        b'---\r\ntitle: "Add user authentication"\r\n---\r\n\r\nAdd JWT.\r\n'
    )
    assert summary(path, REL)["title"] == "Add user authentication"
    for odd in ('title: ""', "title: [a, b]", "owner: me"):
        (path / "plan.md").write_text(f"---\n{odd}\n---\n")
        assert summary(path, REL)["title"] == "auth", odd


def test_a_plan_directory_whose_tasks_folder_went_away(tmp_path: Path) -> None:
    path = _plan_dir(tmp_path)
    for task in (path / "tasks").iterdir():
        task.unlink()
    (path / "tasks").rmdir()
    found = summary(path, REL)
    assert (found["progress"], found["state"]) == ({"done": 0, "total": 0}, "todo")
    assert text(path) == (path / "plan.md").read_text()


def test_a_validator_failure_is_an_error_on_the_page_not_a_500(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plankit.agentflow import validate

    def broken(path: str) -> object:
        raise OSError(5, "Input/output error")

    path = _plan_dir(tmp_path)
    monkeypatch.setattr(validate, "check_dir", broken)
    assert detail(path, REL) == {
        "errors": [
            {
                "code": "unreadable",
                "message": "[Errno 5] Input/output error",
                "line": None,
                "file": REL,
            }
        ],
        "plan": None,
        "graph": None,
    }
