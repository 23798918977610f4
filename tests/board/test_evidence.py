"""What ``agentctl run`` recorded for each task, on the board: the record written by the
orchestrator's own writer (agentflow.evidence), read through the board's read-only
control-plane source."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.evidence import write_record
from plankit.board.app import create_app
from plankit.board.control import ControlSource
from tests.agentflow.helpers import task, write_plan


def _page(root: Path, plane: ControlPlane, sid: str) -> dict[str, object]:
    root.mkdir(exist_ok=True)
    app = create_app(root, watch=False, sources=(ControlSource(plane.home),))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        page: dict[str, object] = client.get(f"/api/plans/agentflow:@session/{sid}").json()
    return page


def _tasks(page: dict[str, object]) -> dict[str, dict[str, object]]:
    [thread] = page["plans"]  # type: ignore[misc]
    return {t["task_id"]: t for t in thread["tasks"]}


def test_a_tasks_record_shows_its_agents_plan_calls_and_end(
    tmp_path: Path, plane: ControlPlane
) -> None:
    context = plane.start_session(None)
    write_plan(
        Path(context.current.plan_dir),
        title="Greeting",
        tasks={"01-greet.md": task("greet", []), "02-docs.md": task("docs", [])},
    )
    sid = context.session.session_id
    plane.commit(sid)
    claim = plane.claim(sid, agent="worker-1")
    assert claim.task is not None
    ref = claim.task.ref
    before = _tasks(_page(tmp_path / "p", plane, sid))
    assert "evidence" not in before["greet"]  # no run wrote a record: no table, no error

    write_record(plane, sid, ref, claim.task.claim, "running", {"agent": "default"})
    write_record(
        plane,
        sid,
        ref,
        claim.task.claim,
        "done",
        {
            "agent": "default",
            "host": "build-1",
            "stop_reason": "end_turn",
            "merge_commit": "ae4655736d85",
            "files_changed": ["greet.py"],
            "last_message": "Added greet() and ran the tests.",
            "tool_calls": [
                {
                    "id": "c1",
                    "kind": "edit",
                    "title": "CREATE greet.py",
                    "status": "completed",
                    "exit_status": "completed",
                },
                {
                    "id": "c2",
                    "kind": "execute",
                    "title": "python3 -m pytest",
                    "status": "completed",
                    "exit_status": 0,
                },
            ],
            "plan_updates": [
                [{"content": "CREATE greet.py", "status": "in_progress", "priority": "medium"}],
                [
                    {"content": "CREATE greet.py", "status": "completed", "priority": "medium"},
                    {"content": "Run the tests", "status": "completed", "priority": "medium"},
                ],
            ],
        },
    )
    plane.done(ref, sid, claim=claim.task.claim)
    tasks = _tasks(_page(tmp_path / "p", plane, sid))
    shown = tasks["greet"]["evidence"]
    assert tasks["greet"]["state"] == "done"
    assert shown["outcome"] == "done" and shown["attempts"] == 1
    assert shown["stop_reason"] == "end_turn" and shown["merge_commit"] == "ae4655736d85"
    assert shown["files_changed"] == ["greet.py"]
    assert shown["last_message"] == "Added greet() and ran the tests."
    assert [c["exit_status"] for c in shown["tool_calls"]] == ["completed", 0]
    assert [e["content"] for e in shown["plan"]] == ["CREATE greet.py", "Run the tests"]
    assert "evidence" not in tasks["docs"]  # never claimed by a run
