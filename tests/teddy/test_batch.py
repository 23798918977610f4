"""Runs of CREATEs and EDITs that share one flush to disk (plankit.teddy.run.batch):
what forms a group, and what a failure, a file that appears, Ctrl-C or a failing flush
in the middle of one leave behind."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit import syncing
from plankit.teddy.format.model import Create, Edit, EditPair, Execute
from plankit.teddy.run import batch
from plankit.teddy.run.actions import EXISTS, LocalFiles, Runtime, run_action
from plankit.teddy.run.approval import Approval, Decision, ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_stateless
from plankit.teddy.run.outcome import Outcome
from plankit.teddy.run.report import ActionResult
from plankit.teddy.session.config import Config
from plankit.textio import StagedWrite
from tests.security.helpers import create, edit
from tests.teddy.test_session_e2e import plan

pytestmark = pytest.mark.skipif(syncing._syncfs() is None, reason="needs syncfs (Linux)")


def run(
    root: Path,
    *actions: str,
    approver: ScriptedApprover | None = None,
    progress: Recorder | None = None,
) -> Outcome:
    (root / "plan.md").write_text(plan("\n\n".join(actions)), encoding="utf-8")
    chat = ScriptedChat([])
    return execute_stateless(
        root / "plan.md",
        root,
        approver=approver or ScriptedApprover(["approve"]),
        chat=chat,
        config=Config(),
        runtime=Runtime(root, Config(), chat, progress=progress),
    )


class Recorder:
    """A live display that writes down what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def started(self, index: int, action: object) -> None:
        self.events.append(("started", index))

    def finished(self, index: int, result: ActionResult) -> None:
        self.events.append(("finished", index))


def summary(outcome: Outcome) -> tuple[str, str]:
    """The report's Actions and Outcomes lines."""
    assert outcome.report is not None
    lines = outcome.report.splitlines()
    actions = next(x for x in lines if x.startswith("- **Actions:** "))
    outcomes = next(x for x in lines if x.startswith("- **Outcomes:** "))
    return actions.removeprefix("- **Actions:** "), outcomes.removeprefix("- **Outcomes:** ")


def sections(outcome: Outcome) -> list[str]:
    assert outcome.report is not None
    return outcome.report.split("## 4. Action Log")[1].split("\n### ")[1:]


def leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp"))


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt here, however the suite was started."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


# --- what forms a group --------------------------------------------------------------


def _size(actions: list, approval: Approval | None = None, **runtime: object) -> int:
    rt = Runtime(Path.cwd(), Config(), ScriptedChat([]), **runtime)  # type: ignore[arg-type]
    with syncing.shared_syncs():
        return batch.group_size(actions, 0, approval or Approval(Decision.APPROVE), rt)


def test_a_run_of_writes_to_distinct_files_is_one_group() -> None:
    replace = (EditPair("a", "b"),)
    writes = [Create("a.txt", "x"), Edit("src/b.py", replace), Create("src/c.py", "y")]
    assert _size(writes) == 3
    assert _size([*writes, Execute("make")]) == 3  # a command ends it
    assert _size([Create("a.txt", "x"), Execute("make"), Create("b.txt", "y")]) == 1


def test_a_second_write_to_the_same_file_starts_a_new_group() -> None:
    replace = (EditPair("a", "b"),)
    assert _size([Create("a.txt", "x"), Edit("a.txt", replace)]) == 1
    assert _size([Create("src/a.py", "x"), Edit("src/./a.py", replace)]) == 1
    assert _size([Create("README.md", "x"), Edit("readme.md", replace)]) == 1
    assert _size([Create("/notes/a.md", "x"), Edit("notes/a.md", replace)]) == 1


def test_files_whose_paths_differ_at_their_start_are_distinct() -> None:
    # only leading slashes are dropped to compare paths: ML/ and XML/ are two folders
    assert _size([Create("ML/README.md", "x"), Create("XML/README.md", "y")]) == 2
    assert _size([Create("XML/README.md", "x"), Create("/ML/README.md", "y")]) == 2


