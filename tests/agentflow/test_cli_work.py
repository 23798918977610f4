"""agentctl task, plan show with states, plan graph, session end and gc, through click."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from plankit.agentflow.cli import cli
from plankit.agentflow.control import ControlPlane

from .helpers import copy_example, task, write_plan


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def ok(*args: str) -> dict[str, object]:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


@pytest.fixture
def committed(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session with the spec's example committed; its id in the environment."""
    data = ok("session", "start")
    monkeypatch.setenv("AGENTFLOW_SESSION_ID", str(data["session_id"]))
    directory = copy_example(Path(str(data["plan_dir"])))
    assert run("plan", "commit").exit_code == 0
    return directory


def test_claim_done_fail_release_heartbeat(committed: Path) -> None:
    claimed = ok("task", "claim", "--agent", "w1", "--lease", "2m")
    assert claimed["remaining"] == 3
    item = claimed["task"]
    assert isinstance(item, dict)
    assert (item["ref"], item["holder"]) == ("thread_1/create-schema", "w1")
    assert item["file"] == "tasks/01-create-schema.md" and item["plan_dir"] == str(committed)
    assert ok("task", "claim") == {"task": None, "remaining": 3}
    beat = ok("task", "heartbeat", str(item["ref"]), "--claim", str(item["claim"]))
    assert beat["lease_expires_at"] > str(item["lease_expires_at"])  # 10 minutes by default
    assert ok("task", "done", str(item["ref"]), "--claim", str(item["claim"]))["state"] == "done"
    text = run("task", "claim", "--agent", "claude-code").stdout
    assert text.startswith("claimed thread_1/implement-service (claim ")
    assert f"file: {committed}/tasks/02-implement-service.md" in text
    assert "2 tasks with work left" in text
    result = run("task", "fail", "implement-service", "--reason", "tests are red")
    assert result.stdout == "thread_1/implement-service is failed: tests are red\n"
    shown = run("plan", "show").stdout
    assert "Progress: 0 waiting, 0 ready, 0 claimed, 1 done, 1 failed, 1 blocked" in shown
    assert "    failed   implement-service [claude-code]  tests are red" in shown
    assert "    blocked  wire-handler" in shown and "ready now: (none)" in shown
    assert run("task", "release", "implement-service").stdout == (
        "thread_1/implement-service is ready\n"
    )
    assert "ready now: implement-service" in run("plan", "show").stdout
    assert run("task", "claim").stdout.startswith("claimed thread_1/implement-service")


