"""The control plane as a library: sessions, threads, removal, clearing, commits, topics."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.model import PlanDirError
from plankit.agentflow.records import ControlError

from .helpers import copy_example, task, write, write_plan


def state(home: Path) -> tuple[list[str], list[tuple[str, bytes]]]:
    """Everything the control plane keeps: the database rows and every file under plans/."""
    with sqlite3.connect(home / "agentflow.db") as conn:
        rows = list(conn.iterdump())
    files = sorted(
        (str(p.relative_to(home)), p.read_bytes() if p.is_file() else b"<dir>")
        for p in (home / "plans").rglob("*")
    )
    return rows, files


@pytest.fixture
def control(home: Path) -> ControlPlane:
    return ControlPlane()


def test_start_session_allocates_the_current_directory_under_home(
    control: ControlPlane, home: Path
) -> None:
    context = control.start_session("agent-abc")
    assert control.home == str(home.resolve())
    assert context.current.plan_dir == str(home.resolve() / "plans" / context.session.session_id)
    assert Path(context.current.plan_dir).is_dir()
    assert context.current.current and context.current.thread_id.startswith("thread_")
    assert context.additional == ()
    assert context.environment() == {
        "AGENTFLOW_SESSION_ID": context.session.session_id,
        "AGENTFLOW_HOME": str(home.resolve()),
    }
    assert context.session.agent_session_id == "agent-abc"


def test_an_agent_session_id_cannot_start_two_sessions(control: ControlPlane, home: Path) -> None:
    first = control.start_session("agent-abc")
    before = state(home)
    with pytest.raises(ControlError) as info:
        control.start_session("agent-abc")
    assert info.value.rule == "session-exists"
    assert first.session.session_id in info.value.message
    assert state(home) == before


def test_the_session_is_found_by_internal_or_agent_id(control: ControlPlane) -> None:
    context = control.start_session("agent-abc")
    assert control.context("agent-abc").session.session_id == context.session.session_id
    assert control.context(context.session.session_id).current == context.current


def test_missing_and_unknown_sessions_are_clear_errors(control: ControlPlane) -> None:
    with pytest.raises(ControlError) as info:
        control.plan_dir()
    assert info.value.rule == "session-missing"
    assert "AGENTFLOW_SESSION_ID is not set" in info.value.message
    with pytest.raises(ControlError) as info:
        control.plan_dir("no-such-session")
    assert info.value.rule == "session-unknown"


def test_the_session_comes_from_the_environment(
    control: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = control.start_session()
    monkeypatch.setenv("AGENTFLOW_SESSION_ID", context.session.session_id)
    assert control.plan_dir().plan_dir == context.current.plan_dir


def test_requested_threads_are_distinct_and_listed_on_resume(control: ControlPlane) -> None:
    sid = control.start_session().session.session_id
    extra = [control.request_thread_dir(sid) for _ in range(3)]
    ids = {t.thread_id for t in extra} | {control.plan_dir(sid).thread_id}
    dirs = {t.plan_dir for t in extra} | {control.plan_dir(sid).plan_dir}
    assert len(ids) == len(dirs) == 4
    assert all(Path(t.plan_dir).is_dir() and not t.current for t in extra)
    resumed = ControlPlane().context(sid)
    assert [t.thread_id for t in resumed.additional] == [t.thread_id for t in extra]


def test_removing_the_current_thread_fails_and_changes_nothing(
    control: ControlPlane, home: Path
) -> None:
    context = control.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    control.request_thread_dir(sid)
    before = state(home)
    with pytest.raises(ControlError) as info:
        control.remove_thread(context.current.thread_id, sid)
    assert info.value.rule == "thread-current"
    assert "clear-current" in info.value.message
    assert state(home) == before


@pytest.mark.parametrize("thread_id", ["thread_999", "", "x" * 500, "thread_1; DROP TABLE threads"])
def test_removing_an_unknown_thread_fails_and_changes_nothing(
    control: ControlPlane, home: Path, thread_id: str
) -> None:
    sid = control.start_session().session.session_id
    control.request_thread_dir(sid)
    before = state(home)
    with pytest.raises(ControlError) as info:
        control.remove_thread(thread_id, sid)
    assert info.value.rule == "thread-unknown"
    assert state(home) == before


def test_a_thread_of_another_session_is_unknown(control: ControlPlane) -> None:
    mine = control.start_session().session.session_id
    theirs = control.start_session().session.session_id
    other = control.request_thread_dir(theirs)
    with pytest.raises(ControlError) as info:
        control.remove_thread(other.thread_id, mine)
    assert info.value.rule == "thread-unknown"
    assert Path(other.plan_dir).is_dir()


def test_remove_thread_deletes_the_directory_and_leaves_the_commit(control: ControlPlane) -> None:
    context = control.start_session()
    sid = context.session.session_id
    copy_example(Path(context.current.plan_dir))
    extra = control.request_thread_dir(sid)
    write(Path(extra.plan_dir) / "plan.md", "not a plan")  # invalid: would fail the commit
    removed = control.remove_thread(extra.thread_id, sid)
    assert removed.removed_at is not None
    assert not os.path.exists(extra.plan_dir)
    assert control.context(sid).additional == ()
    record = control.commit(sid)
    assert [t.thread_id for t in record.threads] == [context.current.thread_id]
    with pytest.raises(ControlError) as info:
        control.remove_thread(extra.thread_id, sid)
    assert info.value.rule == "thread-removed"


def test_clear_current_empties_the_directory_but_keeps_it(control: ControlPlane) -> None:
    context = control.start_session()
    directory = Path(context.current.plan_dir)
    copy_example(directory)
    outside = directory.parent.parent.parent / "outside.txt"
    outside.write_text("keep me")
    (directory / "tasks" / "link.md").symlink_to(outside)
    thread, removed = control.clear_current(context.session.session_id)
    assert thread.thread_id == context.current.thread_id
    assert removed == 5  # plan.md, three tasks, the link
    assert [p.name for p in directory.iterdir()] == ["tasks"]  # ready for the next tasks
    assert list((directory / "tasks").iterdir()) == []
    assert outside.read_text() == "keep me"


def test_a_plan_directory_replaced_by_a_symlink_is_never_followed(
    control: ControlPlane, tmp_path: Path
) -> None:
    context = control.start_session()
    victim = tmp_path / "victim"
    write(victim / "plan.md", "precious")
    directory = Path(context.current.plan_dir)
    shutil.rmtree(directory)
    directory.symlink_to(victim, target_is_directory=True)
    for action in (control.clear_current, control.commit):
        with pytest.raises(ControlError) as info:
            action(context.session.session_id)
        assert info.value.rule == "plan-dir-unsafe"
    assert (victim / "plan.md").read_text() == "precious"


def test_commit_validates_all_threads_and_records_nothing_on_failure(
    control: ControlPlane, home: Path
) -> None:
    context = control.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a", ["missing"])})
    extra = control.request_thread_dir(sid)
    write_plan(Path(extra.plan_dir), title="", tasks={"01-b.md": task("b")})
    before = state(home)
    with pytest.raises(PlanDirError) as info:
        control.commit(sid)
    assert sorted(p.code for p in info.value.problems) == ["depends-unknown", "title-empty"]
    assert {Path(p.file).parts[-3 if "tasks" in p.file else -2] for p in info.value.problems} == {
        Path(context.current.plan_dir).name,
        Path(extra.plan_dir).name,
    }
    assert state(home) == before
    with pytest.raises(ControlError) as none:
        control.show(sid)
    assert none.value.rule == "commit-none"


def test_commit_records_a_snapshot_that_show_returns(control: ControlPlane) -> None:
    context = control.start_session()
    sid = context.session.session_id
    directory = copy_example(Path(context.current.plan_dir))
    extra = control.request_thread_dir(sid)
    write_plan(
        Path(extra.plan_dir), title="Docs", tasks={"01-a.md": task("a"), "02-b.md": task("b")}
    )
    first = control.commit(sid)
    assert (first.number, len(first.threads), first.task_count) == (1, 2, 5)
    (directory / "tasks" / "03-wire-handler.md").unlink()
    second = control.commit(sid)
    assert (second.number, second.task_count) == (2, 4)
    assert control.show(sid) == second
    assert control.show(sid, 1) == first
    assert first.threads[0].plan.task("implement-service").agent == "claude-code"
    with pytest.raises(ControlError) as info:
        control.show(sid, 3)
    assert info.value.rule == "commit-unknown"
    assert "commits 1 to 2" in info.value.message
    summary = control.sessions()[0]
    assert (summary.commits, summary.threads) == (2, 2)


def test_an_empty_current_directory_is_skipped_when_another_thread_has_a_plan(
    control: ControlPlane,
) -> None:
    context = control.start_session()
    sid = context.session.session_id
    with pytest.raises(PlanDirError) as info:
        control.commit(sid)
    assert [p.code for p in info.value.problems] == ["plan-missing"]
    assert "nothing to commit" in info.value.problems[0].message
    extra = control.request_thread_dir(sid)
    with pytest.raises(PlanDirError) as info:
        control.commit(sid)
    assert len(info.value.problems) == 2
    assert any(
        "remove-thread --thread-id " + extra.thread_id in p.message for p in info.value.problems
    )
    write_plan(Path(extra.plan_dir), tasks={"01-a.md": task("a")})
    record = control.commit(sid)
    assert [t.thread_id for t in record.threads] == [extra.thread_id]
    assert record.skipped == (context.current.thread_id,)


@pytest.mark.parametrize(
    ("topic", "message"),
    [
        ("x" * 101, "101 characters"),
        ("", "empty"),
        ("   ", "empty"),
        ("two\nlines", "one line"),
        ("bell\x07", "one line"),
    ],
)
def test_bad_topics_are_refused(control: ControlPlane, topic: str, message: str) -> None:
    sid = control.start_session().session.session_id
    with pytest.raises(ControlError) as info:
        control.set_topic(topic, sid)
    assert info.value.rule == "topic-invalid"
    assert message in info.value.message
    assert control.context(sid).session.topic is None


def test_a_topic_of_100_characters_is_kept(control: ControlPlane) -> None:
    sid = control.start_session().session.session_id
    assert control.set_topic("  " + "é" * 100 + " ", sid).topic == "é" * 100
    assert control.context(sid).session.topic == "é" * 100
    assert control.set_topic("Auth\tand   API", sid).topic == "Auth and API"


def test_a_corrupt_database_is_a_clear_error(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "agentflow.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ControlError) as info:
        ControlPlane().start_session()
    assert info.value.rule == "state-unusable"
    assert "agentflow.db" in info.value.message


def test_a_home_that_is_a_file_is_a_clear_error(home: Path) -> None:
    home.write_text("not a directory")
    with pytest.raises(ControlError) as info:
        ControlPlane().start_session()
    assert info.value.rule == "state-unusable"