def test_no_group_without_gathered_flushes_a_client_asking_or_another_files() -> None:
    writes = [Create("a.txt", "x"), Create("b.txt", "y")]
    rt = Runtime(Path.cwd(), Config(), ScriptedChat([]))
    approve = Approval(Decision.APPROVE)
    assert batch.group_size(writes, 0, approve, rt) == 0  # outside shared_syncs
    assert _size(writes, permit=lambda index, action: None) == 0
    assert _size(writes, files=_OtherFiles()) == 0
    assert _size(writes, Approval(Decision.APPROVE, selected=frozenset({1}))) == 0
    assert (
        _size(
            [*writes, Create("c.txt", "z")], Approval(Decision.APPROVE, selected=frozenset({0, 2}))
        )
        == 1
    )


class _OtherFiles:
    """Files kept somewhere else than the local disk (an ACP client's, say)."""

    def exists(self, path: Path) -> bool:
        return False

    def read_text(self, path: Path) -> str:
        raise FileNotFoundError(path)

    def write_text(self, path: Path, text: str) -> None:
        pass


def test_a_create_over_a_file_a_client_already_has_fails_and_leaves_it(tmp_path: Path) -> None:
    # an ACP client's files have no exclusive write: the CREATE asks first, then refuses
    texts = {tmp_path / "notes.md": "mine\n"}

    class ClientFiles(_OtherFiles):
        def exists(self, path: Path) -> bool:
            return path in texts

        def write_text(self, path: Path, text: str) -> None:
            texts[path] = text

    rt = Runtime(tmp_path, Config(), ScriptedChat([]), files=ClientFiles())
    result = run_action(Create("notes.md", "theirs"), rt)
    assert (result.success, result.notes) == (False, (EXISTS,))
    assert texts == {tmp_path / "notes.md": "mine\n"}
    assert run_action(Create("new.md", "theirs"), rt).success is True
    assert texts[tmp_path / "new.md"] == "theirs\n"


def test_a_group_holds_at_most_group_max_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "GROUP_MAX", 4)
    assert _size([Create(f"f{i}.txt", "x") for i in range(10)]) == 4


# --- what a group does ---------------------------------------------------------------


def test_a_group_writes_every_file_and_reports_each(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("return 41\n")
    shown = Recorder()
    outcome = run(
        tmp_path,
        create("a.txt", "A"),
        edit("app.py", "41", "42"),
        create("d/b.txt"),
        progress=shown,
    )
    # all three start, then each finishes as its file takes its name
    assert shown.events == [("started", i) for i in range(3)] + [("finished", i) for i in range(3)]
    assert summary(outcome) == ("3 total / 3 approved / 0 skipped", "3 succeeded / 0 failed")
    assert outcome.status is not None and outcome.status.name == "COMPLETED"
    assert (tmp_path / "a.txt").read_text() == "A\n"
    assert (tmp_path / "app.py").read_text() == "return 42\n"
    assert (tmp_path / "d/b.txt").read_text() == "pwned\n"
    found = sections(outcome)
    assert "Wrote 1 line (2 bytes)" in found[0]
    assert "-return 41\n+return 42" in found[1]
    assert leftovers(tmp_path) == []


def test_a_group_opens_the_project_root_once_and_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("return 41\n")
    root = str(tmp_path.resolve())
    opened: list[int] = []
    real_open, real_close = os.open, os.close
    closed: list[int] = []

    def spy_open(path: object, *args: object, **kwargs: object) -> int:
        fd = real_open(path, *args, **kwargs)  # type: ignore[arg-type]
        if os.fspath(path) == root:  # type: ignore[arg-type]
            opened.append(fd)
        return fd

    def spy_close(fd: int) -> None:
        closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "close", spy_close)
    names = ["a.txt", "d/b.txt", "d/e/c.txt", "f.txt"]
    outcome = run(tmp_path, *(create(n, n) for n in names), edit("app.py", "41", "42"))
    monkeypatch.undo()
    assert summary(outcome) == ("5 total / 5 approved / 0 skipped", "5 succeeded / 0 failed")
    assert [(tmp_path / n).read_text() for n in names] == [f"{n}\n" for n in names]
    assert (tmp_path / "app.py").read_text() == "return 42\n"
    # each path walked from one descriptor of the root, held for the group, then let go
    assert len(opened) == 1 and opened[0] in closed