def test_task_errors_are_one_line_or_json(committed: Path) -> None:
    result = run("task", "done", "wire-handler")
    assert result.exit_code == 1
    assert result.stderr == (
        "agentctl: cannot finish thread_1/wire-handler: it is waiting (its dependencies are "
        "not done yet); finish applies to a task that is claimed or ready\n"
    )
    result = run("task", "done", "nope", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"][0]["code"] == "task-unknown"
    result = run("task", "fail", "create-schema")
    assert result.exit_code == 2 and "--reason" in result.stderr
    result = run("task", "claim", "--lease", "soon")
    assert result.exit_code == 2 and "'soon' is not a duration" in result.stderr
    result = run("task", "claim", "--lease", "9d", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"][0]["code"] == "lease-invalid"


def test_plan_show_json_has_states_and_the_real_ready_set(committed: Path) -> None:
    claimed = ok("task", "claim")["task"]
    assert isinstance(claimed, dict)
    ok("task", "done", str(claimed["ref"]))
    data = ok("plan", "show")
    assert data["tracked"] is True
    assert data["progress"] == {
        "waiting": 1,
        "ready": 1,
        "claimed": 0,
        "done": 1,
        "failed": 0,
        "blocked": 0,
    }
    plan = data["threads"][0]["plan"]  # type: ignore[index]
    assert plan["ready"] == ["implement-service"]
    assert [(t["id"], t["state"]) for t in plan["tasks"]] == [
        ("create-schema", "done"),
        ("implement-service", "ready"),
        ("wire-handler", "waiting"),
    ]
    run("plan", "commit")
    older = ok("plan", "show", "--commit", "1")
    assert older["tracked"] is False and "progress" not in older


def test_plan_graph_mermaid_and_dot(committed: Path) -> None:
    claimed = ok("task", "claim")["task"]
    assert isinstance(claimed, dict)
    ok("task", "done", str(claimed["ref"]))
    mermaid = run("plan", "graph").stdout
    assert mermaid.splitlines()[0] == "flowchart TD"
    assert '  subgraph th0["thread_1: Add user authentication"]' in mermaid
    assert '    t0_0["create-schema<br/>done"]:::done' in mermaid
    assert "  t0_0 --> t0_1" in mermaid and "  t0_1 --> t0_2" in mermaid
    assert "  classDef done fill:#c8e6c9,stroke:#2e7d32" in mermaid
    dot = run("plan", "graph", "--format", "dot").stdout
    assert dot.startswith("digraph agentflow {") and dot.endswith("}\n")
    assert '"thread_1/create-schema" -> "thread_1/implement-service";' in dot
    assert '[label="implement-service\\nready", fillcolor="#bbdefb"' in dot
    data = ok("plan", "graph", "--format", "dot")
    assert data["graph"] == dot and data["commit"] == 1
    assert run("plan", "graph", "--format", "svg").exit_code == 2


def test_plan_graph_escapes_titles(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = ok("session", "start")
    monkeypatch.setenv("AGENTFLOW_SESSION_ID", str(data["session_id"]))
    directory = write_plan(Path(str(data["plan_dir"])), tasks={"01-a.md": task("a")})
    (directory / "plan.md").write_text(
        "---\ntitle: 'Break \"it\" <b>#1</b> & \\\\ end'\n---\n\nX\n", encoding="utf-8"
    )
    assert run("plan", "commit").exit_code == 0
    mermaid = run("plan", "graph").stdout
    title_line = mermaid.splitlines()[1]
    assert '"' not in title_line.split('["', 1)[1].rsplit('"]', 1)[0]
    assert "#34;it#34; #60;b#62;#35;1#60;/b#62; #38;" in title_line
    dot = run("plan", "graph", "--format", "dot").stdout
    assert 'label="thread_1: Break \\"it\\" <b>#1</b> & \\\\\\\\ end";' in dot


def test_session_end_and_gc(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = ok("session", "start")
    keep = ok("session", "start")
    extra = json.loads(
        run("plan", "request-thread-dir", "--session", str(keep["session_id"])).stdout
    )
    run("plan", "remove-thread", "--thread-id", extra["thread_id"], "--session",
        str(keep["session_id"]))  # fmt: skip
    Path(extra["plan_dir"]).mkdir()  # as a removal killed before it deleted the directory
    (home / "plans" / ".removed-leftover").mkdir()
    ended = ok("session", "end", "--session", str(old["session_id"]))
    assert ended["ended_at"] is not None
    again = ok("session", "end", "--session", str(old["session_id"]))
    assert again["ended_at"] == ended["ended_at"]
    result = run("plan", "request-thread-dir", "--session", str(old["session_id"]))
    assert result.exit_code == 1 and "ended at" in result.stderr
    leftover = str(home.resolve() / "plans" / ".removed-leftover")
    assert ok("gc", "--older-than", "1")["deleted"] == [extra["plan_dir"], leftover]
    assert Path(str(old["plan_dir"])).is_dir()  # ended less than a day ago
    dry = ok("gc", "--older-than", "0", "--dry-run")
    assert dry["deleted"] == [old["plan_dir"]] and Path(str(old["plan_dir"])).is_dir()
    result = run("gc", "--older-than", "0")
    assert result.stdout == f"deleted {old['plan_dir']}\n"
    assert "deleted 1 directory (1 ended session)" in result.stderr
    assert not Path(str(old["plan_dir"])).exists()
    assert Path(str(keep["plan_dir"])).is_dir()
    assert run("gc", "--older-than", "-1").exit_code == 2
    assert run("gc").exit_code == 2
    sessions = ok("session", "list")["sessions"]
    assert isinstance(sessions, list) and len(sessions) == 2
    by_id = {row["session_id"]: row for row in sessions}
    assert by_id[old["session_id"]]["ended_at"] == ended["ended_at"]
    assert by_id[keep["session_id"]]["ended_at"] is None
    assert by_id[keep["session_id"]]["threads"] == 1
    assert {row["host"] for row in sessions} == {ControlPlane().host}


def test_a_database_of_the_first_schema_is_migrated(home: Path) -> None:
    # the first release's schema, with a session and a commit, as it wrote them
    plane = ControlPlane()
    context = plane.start_session("agent-1")
    copy_example(Path(context.current.plan_dir))
    record = plane.commit(context.session.session_id)
    db = home / "agentflow.db"
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM task_deps")
        conn.execute("DROP TABLE task_deps")
        conn.execute("DROP TABLE tasks")
        conn.execute("DROP TABLE schema_version")
        conn.execute("ALTER TABLE sessions DROP COLUMN ended_at")
        conn.execute("ALTER TABLE sessions DROP COLUMN host")
        conn.execute("PRAGMA user_version = 1")
    shown, statuses = ControlPlane().progress("agent-1")
    assert shown == record
    assert statuses is not None and [s.state for s in statuses] == ["ready", "waiting", "waiting"]
    with sqlite3.connect(db) as conn:
        assert [row[0] for row in conn.execute("SELECT version FROM schema_version")] == [1, 2, 3]
        assert conn.execute("PRAGMA user_version").fetchone() == (3,)
        conn.execute("INSERT INTO schema_version VALUES (4, 'later')")
    result = run("session", "list")
    assert result.exit_code == 1
    assert "was written by a newer plankit (schema 4, this one knows 3)" in result.stderr


def test_claim_says_when_the_ready_task_is_reserved_for_another_agent(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = ok("session", "start")
    monkeypatch.setenv("AGENTFLOW_SESSION_ID", str(data["session_id"]))
    write_plan(
        Path(str(data["plan_dir"])),
        tasks={
            "01-load-data.md": "---\nid: load-data\nagent: worker-1\n---\n\nLoad the data.\n",
            "02-report.md": "---\nid: report\ndepends_on: [load-data]\n---\n\nReport.\n",
        },
    )
    assert run("plan", "commit").exit_code == 0, run("plan", "validate").output
    refused = run("task", "claim", "--agent", "worker-2")
    assert refused.exit_code == 0
    assert refused.stdout == (
        "nothing to claim now (2 tasks with work left; 1 ready task is reserved for another "
        "agent: thread_1/load-data for worker-1)\n"
    )
    assert ok("task", "claim", "--agent", "worker-2") == {
        "task": None,
        "remaining": 2,
        "reserved": [{"ref": "thread_1/load-data", "agent": "worker-1"}],
    }
    claimed = ok("task", "claim", "--agent", "worker-1")["task"]
    assert isinstance(claimed, dict) and claimed["ref"] == "thread_1/load-data"
