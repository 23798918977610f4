"""Checkpoints and ``teddy undo``, with git and without.

Each test builds its own project in a temporary directory (``git init`` with a local
identity when it needs a repository) and drives the ``teddy`` console entry point in
this process.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from plankit.teddy.format.model import Create, Edit
from plankit.teddy.run.checkpoint import TurnCheckpoint, load_manifest
from plankit.teddy.session.layout import Session, Turn
from tests.teddy.test_session_e2e import plan, teddy

ORIGINAL = b"def answer():\r\n    return 41\r\n# no final newline"
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args], cwd=root, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return out.stdout


def make_project(tmp_path: Path, *, with_git: bool) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    app = root / "src" / "app.py"
    app.write_bytes(ORIGINAL)
    app.chmod(0o751)
    (root / "keep.txt").write_text("untouched\n", encoding="utf-8")
    if with_git:
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.name", "Test")
        git(root, "config", "user.email", "test@example.invalid")
        git(root, "add", "src/app.py", "keep.txt")
        git(root, "commit", "-q", "-m", "init")
    return root


def edit(path: str, find: str, replace: str) -> str:
    return (
        f"### `EDIT`\n- **File Path:** [{path}](/{path})\n\n`FIND:`\n```\n{find}\n```\n"
        f"`REPLACE:`\n```\n{replace}\n```"
    )


def create(path: str, content: str) -> str:
    return f"### `CREATE`\n- **File Path:** [{path}](/{path})\n```\n{content}\n```"


def execute_cmd(command: str) -> str:
    return f"### `EXECUTE`\n- **Expected Outcome:** done\n```shell\n{command}\n```"


def new_session(root: Path, context: str = "src/app.py\n") -> Path:
    session = Path(teddy(root, "new", "demo").stdout.strip())
    (session / "01" / "turn.context").write_text(context, encoding="utf-8")
    return session


def write_plan(turn: Path, actions: str, memos: str = "") -> str:
    text = plan(actions, memos)
    (turn / "plan.md").write_text(text, encoding="utf-8")
    return text


TURN_PLAN = "\n\n".join(
    [
        edit("src/app.py", "    return 41", "    return 42"),
        create("src/new/deep/b.py", "y = 2"),
        execute_cmd("chmod 600 src/app.py"),
    ]
)


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "no-git"])
def test_undo_restores_the_files_and_returns_to_the_plan(tmp_path: Path, with_git: bool) -> None:
    root = make_project(tmp_path, with_git=with_git)
    session = new_session(root)
    plan_text = write_plan(session / "01", TURN_PLAN, memos="[+] Keep answers exact.")
    teddy(root, "execute", "-y")
    app = root / "src" / "app.py"
    assert app.read_bytes() == ORIGINAL.replace(b"41", b"42")
    assert app.stat().st_mode & 0o777 == 0o600
    assert (root / "src" / "new" / "deep" / "b.py").exists()
    assert "Keep answers exact." in (root / ".teddy" / "memos.yaml").read_text()
    report = (session / "01" / "report.md").read_text(encoding="utf-8")
    manifest = load_manifest(Turn(Session(root, session.name), "01"))
    assert manifest is not None and manifest.sealed
    if with_git:
        ref = f"refs/teddy/{session.name}/01"
        assert (manifest.kind, manifest.ref) == ("git", ref)
        assert f"checkpoint: {ref} (commit {manifest.commit[:12]})" in report
    else:
        assert manifest.kind == "files"
        assert f"checkpoint: .teddy/{session.name}/01/checkpoint/ keeps the 3 files" in report

    result = teddy(root, "undo", "--json")
    out = json.loads(result.stdout)
    assert out["turn"] == "01" and out["later_turns"] == ["02"] and not out["forced"]
    assert out["restored"] == ["src/app.py"]
    assert sorted(out["removed"]) == [".teddy/memos.yaml", "src/new/deep/b.py"]
    assert out["commands_not_undone"] == 1
    assert "1 EXECUTE command ran in that turn" in result.stderr
    # byte for byte, mode kept; created files and the directories made for them gone
    assert app.read_bytes() == ORIGINAL
    assert app.stat().st_mode & 0o777 == 0o751
    assert not (root / "src" / "new").exists()
    assert not (root / ".teddy" / "memos.yaml").exists()
    assert (root / "keep.txt").read_text() == "untouched\n"
    # the session is back at the turn's plan, unexecuted; the rest moved aside
    assert sorted(p.name for p in session.iterdir() if p.name[0].isdigit()) == ["01"]
    assert (session / "01" / "plan.md").read_text(encoding="utf-8") == plan_text
    for name in ("report.md", "journal.jsonl", "checkpoint.json", "checkpoint"):
        assert not (session / "01" / name).exists(), name
    aside = Path(out["moved_to"])
    assert aside.parent == session / ".undone"
    assert (aside / "report.md").read_text(encoding="utf-8") == report
    assert (aside / "turns" / "02" / "turn.context").exists()

    # the plan runs again, as new
    teddy(root, "execute", "-y")
    assert app.read_bytes() == ORIGINAL.replace(b"41", b"42")
    assert (session / "02").is_dir()


def test_checkpointing_leaves_branch_head_index_and_working_tree_alone(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    (root / "keep.txt").write_text("staged change\n", encoding="utf-8")
    git(root, "add", "keep.txt")
    (root / "keep.txt").write_text("unstaged on top\n", encoding="utf-8")
    (root / "untracked.txt").write_text("new\n", encoding="utf-8")
    session = Path(teddy(root, "new", "demo").stdout.strip())  # TeDDy's state: not compared
    index = root / ".git" / "index"
    before = (
        git(root, "status", "--porcelain", "--untracked-files=all", "--", ":!.teddy"),
        git(root, "rev-parse", "HEAD"),
        git(root, "symbolic-ref", "HEAD"),
        git(root, "for-each-ref", "refs/heads"),
        index.read_bytes(),
        (root / "src" / "app.py").read_bytes(),
    )
    turn = Turn(Session(root, session.name), "01")
    checkpoint = TurnCheckpoint(turn)
    actions = [
        Edit("src/app.py", ()),
        Edit("keep.txt", ()),
        Create("src/made.py", "x = 1"),
    ]
    manifest = checkpoint.take(actions, memos=False)
    after = (
        git(root, "status", "--porcelain", "--untracked-files=all", "--", ":!.teddy"),
        git(root, "rev-parse", "HEAD"),
        git(root, "symbolic-ref", "HEAD"),
        git(root, "for-each-ref", "refs/heads"),
        index.read_bytes(),
        (root / "src" / "app.py").read_bytes(),
    )
    assert after == before
    assert manifest is not None and manifest.kind == "git"
    ref = f"refs/teddy/{session.name}/01"
    assert git(root, "rev-parse", ref).strip() == manifest.commit
    # the commit holds the files as they are on disk (not as staged), and no created file
    assert git(root, "show", f"{ref}:keep.txt") == "unstaged on top\n"
    shown = subprocess.run(
        ["git", "show", f"{ref}:src/app.py"], cwd=root, env=GIT_ENV, capture_output=True
    )
    assert shown.stdout == ORIGINAL
    assert "src/made.py" not in git(root, "ls-tree", "-r", "--name-only", ref)
    assert git(root, "rev-parse", f"{ref}^").strip() == before[1].strip()


def test_the_checkpoint_exists_before_the_first_action(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    session = new_session(root)
    ref = f"refs/teddy/{session.name}/01"
    probe = f"git rev-parse --verify -q {ref} && test -f .teddy/{session.name}/01/checkpoint.json"
    write_plan(session / "01", "\n\n".join([execute_cmd(probe), create("c.txt", "c")]))
    teddy(root, "execute", "-y")
    assert "Overall Status:** Completed" in (session / "01" / "report.md").read_text()


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "no-git"])
def test_undo_refuses_a_file_changed_since_unless_forced(tmp_path: Path, with_git: bool) -> None:
    root = make_project(tmp_path, with_git=with_git)
    session = new_session(root)
    write_plan(session / "01", "\n\n".join([edit("src/app.py", "    return 41", "    return 42"),
                                            create("b.py", "y = 2")]))  # fmt: skip
    teddy(root, "execute", "-y")
    app = root / "src" / "app.py"
    by_hand = app.read_bytes() + b"\n# by hand\n"
    app.write_bytes(by_hand)

    result = teddy(root, "undo", check=1)
    assert result.stderr.count("\n") == 1
    assert "src/app.py was changed after turn 01 ran" in result.stderr
    assert "teddy undo --force" in result.stderr
    # nothing changed: not the other file, not the session
    assert app.read_bytes() == by_hand
    assert (root / "b.py").exists()
    assert (session / "01" / "report.md").exists() and (session / "02").is_dir()

    teddy(root, "undo", "--force")
    assert app.read_bytes() == ORIGINAL
    assert not (root / "b.py").exists()
    assert not (session / "01" / "report.md").exists()


def test_a_file_the_turn_did_not_change_is_left_alone(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = new_session(root)
    # the EDIT is skipped after the failed command, so the turn leaves the file as it was:
    # a later change to it is none of undo's business
    write_plan(session / "01", execute_cmd("exit 3") + "\n\n" + edit("src/app.py", "41", "42"))
    teddy(root, "execute", "-y", check=1)
    (root / "src" / "app.py").write_bytes(b"changed later\n")
    teddy(root, "undo")
    assert (root / "src" / "app.py").read_bytes() == b"changed later\n"


def test_undo_without_an_executed_turn_is_one_line(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = new_session(root)
    result = teddy(root, "undo", check=1)
    assert (
        result.stderr
        == f"teddy: nothing to undo: no turn of session {session.name} has been executed\n"
    )


def test_a_turn_cut_short_needs_force(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    session = new_session(root)
    write_plan(session / "01", edit("src/app.py", "    return 41", "    return 42"))
    teddy(root, "execute", "-y")
    manifest_path = session / "01" / "checkpoint.json"
    data = json.loads(manifest_path.read_text())
    data["sealed"] = False  # as when teddy was killed before the end of the turn
    for entry in data["entries"]:
        entry["after"] = None
    manifest_path.write_text(json.dumps(data))
    result = teddy(root, "undo", check=1)
    assert "turn 01 was cut short" in result.stderr and "check src/app.py" in result.stderr
    assert b"return 42" in (root / "src" / "app.py").read_bytes()
    teddy(root, "undo", "--force")
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL


def test_without_a_checkpoint_only_force_goes_back(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=True)
    (root / ".teddy").mkdir()
    (root / ".teddy" / "config.yaml").write_text("execute:\n  checkpoint: false\n")
    session = new_session(root)
    write_plan(session / "01", edit("src/app.py", "    return 41", "    return 42"))
    teddy(root, "execute", "-y")
    assert not (session / "01" / "checkpoint.json").exists()
    assert "checkpoint" not in (session / "01" / "report.md").read_text()
    assert git(root, "for-each-ref", "refs/teddy") == ""
    result = teddy(root, "undo", check=1)
    assert "turn 01 has no checkpoint" in result.stderr
    teddy(root, "undo", "--force")
    assert b"return 42" in (root / "src" / "app.py").read_bytes()  # files left as they are
    assert not (session / "01" / "report.md").exists() and not (session / "02").exists()


def test_lost_copies_are_refused_before_anything_changes(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = new_session(root)
    write_plan(session / "01", "\n\n".join([create("a.txt", "a"),
                                            edit("src/app.py", "    return 41", "    return 42")]))  # fmt: skip
    teddy(root, "execute", "-y")
    pack = session / "01" / "checkpoint" / "preimages.bin"
    pack.write_bytes(pack.read_bytes().replace(b"41", b"40"))
    result = teddy(root, "undo", "--force", check=1)
    assert "no longer holds src/app.py as it was; nothing was restored" in result.stderr
    assert (root / "a.txt").exists()  # not even the created file was removed


def test_git_that_fails_falls_back_to_copies(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    (root / ".git").write_text("gitdir: /nonexistent/elsewhere\n")  # a broken worktree link
    session = new_session(root)
    write_plan(session / "01", edit("src/app.py", "    return 41", "    return 42"))
    teddy(root, "execute", "-y")
    report = (session / "01" / "report.md").read_text()
    assert f".teddy/{session.name}/01/checkpoint/ keeps the 1 file" in report
    assert "git was not used" in report
    teddy(root, "undo")
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL


def test_undo_of_a_validation_failure_goes_back_to_its_plan(tmp_path: Path) -> None:
    root = make_project(tmp_path, with_git=False)
    session = new_session(root)
    write_plan(session / "01", create("src/app.py", "again"))
    teddy(root, "execute", "-y", "--no-replan", check=1)
    assert "Validation Failed" in (session / "01" / "report.md").read_text()
    teddy(root, "undo")
    assert not (session / "01" / "report.md").exists() and not (session / "02").exists()
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL


def test_a_project_in_a_subdirectory_of_a_repository_checkpoints_in_that_repository(
    tmp_path: Path,
) -> None:
    """A monorepo: the project is ``packages/proj`` of a repository whose top is above
    it. The checkpoint is a commit of that repository, the files at their paths from its
    top, on a ref that names the project's directory; undo restores from it."""
    mono = tmp_path / "mono"
    root = mono / "packages" / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_bytes(ORIGINAL)
    (mono / "README").write_text("the monorepo\n", encoding="utf-8")
    git(mono, "init", "-q", "-b", "main")
    git(mono, "config", "user.name", "Test")
    git(mono, "config", "user.email", "test@example.invalid")
    git(mono, "add", ".")
    git(mono, "commit", "-q", "-m", "init")
    session = new_session(root)
    write_plan(session / "01", "\n\n".join([edit("src/app.py", "    return 41", "    return 42"),
                                            create("src/new.py", "y = 2")]))  # fmt: skip
    teddy(root, "execute", "-y")
    report = (session / "01" / "report.md").read_text(encoding="utf-8")
    assert "git was not used" not in report
    ref = f"refs/teddy/packages/proj/{session.name}/01"
    assert f"checkpoint: {ref} (commit " in report
    assert git(mono, "ls-tree", "-r", "--name-only", ref) == "README\npackages/proj/src/app.py\n"
    shown = subprocess.run(
        ["git", "show", f"{ref}:packages/proj/src/app.py"], cwd=mono, env=GIT_ENV,
        capture_output=True, check=True,
    )  # fmt: skip
    assert shown.stdout == ORIGINAL
    assert git(mono, "status", "--porcelain", "--", "packages/proj/src") != ""

    teddy(root, "undo")
    assert (root / "src" / "app.py").read_bytes() == ORIGINAL
    assert not (root / "src" / "new.py").exists()
    assert git(mono, "status", "--porcelain", "--", "packages/proj/src") == ""


@pytest.mark.parametrize(
    "prefix", ["", "packages/app/", "my project/", "a..b/", "x.lock/", "-dash/", "ünï/"]
)
def test_every_checkpoint_ref_is_a_valid_git_ref(prefix: str) -> None:
    from plankit.teddy.run.checkpoint_git import checkpoint_ref

    ref = checkpoint_ref(prefix, "20260101-demo", "02")
    assert ref.startswith("refs/teddy/") and ref.endswith("/20260101-demo/02")
    check = subprocess.run(["git", "check-ref-format", ref], env=GIT_ENV, check=False)
    assert check.returncode == 0, ref
    if prefix in ("", "packages/app/"):
        assert ref == f"refs/teddy/{prefix}20260101-demo/02"