def _open_descriptors() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_create_under_a_file_fails_in_its_group_and_leaves_no_descriptor_open(
    tmp_path: Path,
) -> None:
    class MakesAFile(ScriptedApprover):
        """Another program writes a file `config` while the plan waits for approval
        (validation, before it, refuses a plan that creates under a file)."""

        def review(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            (tmp_path / "config").write_text("debug = true\n")
            return super().review(*args, **kwargs)

    before = _open_descriptors()
    outcome = run(
        tmp_path,
        create("a.txt", "A"),
        create("src/deep/b.txt", "B"),
        create("config/settings.py", "x = 1"),
        create("c.txt"),
        approver=MakesAFile(["approve"]),
    )
    assert _open_descriptors() == before
    found = sections(outcome)
    assert "'config' is a file, not a directory" in found[2]
    assert "skipped after the failure of `CREATE` above" in found[3]
    assert summary(outcome) == ("4 total / 3 approved / 1 skipped", "2 succeeded / 1 failed")
    assert (tmp_path / "a.txt").read_text() == "A\n"
    assert (tmp_path / "src/deep/b.txt").read_text() == "B\n"
    assert (tmp_path / "config").read_text() == "debug = true\n"
    assert not (tmp_path / "c.txt").exists() and leftovers(tmp_path) == []


def test_a_failed_check_publishes_the_writes_before_it_and_skips_the_rest(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text("return 7\n")

    class EditsWhileAsked(ScriptedApprover):
        """The user changes app.py while the plan waits for approval."""

        def review(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            (tmp_path / "app.py").write_text("return 41\n")
            return super().review(*args, **kwargs)

    outcome = run(
        tmp_path,
        create("a.txt"),
        edit("app.py", "return 7", "return 8"),
        create("c.txt"),
        approver=EditsWhileAsked(["approve"]),
    )
    found = sections(outcome)
    assert "Execution:** Success" in found[0]
    assert "the FIND block matches nowhere" in found[1]
    assert "skipped after the failure of `EDIT` above" in found[2]
    assert summary(outcome) == ("3 total / 2 approved / 1 skipped", "1 succeeded / 1 failed")
    assert (tmp_path / "a.txt").is_file() and not (tmp_path / "c.txt").exists()
    assert (tmp_path / "app.py").read_text() == "return 41\n"
    assert leftovers(tmp_path) == []


def test_a_file_that_appears_before_its_create_is_published_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another program writes a.txt after teddy checked that it did not exist
    real = StagedWrite.publish

    def publish(self: StagedWrite) -> None:
        if self.target == "a.txt":
            (tmp_path / "a.txt").write_text("theirs")
        real(self)

    monkeypatch.setattr(StagedWrite, "publish", publish)
    outcome = run(tmp_path, create("first.txt"), create("a.txt"), create("c.txt"))
    found = sections(outcome)
    assert "Execution:** Success" in found[0]
    assert "the file already exists; nothing was written" in found[1]
    # the note says why, and nothing the staged write would have done follows it
    assert found[1].rstrip().endswith("\n- **Note:** the file already exists; nothing was written")
    assert "skipped after the failure of `CREATE` above" in found[2]
    assert summary(outcome) == ("3 total / 2 approved / 1 skipped", "1 succeeded / 1 failed")
    assert (tmp_path / "a.txt").read_text() == "theirs"
    assert not (tmp_path / "c.txt").exists()
    assert leftovers(tmp_path) == []


def test_ctrl_c_while_a_group_is_staged_publishes_none_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ctrl_c: None
) -> None:
    real = LocalFiles.stage_text

    def stage_text(self: LocalFiles, path: Path, text: str, *, exclusive: bool):  # type: ignore[no-untyped-def]
        if path.name == "c.txt":
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C
        return real(self, path, text, exclusive=exclusive)

    monkeypatch.setattr(LocalFiles, "stage_text", stage_text)
    shown = Recorder()
    actions = [create(f"{n}.txt") for n in "abcd"]
    outcome = run(tmp_path, *actions, progress=shown)
    assert outcome.interrupted
    assert shown.events == [
        *[("started", i) for i in range(3)],
        *[("finished", i) for i in range(4)],
    ]
    assert summary(outcome) == ("4 total / 1 approved / 3 skipped", "0 succeeded / 1 failed")
    found = sections(outcome)
    assert all("skipped: execution was interrupted" in s for s in (found[0], found[1], found[3]))
    assert "interrupted" in found[2]
    assert not any((tmp_path / f"{n}.txt").exists() for n in "abcd")
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("staged", [True, False], ids=["in-a-group", "alone"])
def test_ctrl_c_right_after_a_write_is_staged_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ctrl_c: None, staged: bool
) -> None:
    # the signal lands once the temporary file is written and before the action has
    # taken note of it: the interrupted turn discards it
    from plankit import workspace
    from plankit.teddy.run import actions

    real = workspace.stage_inside

    def stage_inside(root: Path, path: str, data: bytes, **options: bool) -> StagedWrite:
        made = real(root, path, data, **options)
        if path.endswith("c.txt"):
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C
        return made

    monkeypatch.setattr(workspace, "stage_inside", stage_inside)
    monkeypatch.setattr(actions, "stage_inside", stage_inside)
    if not staged:
        monkeypatch.setattr(syncing, "gathering", lambda: False)  # each write alone
    outcome = run(tmp_path, *[create(f"{n}.txt") for n in "abcd"])
    assert outcome.interrupted
    assert not (tmp_path / "c.txt").exists() and not (tmp_path / "d.txt").exists()
    assert leftovers(tmp_path) == []


def test_ctrl_c_while_a_group_is_published_waits_for_the_last_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ctrl_c: None
) -> None:
    real = StagedWrite.publish

    def publish(self: StagedWrite) -> None:
        if self.target == "a.txt":
            os.kill(os.getpid(), signal.SIGINT)
        real(self)

    monkeypatch.setattr(StagedWrite, "publish", publish)
    command = "### `EXECUTE`\n```shell\necho ran > ran.txt\n```"
    # another thread, as a client's or a test runner's: the kernel may hand it the signal
    done = threading.Event()
    other = threading.Thread(target=done.wait)
    other.start()
    try:
        outcome = run(tmp_path, create("a.txt"), create("b.txt"), create("c.txt"), command)
    finally:
        done.set()
        other.join()
    assert outcome.interrupted
    assert all((tmp_path / f"{n}.txt").is_file() for n in "abc")
    found = sections(outcome)
    assert all("Execution:** Success" in s for s in found[:3])
    assert "skipped: execution was interrupted" in found[3]
    assert not (tmp_path / "ran.txt").exists()
    assert leftovers(tmp_path) == []


