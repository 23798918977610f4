"""``teddy undo`` in the cases people meet after a turn: a file deleted or edited since,
a turn cut short, copies lost, a link put in the way, another teddy running.

Each refusal is checked by its ``--json`` code as well as its words, and each test
makes sure nothing changed when undo refused.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from plankit.teddy.run import undo as undo_module
from plankit.teddy.run.undo import undo
from tests.clocks import new_york_clock, utc_now
from tests.teddy.test_undo import (
    ORIGINAL,
    create,
    edit,
    execute_cmd,
    git,
    make_project,
    new_session,
    teddy,
    write_plan,
)

FIX = edit("src/app.py", "    return 41", "    return 42")


def refusal(root: Path, *args: str) -> dict[str, object]:
    """The one error of a refused ``teddy undo --json``."""
    result = teddy(root, "undo", "--json", *args, check=1)
    (error,) = json.loads(result.stdout)["errors"]
    assert result.stderr.count("\n") == 1, result.stderr
    return error


def run_turn(root: Path, actions: str, *, context: str = "src/app.py\n") -> Path:
    session = new_session(root, context)
    write_plan(session / "01", actions)
    teddy(root, "execute", "-y")
    return session


def test_a_file_deleted_since_the_turn_is_named_as_gone(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    session = run_turn(root, FIX)
    (root / "src" / "app.py").unlink()
    error = refusal(root)
    assert error["code"] == "changed-since"
    assert error["message"] == (
        "src/app.py was changed after turn 01 ran (it is gone); undo would lose that "
        "change: keep a copy, then `teddy undo --force`"
    )
    assert (session / "01" / "report.md").exists()
    teddy(root, "undo", "--force")
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL


def test_a_file_already_put_back_by_hand_is_not_a_change(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    run_turn(root, FIX + "\n\n" + create("b.py", "y = 2"))
    (root / "src" / "app.py").write_bytes(ORIGINAL)  # the person reverted it already
    (root / "src" / "app.py").chmod(0o751)
    out = json.loads(teddy(root, "undo", "--json").stdout)
    assert out["restored"] == [] and out["removed"] == ["b.py"]
    assert out["checkpoint"].endswith("/01/checkpoint/")


@pytest.mark.parametrize(
    ("created", "named"),
    [
        ([], "src/app.py"),
        (["b.py"], "src/app.py and 1 more"),
        (["b.py", "c.py"], "src/app.py and 2 more"),
    ],
)
def test_a_turn_cut_short_names_the_first_file_and_counts_the_rest(
    tmp_path: Path, created: list[str], named: str
) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, "\n\n".join([FIX, *(create(name, "y = 2") for name in created)]))
    manifest_path = session / "01" / "checkpoint.json"
    data = json.loads(manifest_path.read_text())
    data["sealed"] = False
    for entry in data["entries"]:
        entry["after"] = None
    manifest_path.write_text(json.dumps(data))
    error = refusal(root)
    assert error["code"] == "not-sealed"
    assert error["message"] == (
        "turn 01 was cut short, so what it left in its files is not known; check "
        f"{named}, then `teddy undo --force`"
    )
    assert all((root / name).exists() for name in created)


def test_a_file_edited_since_the_turn_is_named_without_more(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    run_turn(root, FIX)
    (root / "src" / "app.py").write_bytes(b"a person's version\n")
    error = refusal(root)
    assert error["code"] == "changed-since"
    assert error["message"] == (
        "src/app.py was changed after turn 01 ran; undo would lose that change: keep a "
        "copy, then `teddy undo --force`"
    )


def test_undo_from_inside_a_nested_repository_reads_the_projects_checkpoint(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, with_git=True)
    (root / "src" / "app.py").write_bytes(ORIGINAL + b"\n# not committed\n")
    run_turn(root, FIX)
    vendored = root / "vendor" / "lib"  # a library checked out with its own repository
    vendored.mkdir(parents=True)
    git(vendored, "init", "-q", "-b", "main")
    out = json.loads(teddy(vendored, "undo", "--json").stdout)
    assert out["restored"] == ["src/app.py"]
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL + b"\n# not committed\n"


def test_copies_behind_a_symbolic_link_are_not_trusted(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, FIX)
    copies = session / "01" / "checkpoint"
    copies.rename(tmp_path / "moved")
    copies.symlink_to(tmp_path / "moved")
    error = refusal(root)
    assert error["code"] == "checkpoint-gone"
    assert b"return 42" in (root / "src" / "app.py").read_bytes()


@pytest.mark.parametrize("stored", ["0:", ":12", "start:12", None])
def test_a_hand_edited_place_of_the_copies_is_refused(tmp_path: Path, stored: str | None) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, FIX)
    manifest_path = session / "01" / "checkpoint.json"
    data = json.loads(manifest_path.read_text())
    data["entries"][0]["stored"] = stored
    manifest_path.write_text(json.dumps(data))
    error = refusal(root)
    assert error["code"] == "checkpoint-gone"
    assert str(error["message"]).endswith(
        "no longer holds src/app.py as it was; nothing was restored"
    )


def test_a_checkpoint_whose_git_objects_are_gone_is_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    # a change not committed: its bytes are in the checkpoint's commit only
    (root / "src" / "app.py").write_bytes(ORIGINAL + b"\n# work in progress\n")
    session = run_turn(root, FIX + "\n\n" + create("b.py", "y = 2"))
    ref = f"refs/teddy/{session.name}/01"
    git(root, "update-ref", "-d", ref)
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now")
    error = refusal(root, "--force")
    assert error["code"] == "checkpoint-gone"
    assert error["message"].startswith(f"the checkpoint {ref} (commit ")
    assert error["message"].endswith("no longer holds src/app.py as it was; nothing was restored")
    assert (root / "b.py").exists()


def test_a_checkpoint_in_a_repository_that_is_gone_is_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    run_turn(root, FIX)
    shutil.rmtree(root / ".git")
    (root / ".git").write_text("gitdir: /nonexistent/elsewhere\n")
    error = refusal(root)
    assert error["code"] == "checkpoint-gone"
    assert "cannot be read (git " in str(error["message"])
    assert b"return 42" in (root / "src" / "app.py").read_bytes()


def test_copies_missing_from_the_turn_are_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, FIX)
    (session / "01" / "checkpoint" / "preimages.bin").unlink()
    error = refusal(root)
    assert error["code"] == "checkpoint-gone"
    assert error["message"] == (
        f"the checkpoint .teddy/{session.name}/01/checkpoint/ no longer holds src/app.py "
        "as it was; nothing was restored"
    )


def test_a_damaged_manifest_is_refused_with_its_code(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, FIX)
    (session / "01" / "checkpoint.json").write_text('{"version": 1, "kind"', encoding="utf-8")
    error = refusal(root, "--force")
    assert error["code"] == "bad-checkpoint"
    assert "the checkpoint manifest is damaged" in str(error["message"])
    assert (session / "01" / "report.md").exists()


def test_a_manifest_copied_from_another_turn_is_not_used(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, FIX)
    data = json.loads((session / "01" / "checkpoint.json").read_text())
    data["turn"] = "07"
    (session / "01" / "checkpoint.json").write_text(json.dumps(data))
    error = refusal(root)
    assert error["code"] == "no-checkpoint"
    assert str(error["message"]).startswith("turn 01 has no checkpoint")
    out = json.loads(teddy(root, "undo", "--json", "--force").stdout)
    assert out["checkpoint"] is None and out["forced"] is True
    assert b"return 42" in (root / "src" / "app.py").read_bytes()


def test_force_never_writes_through_a_link_put_in_place_of_a_folder(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    run_turn(root, FIX)
    elsewhere = tmp_path / "elsewhere"
    (root / "src").rename(elsewhere)
    (root / "src").symlink_to(elsewhere)
    error = refusal(root)
    assert error["code"] == "changed-since"
    error = refusal(root, "--force")
    assert error["code"] == "path-refused"
    assert error["message"] == (
        "src/app.py: goes through a symbolic link that leads outside the project; refused"
    )
    assert b"return 42" in (elsewhere / "app.py").read_bytes()


def test_a_folder_the_turn_made_stays_when_something_else_is_in_it(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    run_turn(root, create("docs/guide/intro.md", "# Intro"))
    (root / "docs" / "guide" / "mine.md").write_text("a person's notes\n")
    out = json.loads(teddy(root, "undo", "--json").stdout)
    assert out["removed"] == ["docs/guide/intro.md"]
    assert not (root / "docs" / "guide" / "intro.md").exists()
    assert (root / "docs" / "guide" / "mine.md").read_text() == "a person's notes\n"


def test_the_commands_that_ran_are_counted(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    run_turn(root, "\n\n".join([execute_cmd("true"), FIX, execute_cmd("echo two")]))
    result = teddy(root, "undo")
    assert "2 EXECUTE commands ran in that turn; what they changed is not undone" in (result.stderr)
    assert "turn 01 undone (1 restored, 0 removed)" in result.stderr


def test_a_turn_without_a_journal_is_taken_as_run(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, execute_cmd("true") + "\n\n" + FIX)
    (session / "01" / "journal.jsonl").unlink()  # an older plankit wrote none
    (session / "01" / "checkpoint.json").unlink()
    error = refusal(root)
    assert error["code"] == "no-checkpoint"
    out = json.loads(teddy(root, "undo", "--json", "--force").stdout)
    assert out["commands_not_undone"] == 0 and out["later_turns"] == ["02"]


def test_undo_waits_for_no_other_teddy(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, FIX)
    with FileLock(session / ".lock", timeout=0):
        error = refusal(root)
    assert error["code"] == "locked"
    assert error["message"] == (
        f"another teddy command is running on session {session.name}; wait for it to end"
    )
    assert (session / "01" / "report.md").exists()
    teddy(root, "undo")  # the lock was released by the refusal too
    teddy(root, "undo", check=1)


def test_nothing_to_undo_has_its_code(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    new_session(root)
    assert refusal(root)["code"] == "nothing-to-undo"


def test_a_file_the_turn_changed_and_changed_back_is_left_alone(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    back = edit("src/app.py", "    return 42", "    return 41")
    run_turn(root, "\n\n".join([FIX, back, create("b.py", "y = 2")]))
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL
    (root / "src" / "app.py").write_bytes(b"a person's edit, after the turn\n")
    out = json.loads(teddy(root, "undo", "--json").stdout)
    assert out["restored"] == [] and out["removed"] == ["b.py"]
    assert (root / "src" / "app.py").read_bytes() == b"a person's edit, after the turn\n"


def test_a_second_undo_in_a_session_keeps_both_turns_aside(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, FIX)
    first = Path(json.loads(teddy(root, "undo", "--json").stdout)["moved_to"])
    teddy(root, "execute", "-y")  # the same plan again
    second = Path(json.loads(teddy(root, "undo", "--json").stdout)["moved_to"])
    assert first != second and first.parent == second.parent == session / ".undone"
    for aside in (first, second):
        assert re.fullmatch(r"01-\d{8}T\d{12}Z", aside.name), aside.name
        assert (aside / "report.md").is_file() and (aside / "turns" / "02").is_dir()
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL


def test_a_journal_whose_plan_no_longer_parses_is_taken_as_run(tmp_path: Path) -> None:
    # a journal written by another plankit version, whose plan this one cannot read
    root = make_project(tmp_path, with_git=False)
    session = run_turn(root, execute_cmd("true") + "\n\n" + FIX)
    journal = session / "01" / "journal.jsonl"
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    for entry in lines:
        if entry["event"] == "begin":
            entry["plan"] = "no plan here"
    journal.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    (session / "01" / "checkpoint.json").unlink()
    error = refusal(root)
    assert error["code"] == "no-checkpoint"
    assert error["message"] == (
        "turn 01 has no checkpoint (it ran with execute.checkpoint: false or before "
        "checkpoints existed), so its files cannot be restored; `teddy undo --force` "
        "returns the session to its plan and leaves the files as they are"
    )
    out = json.loads(teddy(root, "undo", "--json", "--force").stdout)
    assert (out["session"], out["turn"]) == (session.name, "01")
    assert out["commands_not_undone"] == 0


def test_a_plan_that_failed_validation_ran_no_command(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = new_session(root)
    write_plan(session / "01", execute_cmd("touch ran.txt") + "\n\n" + create("src/app.py", "x"))
    teddy(root, "execute", "-y", "--no-replan", check=1)
    result = teddy(root, "undo", "--json")
    out = json.loads(result.stdout)
    assert out["commands_not_undone"] == 0 and out["checkpoint"] is None
    assert "EXECUTE" not in result.stderr and not (root / "ran.txt").exists()


def test_undo_takes_back_the_named_session_not_the_latest(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    first = run_turn(root, FIX)
    later = Path(teddy(root, "new", "other").stdout.strip())
    (later / "01" / "turn.context").write_text("keep.txt\n", encoding="utf-8")
    write_plan(later / "01", create("notes.txt", "later session"))
    teddy(root, "execute", "-y", "--session", later.name)
    out = json.loads(teddy(root, "undo", "--json", "--session", first.name).stdout)
    assert (out["session"], out["restored"]) == (first.name, ["src/app.py"])
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL
    assert (root / "notes.txt").read_text() == "later session\n"
    assert (later / "01" / "report.md").exists()


def test_the_folder_an_undone_turn_goes_to_is_named_in_utc_on_a_clock_that_is_not(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, with_git=False)
    run_turn(root, FIX)
    with new_york_clock():
        before = utc_now()
        done = undo(root)
        after = dt.datetime.now(dt.UTC)
    stamp = done.moved_to.name.removeprefix("01-")
    taken = dt.datetime.strptime(stamp, "%Y%m%dT%H%M%S%fZ").replace(tzinfo=dt.UTC)
    assert before <= taken <= after


def test_a_link_swapped_in_while_the_mode_is_put_back_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another program replaces src/app.py by a link to a file outside the project
    # after undo checked the path and before it opened the file to put its mode back:
    # the file outside keeps its own mode
    root = make_project(tmp_path, with_git=False)
    run_turn(root, "\n\n".join([FIX, execute_cmd("chmod 600 src/app.py")]))
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's\n", encoding="utf-8")
    outside.chmod(0o640)
    written: list[str] = []
    real_write, real_resolve = undo_module.write_inside, undo_module.resolve

    def write_inside(where: Path, path: str, data: bytes) -> None:
        real_write(where, path, data)
        written.append(path)

    def resolve(where: Path, path: str) -> Path:
        real = real_resolve(where, path)
        if written == [path] == ["src/app.py"]:
            written.append("swapped")
            real.unlink()
            real.symlink_to(outside)
        return real

    monkeypatch.setattr(undo_module, "write_inside", write_inside)
    monkeypatch.setattr(undo_module, "resolve", resolve)
    with pytest.raises(OSError, match="symbolic links") as refused:
        undo(root)
    assert refused.value.errno == errno.ELOOP
    assert written == ["src/app.py", "swapped"]
    assert outside.stat().st_mode & 0o7777 == 0o640
    assert outside.read_text(encoding="utf-8") == "someone else's\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can read a file of mode 000")
def test_a_file_of_mode_000_gets_that_mode_back(tmp_path: Path) -> None:
    # root keeps a secret at mode 000 (as /etc/shadow is on some systems); a turn edits
    # it and a command opens it up: undo closes it again
    root = make_project(tmp_path, with_git=False)
    secret = root / "shadow"
    secret.write_text("root:!:19000::::::\n", encoding="utf-8")
    secret.chmod(0o000)
    turn = edit("shadow", "root:!:", "root:*:")
    run_turn(root, "\n\n".join([turn, execute_cmd("chmod 644 shadow")]), context="shadow\n")
    assert secret.stat().st_mode & 0o7777 == 0o644
    teddy(root, "undo")
    assert secret.read_text(encoding="utf-8") == "root:!:19000::::::\n"
    assert secret.stat().st_mode & 0o7777 == 0o000
