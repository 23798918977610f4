"""What a checkpoint keeps, and where, taken on real projects (with git and without).

Each test builds its project in a temporary directory and takes the checkpoint of a
turn with :class:`TurnCheckpoint`, as ``teddy execute`` does before the first action;
what was kept is read back from the manifest and from git.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.teddy.format.model import Create, Edit, EditPair, Execute
from plankit.teddy.run.checkpoint import (
    CheckpointError,
    FileState,
    TurnCheckpoint,
    load_manifest,
    read_state,
)
from plankit.teddy.session.layout import Session, Turn
from tests.clocks import new_york_clock, utc_now
from tests.teddy.test_undo import GIT_ENV, ORIGINAL, git, make_project, new_session

FIX = (EditPair("    return 41", "    return 42"),)


def first_turn(root: Path) -> Turn:
    session = new_session(root)
    return Turn(Session(root, session.name), "01")


def take(turn: Turn, *actions: object, memos: bool = False) -> TurnCheckpoint:
    checkpoint = TurnCheckpoint(turn)
    checkpoint.take(list(actions), memos=memos)  # type: ignore[arg-type]
    return checkpoint


def test_the_manifest_read_back_is_the_one_written(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX), Create("src/new/deep/b.py", "y"), memos=True)
    # what the turn does: the edit, the new file, and a command that made a folder of
    # the memo file's path
    (root / "src" / "app.py").write_bytes(b"changed\n")
    (root / "src" / "new" / "deep").mkdir(parents=True)
    (root / "src" / "new" / "deep" / "b.py").write_text("y\n")
    (root / ".teddy" / "memos.yaml").mkdir()
    checkpoint.seal()
    written = checkpoint.manifest
    assert written is not None and written.sealed and written.kind == "git"
    assert load_manifest(turn) == written
    memos = written.entries[2]
    assert memos.path == ".teddy/memos.yaml" and not memos.before.exists
    assert memos.after == FileState(True, special=True)
    assert written.entries[1].dirs == ("src/new", "src/new/deep")
    assert written.entries[0].after == read_state(root, "src/app.py")[0]
    on_disk = json.loads(turn.file("checkpoint.json").read_text(encoding="utf-8"))
    assert on_disk["version"] == 1 and on_disk["session"] == turn.session.name
    assert on_disk["turn"] == "01" and on_disk["ref"] == written.ref
    assert on_disk["entries"][1]["before"] == {
        "exists": False,
        "mode": 0,
        "sha256": "",
        "special": False,
    }


def test_each_file_the_plan_may_write_is_kept_once_in_plan_order(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    turn = first_turn(root)
    checkpoint = take(
        turn,
        Edit("~/.bashrc", FIX),  # refused when it runs: writes nothing
        Create("./notes//todo.md", "x"),
        Execute("touch elsewhere.txt"),
        Edit("keep.txt", FIX),
        Edit("notes/todo.md", FIX),
        Edit("/etc/passwd", FIX),  # refused when it runs: writes nothing
        Edit("../outside.txt", FIX),
        Create(".", "nothing"),
        memos=True,
    )
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "files"
    assert manifest.fallback == ""  # no repository: nothing to say about git
    assert [e.path for e in manifest.entries] == ["notes/todo.md", "keep.txt", ".teddy/memos.yaml"]
    assert manifest.entries[0].dirs == ("notes",)
    assert manifest.entries[1].before.exists and manifest.entries[1].dirs == ()


def test_a_path_through_a_link_or_onto_a_folder_is_not_kept(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    (root / "linked").symlink_to(tmp_path / "outside")
    (root / "link.txt").symlink_to(root / "keep.txt")
    turn = first_turn(root)
    assert read_state(root, "linked/secret.txt") == (FileState(True, special=True), None)
    assert read_state(root, "src") == (FileState(True, special=True), None)
    assert read_state(root, "nowhere/x.txt") == (FileState(False), None)
    assert read_state(root, "keep.txt/x.txt") == (FileState(False), None)
    checkpoint = take(
        turn,
        Edit("linked/secret.txt", FIX),
        Edit("link.txt", FIX),
        Create("src", "a folder"),
        Edit("src/app.py", FIX),
    )
    assert checkpoint.manifest is not None
    assert [e.path for e in checkpoint.manifest.entries] == ["src/app.py"]
    state = checkpoint.manifest.entries[0].before
    assert (state.exists, state.mode, state.special) == (True, 0o751, False)


def test_the_commit_keeps_modes_and_leaves_out_a_tracked_file_deleted_before_the_turn(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, with_git=True)
    (root / "keep.txt").unlink()  # tracked, deleted by hand; the plan creates it again
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX), Create("keep.txt", "again"))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git" and manifest.ref is not None
    tree = git(root, "ls-tree", "-r", manifest.ref)
    assert tree.split()[:2] == ["100755", "blob"]  # src/app.py is rwxr-x--x
    assert tree.count("\n") == 1 and "src/app.py" in tree
    message = git(root, "log", "-1", "--format=%an <%ae>%n%B", manifest.ref)
    assert message == (
        f"TeDDy <teddy@localhost>\nteddy checkpoint: session {turn.session.name}, turn 01\n\n"
        "The 2 file(s) the turn may change, as they were before it ran;\n"
        "`teddy undo` restores them.\n\n"
    )
    assert git(root, "rev-parse", f"{manifest.ref}^") == git(root, "rev-parse", "HEAD")


def test_a_plain_file_is_kept_as_not_executable(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    (root / "keep.txt").chmod(0o666)  # writable by all (an unzipped archive), runnable by none
    (root / "run.sh").write_text("echo hi\n")
    (root / "run.sh").chmod(0o641)  # runnable by others only: still a program to git
    turn = first_turn(root)
    checkpoint = take(turn, Edit("keep.txt", FIX), Edit("run.sh", FIX))
    assert checkpoint.manifest is not None and checkpoint.manifest.ref is not None
    assert git(root, "ls-tree", checkpoint.manifest.ref, "keep.txt").startswith("100644 blob ")
    assert git(root, "ls-tree", checkpoint.manifest.ref, "run.sh").startswith("100755 blob ")


def test_a_repository_without_a_commit_yet_gets_a_parentless_checkpoint(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    git(root, "init", "-q", "-b", "main")
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX), Create("b.py", "y"))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git" and manifest.fallback == ""
    assert manifest.commit is not None and manifest.ref is not None
    assert git(root, "ls-tree", "-r", "--name-only", manifest.ref) == "src/app.py\n"
    assert git(root, "rev-list", "--parents", "-n", "1", manifest.ref).split() == [manifest.commit]


def test_a_sha256_repository_is_checkpointed_in_git(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.invalid")
    git(root, "add", "src/app.py", "keep.txt")
    git(root, "commit", "-q", "-m", "init")
    (root / "keep.txt").unlink()  # tracked, deleted by hand; the plan creates it again
    turn = first_turn(root)
    checkpoint = take(turn, Create("keep.txt", "again"), Edit("src/app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git", manifest.fallback
    assert manifest.ref is not None and len(manifest.commit or "") == 64
    assert git(root, "ls-tree", "-r", "--name-only", manifest.ref) == "src/app.py\n"


def test_paths_with_quotes_backslashes_and_spaces_are_kept_in_git_as_named(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, with_git=True)
    names = ['"quoted".txt', 'say "hi".txt', "back\\slash.txt", "two  spaces .txt", "été.md"]
    for number, name in enumerate(names):
        (root / name).write_bytes(b"file %d\n" % number)
    turn = first_turn(root)
    checkpoint = take(turn, *(Edit(name, FIX) for name in names), Create('new "one".txt', "x"))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git", manifest.fallback
    listed = (
        subprocess.run(
            ["git", "ls-tree", "-r", "-z", "--name-only", manifest.ref or ""],
            cwd=root,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    assert set(names) <= set(listed) and 'new "one".txt' not in listed
    for number, name in enumerate(names):
        shown = subprocess.run(
            ["git", "cat-file", "blob", f"{manifest.ref}:{name}"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
        assert shown == b"file %d\n" % number


def test_a_session_name_that_is_not_a_plain_ref_name_is_kept_in_the_turn(
    tmp_path: Path,
) -> None:
    # sessions are found by a strict pattern; a name built by hand that could start a
    # command in fast-import's stream never reaches git
    root = make_project(tmp_path, with_git=True)
    name = "20260101-x\nreset refs/heads/main"
    (root / ".teddy" / name / "01").mkdir(parents=True)
    turn = Turn(Session(root, name), "01")
    checkpoint = take(turn, Edit("src/app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "files"
    assert manifest.fallback.startswith("the ref 'refs/teddy/20260101-x\\nreset")
    assert git(root, "for-each-ref") == git(root, "for-each-ref", "refs/heads")


@pytest.mark.parametrize("inside", [".git/config", "sub/.GIT/x", "sub/.git. /x"])
def test_a_path_inside_a_git_folder_is_kept_in_the_turn(tmp_path: Path, inside: str) -> None:
    # only with protected paths turned off can a plan name one; git refuses such a
    # tree entry, so the copies are kept instead
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX), Create(inside, "x"))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "files"
    assert manifest.fallback == "a path lies inside a .git folder"
    assert git(root, "for-each-ref", "refs/teddy") == ""


@pytest.mark.parametrize("turn_name", ["01.lock", "01."])
def test_a_turn_name_git_would_refuse_in_a_ref_is_kept_in_the_turn(
    tmp_path: Path, turn_name: str
) -> None:
    root = make_project(tmp_path, with_git=True)
    session = first_turn(root).session
    (session.path / turn_name).mkdir()
    checkpoint = take(Turn(session, turn_name), Edit("src/app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "files"
    assert manifest.fallback.startswith("the ref ")
    assert not list((root / ".git").glob("fast_import_crash_*"))


@pytest.mark.parametrize("odd", ["\t", "\n"], ids=["tab", "line-break"])
def test_a_path_with_a_tab_or_line_break_is_kept_in_the_turn_instead(
    tmp_path: Path, odd: str
) -> None:
    root = make_project(tmp_path, with_git=True)
    (root / f"a{odd}b.txt").write_bytes(b"tabbed\n")
    turn = first_turn(root)
    checkpoint = take(
        turn, Edit("src/app.py", FIX), Edit(f"a{odd}b.txt", FIX), Edit("keep.txt", FIX)
    )
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "files" and manifest.ref is None
    assert manifest.fallback == "a path holds a line break or a tab"
    assert load_manifest(turn) == manifest  # the reason is kept for the report
    assert git(root, "for-each-ref", "refs/teddy") == ""
    pack = turn.file("checkpoint") / "preimages.bin"
    assert pack.read_bytes() == ORIGINAL + b"tabbed\n" + b"untouched\n"
    size = len(ORIGINAL)
    assert [e.stored for e in manifest.entries] == [f"0:{size}", f"{size}:7", f"{size + 7}:10"]
    (note,) = checkpoint.notes
    assert note == (
        f"checkpoint: .teddy/{turn.session.name}/01/checkpoint/ keeps the 3 files this turn "
        "may change as they were before it; `teddy undo` restores them "
        "(git was not used: a path holds a line break or a tab)"
    )


def test_a_turn_checkpointed_again_after_a_run_cut_short_gets_the_new_commit(
    tmp_path: Path,
) -> None:
    # a run stopped after its checkpoint and before its first action is taken again:
    # the ref moves to the new commit, which is not a descendant of the old one
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    first = take(turn, Edit("src/app.py", FIX)).manifest
    (root / "src" / "app.py").write_bytes(b"edited by hand meanwhile\n")
    again = take(turn, Edit("src/app.py", FIX)).manifest
    assert first is not None and again is not None
    assert again.kind == "git" and again.ref == first.ref and again.commit != first.commit
    assert git(root, "rev-parse", again.ref or "").strip() == again.commit
    assert git(root, "show", f"{again.ref}:src/app.py") == "edited by hand meanwhile\n"


def test_copies_left_by_a_run_cut_short_are_cleared(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    (turn.file("checkpoint")).mkdir()
    (turn.file("checkpoint") / "preimages.bin").write_bytes(b"from the run before")
    checkpoint = take(turn, Edit("src/app.py", FIX))
    assert checkpoint.manifest is not None and checkpoint.manifest.kind == "git"
    assert not turn.file("checkpoint").exists()
    (note,) = checkpoint.notes
    assert note.startswith(f"checkpoint: refs/teddy/{turn.session.name}/01 (commit ")
    assert " keeps the 1 file this turn may change" in note and "git was not used" not in note


def test_a_plan_that_writes_no_file_keeps_nothing(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    checkpoint = take(turn, Execute("true"))
    assert checkpoint.manifest is not None and checkpoint.manifest.kind == "none"
    assert checkpoint.notes == ()
    assert not turn.file("checkpoint").exists()
    assert git(root, "for-each-ref", "refs/teddy") == ""
    assert load_manifest(turn) == checkpoint.manifest


def test_checkpoints_turned_off_take_nothing(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    checkpoint = TurnCheckpoint(turn, enabled=False)
    assert checkpoint.take([Edit("src/app.py", FIX)], memos=True) is None
    checkpoint.seal()
    assert checkpoint.notes == ()
    assert not turn.file("checkpoint.json").exists()


def test_a_second_seal_keeps_the_first_record(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX))
    (root / "src" / "app.py").write_bytes(b"the turn's\n")
    checkpoint.seal()
    (root / "src" / "app.py").write_bytes(b"a person's, later\n")
    checkpoint.seal()
    manifest = load_manifest(turn)
    assert manifest is not None and manifest.sealed
    assert manifest.entries[0].after == FileState(
        True, 0o751, hashlib.sha256(b"the turn's\n").hexdigest()
    )


def test_a_manifest_that_cannot_be_saved_stops_the_turn(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    turn.file("checkpoint.json").mkdir()  # nothing can be written there
    with pytest.raises(CheckpointError) as caught:
        take(turn, Edit("src/app.py", FIX))
    assert caught.value.code == "checkpoint-failed"
    assert caught.value.path == str(turn.file("checkpoint.json"))
    detail = caught.value.detail  # the system's words for the error, not Python's
    assert detail.startswith("the checkpoint cannot be saved (") and "Errno" not in detail
    assert detail.endswith("); nothing was run")


def test_copies_that_cannot_be_written_stop_the_turn(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    turn = first_turn(root)
    turn.file("checkpoint").write_text("a file where the folder goes\n")
    with pytest.raises(CheckpointError) as caught:
        take(turn, Edit("src/app.py", FIX))
    assert caught.value.code == "checkpoint-failed"
    assert caught.value.path == str(turn.file("checkpoint"))
    detail = caught.value.detail  # the system's words for the error, not Python's
    assert detail.startswith("the checkpoint cannot be written (") and "Errno" not in detail
    assert not turn.file("checkpoint.json").exists()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"version": 1, "kind": "git", "session": "s", "tur', None),  # torn
        ('{"version": 2, "kind": "git"}', "not a version 1 checkpoint manifest"),
        ("[1]", "not a version 1 checkpoint manifest"),
        (
            '{"version": 1, "kind": "tape", "session": "s", "turn": "01", "created": "x"}',
            "unknown checkpoint kind 'tape'",
        ),
        (
            '{"version": 1, "kind": "files", "session": "s", "turn": "01", "created": "x", '
            '"entries": [{"path": "a", "before": "yes"}]}',
            "a file state must be an object",
        ),
        ('{"version": 1, "kind": "files"}', "'session'"),
    ],
)
def test_a_damaged_manifest_is_named_as_such(tmp_path: Path, text: str, why: str | None) -> None:
    root = make_project(tmp_path, with_git=False)
    turn = first_turn(root)
    turn.file("checkpoint.json").write_text(text, encoding="utf-8")
    with pytest.raises(CheckpointError) as caught:
        load_manifest(turn)
    assert caught.value.code == "bad-checkpoint"
    assert caught.value.path == str(turn.file("checkpoint.json"))
    detail = caught.value.detail
    assert detail.startswith("the checkpoint manifest is damaged (")
    assert detail.endswith("); nothing can be restored from it")
    if why is not None:
        assert (
            detail == f"the checkpoint manifest is damaged ({why}); nothing can be restored from it"
        )


def test_a_manifest_that_cannot_be_read_is_named_as_such(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    turn = first_turn(root)
    turn.file("checkpoint.json").mkdir()
    with pytest.raises(CheckpointError) as caught:
        load_manifest(turn)
    assert caught.value.code == "bad-checkpoint"
    assert caught.value.path == str(turn.file("checkpoint.json"))
    detail = caught.value.detail  # the system's words for "is a directory" in between
    assert detail.startswith("the checkpoint manifest cannot be read (")
    assert detail.endswith("); nothing can be restored from it")
    assert load_manifest(Turn(turn.session, "02")) is None


def test_a_minimal_manifest_reads_with_its_defaults(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    turn = first_turn(root)
    entry = {"path": "a.txt", "before": {"exists": 0, "mode": "0", "sha256": "", "special": 0}}
    turn.file("checkpoint.json").write_text(
        json.dumps(
            {
                "version": 1,
                "kind": "none",
                "session": "s",
                "turn": "01",
                "created": "t",
                "entries": [entry],
                "fallback": None,
            }
        )
    )
    manifest = load_manifest(turn)
    assert manifest is not None
    assert (manifest.ref, manifest.commit, manifest.sealed, manifest.fallback) == (
        None,
        None,
        False,
        "",
    )
    (only,) = manifest.entries
    assert (only.stored, only.dirs, only.after, only.before) == (None, (), None, FileState(False))
    assert only.changed


def test_line_ending_rules_of_the_repository_do_not_change_the_kept_bytes(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    (root / ".gitattributes").write_text("* text eol=lf\n")  # app.py has CRLF line ends
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git", manifest.fallback
    shown = subprocess.run(
        ["git", "show", f"{manifest.ref}:src/app.py"], cwd=root, env=GIT_ENV, capture_output=True
    )
    assert shown.stdout == ORIGINAL


def test_a_repository_that_signs_and_logs_every_ref_still_gets_its_checkpoint(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, with_git=True)
    git(root, "config", "commit.gpgSign", "true")
    git(root, "config", "gpg.program", "false")  # signing would fail
    git(root, "config", "core.logAllRefUpdates", "always")
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git", manifest.fallback
    assert git(root, "reflog", "show", "--format=%gn: %gs", manifest.ref or "") == (
        "TeDDy: fast-import\n"
    )
    assert git(root, "cat-file", "-p", manifest.commit or "").count("gpgsig") == 0


def test_a_project_folder_that_cannot_name_a_ref_gets_a_digest(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    root = mono / "my project"
    (root / ".teddy" / "20260101-demo" / "01").mkdir(parents=True)
    (root / "app.py").write_bytes(ORIGINAL)
    git(mono, "init", "-q", "-b", "main")
    turn = Turn(Session(root, "20260101-demo"), "01")
    checkpoint = take(turn, Edit("app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git", manifest.fallback
    digest = hashlib.sha256(b"my project/").hexdigest()[:16]
    assert manifest.ref == f"refs/teddy/dir-{digest}/20260101-demo/01"
    assert git(mono, "ls-tree", "-r", "--name-only", manifest.ref) == "my project/app.py\n"


@pytest.mark.parametrize("committed", [True, False], ids=["commit", "no-commit-yet"])
def test_a_project_folder_whose_name_is_not_utf8_is_checkpointed_in_git(
    tmp_path: Path, committed: bool
) -> None:
    mono = tmp_path / "mono"
    mono.mkdir()
    name = b"caf\xe9"  # Latin-1, as an old archive unpacks it
    root = mono / os.fsdecode(name)
    (root / ".teddy" / "20260101-demo" / "01").mkdir(parents=True)
    (root / "app.py").write_bytes(ORIGINAL)
    git(mono, "init", "-q", "-b", "main")
    if committed:
        (mono / "README").write_text("the monorepo\n")
        git(mono, "add", "README")
        git(mono, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "i")
    turn = Turn(Session(root, "20260101-demo"), "01")
    checkpoint = take(turn, Edit("app.py", FIX), Create("new.py", "x"))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git", manifest.fallback
    digest = hashlib.sha256(name + b"/").hexdigest()[:16]
    assert manifest.ref == f"refs/teddy/dir-{digest}/20260101-demo/01"
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "--name-only", manifest.ref],
        cwd=mono, env=GIT_ENV, capture_output=True, check=True,
    )  # fmt: skip
    assert listed.stdout == (b"README\0" if committed else b"") + name + b"/app.py\0"


def test_a_file_changed_while_it_is_checkpointed_is_kept_as_it_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an editor saves src/app.py between teddy reading it and git storing it: git is
    # given the bytes teddy read, so the commit holds what the manifest describes
    from plankit.teddy.run import checkpoint_git as module

    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    real_git = module.git

    def git_while_an_editor_saves(where: Path, *args: str, **kwargs: object) -> bytes:
        if args[0] == "fast-import":
            (root / "src" / "app.py").write_bytes(b"saved meanwhile\n")
        return real_git(where, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "git", git_while_an_editor_saves)
    checkpoint = take(turn, Edit("src/app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "git", manifest.fallback
    from plankit.teddy.run.gitcmd import object_id

    blob = git(root, "rev-parse", f"{manifest.ref}:src/app.py").strip()
    assert blob == manifest.entries[0].stored == object_id(ORIGINAL, "sha1")
    assert manifest.entries[0].before.sha256 == hashlib.sha256(ORIGINAL).hexdigest()


def test_a_file_deleted_while_it_is_checkpointed_is_seen_but_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a build tool removes notes.txt just after teddy has read it, before its mode is
    # taken: its bytes cannot be kept with a mode, so it is left out of the checkpoint
    # (undo never writes over what it did not keep), and seen as something that was there
    from plankit.teddy.run import checkpoint as module

    root = make_project(tmp_path, with_git=False)
    (root / "notes.txt").write_text("draft\n", encoding="utf-8")
    turn = first_turn(root)
    real_read = module.read_inside

    def read_then_a_tool_deletes(where: Path, path: str, **kwargs: object) -> bytes:
        data = real_read(where, path, **kwargs)  # type: ignore[arg-type]
        if path == "notes.txt":
            (where / path).unlink()
        return data

    monkeypatch.setattr(module, "read_inside", read_then_a_tool_deletes)
    assert read_state(root, "notes.txt") == (FileState(True, special=True), None)
    (root / "notes.txt").write_text("draft\n", encoding="utf-8")
    checkpoint = take(turn, Edit("notes.txt", FIX), Edit("src/app.py", FIX))
    assert checkpoint.manifest is not None
    assert [e.path for e in checkpoint.manifest.entries] == ["src/app.py"]


def test_the_time_a_checkpoint_was_taken_is_utc_on_a_clock_that_is_not(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    turn = first_turn(root)
    with new_york_clock():
        before = utc_now()
        checkpoint = take(turn, Edit("src/app.py", FIX))
        after = dt.datetime.now(dt.UTC)
    assert checkpoint.manifest is not None
    created = dt.datetime.strptime(checkpoint.manifest.created, "%Y-%m-%dT%H:%M:%SZ")
    assert before <= created.replace(tzinfo=dt.UTC) <= after


OLD_REV_PARSE = """\
import subprocess, sys
# git before 2.25 has no `rev-parse --show-object-format`: rev-parse prints an option it
# does not know back, as it is, in its place among the answers
args = sys.argv[1:]
if "rev-parse" in args and "--show-object-format" in args:
    args.remove("--show-object-format")
    print("--show-object-format", flush=True)
sys.exit(subprocess.call([{git!r}, *args]))
"""


def test_a_git_older_than_2_25_falls_back_to_copies_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Debian 10 ships git 2.20, Ubuntu 18.04 git 2.17, CentOS 7 git 1.8
    real_git = shutil.which("git")
    assert real_git is not None
    old = tmp_path / "old-git" / "git"
    old.parent.mkdir()
    old.write_text(f"#!{sys.executable}\n" + OLD_REV_PARSE.format(git=real_git))
    old.chmod(0o755)
    monkeypatch.setenv("PATH", f"{old.parent}{os.pathsep}{os.environ['PATH']}")
    root = make_project(tmp_path, with_git=True)
    turn = first_turn(root)
    checkpoint = take(turn, Edit("src/app.py", FIX))
    manifest = checkpoint.manifest
    assert manifest is not None and manifest.kind == "files"
    assert manifest.fallback == "unknown object format '--show-object-format'"
    assert checkpoint.notes[0].endswith(
        "(git was not used: unknown object format '--show-object-format')"
    )
    assert git(root, "for-each-ref", "refs/teddy") == ""  # nothing half made in git