def test_a_flush_that_fails_fails_the_group_before_any_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the disk fails the flush made while the group's new bytes wait to take their names
    monkeypatch.setattr(syncing, "_syncfs", lambda: lambda fd: -1 if leftovers(tmp_path) else 0)
    outcome = run(tmp_path, create("a.txt"), create("b.txt"))
    found = sections(outcome)
    assert "syncfs failed" in found[0]
    assert "skipped after the failure of `CREATE` above" in found[1]
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
    assert leftovers(tmp_path) == []


def test_a_file_turned_into_a_folder_before_its_edit_is_published_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("return 41\n")
    real = StagedWrite.publish

    def publish(self: StagedWrite) -> None:
        if self.target == "app.py":  # another program puts a folder in its place
            (tmp_path / "app.py").unlink()
            (tmp_path / "app.py").mkdir()
        real(self)

    monkeypatch.setattr(StagedWrite, "publish", publish)
    outcome = run(tmp_path, create("a.txt"), edit("app.py", "41", "42"), create("c.txt"))
    found = sections(outcome)
    assert "Execution:** Success" in found[0]
    # the note says why, and nothing the staged write would have done follows it
    assert found[1].rstrip().endswith("\n- **Note:** Is a directory")
    assert "skipped after the failure of `EDIT` above" in found[2]
    assert summary(outcome) == ("3 total / 2 approved / 1 skipped", "1 succeeded / 1 failed")
    assert (tmp_path / "app.py").is_dir() and not (tmp_path / "c.txt").exists()
    assert leftovers(tmp_path) == []
