"""Protected paths are checked on the file opened for input.md, when its content is
used: a file a plan READ that is later replaced by a symbolic link to ``.git/config``,
or a hard link to ``.git/config`` under an innocent name, never reaches the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plankit.teddy.context.payload import build_payload
from tests.security.helpers import edit, plan, read, start_session, teddy

SECRET = "https://alice:ghp_s3cr3tT0ken@git.example.com/team/app.git"
GIT_CONFIG = f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {SECRET}\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / "notes.txt").write_text("meeting notes\n")
    return root


def _read_then_context(project: Path, path: str) -> str:
    """Turn 01 READs ``path`` (it must pass validation); ``teddy context`` then builds
    turn 02's input.md: its text."""
    turn = start_session(project)
    (turn / "plan.md").write_text(plan(read(path)))
    teddy(project, "execute", "-y", "--no-replan")
    turn2 = turn.parent / "02"
    assert path in (turn2 / "turn.context").read_text()
    return turn2.name


def _input(project: Path) -> str:
    teddy(project, "context")
    session = next((project / ".teddy").glob("*-sec"))
    return (sorted(p for p in session.iterdir() if p.is_dir())[-1] / "input.md").read_text()


def test_a_file_read_then_replaced_by_a_link_to_git_config_is_refused(project: Path) -> None:
    _read_then_context(project, "notes.txt")
    assert "meeting notes" in _input(project)
    (project / "notes.txt").unlink()
    (project / "notes.txt").symlink_to(".git/config")
    text = _input(project)
    assert "s3cr3t" not in text
    assert (
        "Refused: it leads to `.git/config`, a protected path: plans may not read paths "
        "matching '.git' (protected_paths.read in .teddy/config.yaml)." in text
    )


def test_a_file_read_then_replaced_by_a_hard_link_to_git_config_is_refused(
    project: Path,
) -> None:
    _read_then_context(project, "notes.txt")
    (project / "notes.txt").unlink()
    os.link(project / ".git" / "config", project / "notes.txt")
    text = _input(project)
    assert "s3cr3t" not in text
    assert "Refused: a hard link to a protected file (protected_paths.read" in text


@pytest.mark.parametrize(
    "action",
    [read("remote.txt"), edit("remote.txt", "url = https://other", "x")],
    ids=["READ", "EDIT"],
)
def test_a_plan_naming_a_hard_link_to_git_config_is_refused(project: Path, action: str) -> None:
    # an EDIT whose FIND matches nowhere shows the closest lines of the file: the secret
    os.link(project / ".git" / "config", project / "remote.txt")
    turn = start_session(project)
    (turn / "plan.md").write_text(plan(action))
    result = teddy(project, "execute", "-y", "--no-replan", check=1)
    assert "on `remote.txt`: is a hard link to a protected file" in result.stderr
    assert "s3cr3t" not in result.stderr + (turn / "report.md").read_text()
    assert (project / ".git" / "config").read_text() == GIT_CONFIG


def test_a_hard_link_to_an_ordinary_file_is_read(project: Path) -> None:
    os.link(project / "notes.txt", project / "copy.txt")
    _read_then_context(project, "copy.txt")
    assert "meeting notes" in _input(project)


def test_a_link_swapped_in_after_the_check_is_refused_on_the_opened_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the race made deterministic: notes.txt is a file when its path is checked and a
    # link to .git/config when it is opened
    (project / ".teddy").mkdir()
    (project / ".teddy" / "global.context").write_text("notes.txt\n")
    real_open = os.open

    def swap_then_open(path: str, *args: object, **kwargs: object) -> int:
        target = project / "notes.txt"
        if str(path).endswith("notes.txt") and not target.is_symlink():
            target.unlink()
            target.symlink_to(".git/config")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", swap_then_open)
    text = build_payload(project, None, None)
    assert "s3cr3t" not in text
    assert "Refused: it leads to `.git/config`, a protected path" in text


def test_the_users_own_entry_naming_git_config_is_still_read(project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "global.context").write_text(".git/config\nnotes.txt\n")
    (project / "notes.txt").unlink()
    (project / "notes.txt").symlink_to(".git/config")
    text = build_payload(project, None, None)
    assert text.count("s3cr3t") == 1  # the named entry; the link to it is refused
    assert "Refused: it leads to `.git/config`" in text


def test_the_rules_of_the_config_apply(project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "config.yaml").write_text("protected_paths:\n  read: ['*.pem']\n")
    (project / "key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    _read_then_context(project, "notes.txt")
    (project / "notes.txt").unlink()
    (project / "notes.txt").symlink_to("key.pem")
    text = _input(project)
    assert "PRIVATE KEY" not in text
    assert "matching '*.pem'" in text


SWAPPER = r"""
import os, sys
os.chdir(sys.argv[1])
i = 0
while not os.path.exists(sys.argv[2]):
    i += 1
    try:
        if i % 3 == 0:
            os.symlink(".git/config", "l.tmp"); os.rename("l.tmp", "notes.txt")
        elif i % 3 == 1:
            os.link(".git/config", "h.tmp"); os.rename("h.tmp", "notes.txt")
        else:
            with open("p.tmp", "w") as out:
                out.write("meeting notes\n")
            os.rename("p.tmp", "notes.txt")
    except OSError:
        pass
    if i == 300:
        open("ready", "w").close()
print(i)
"""


def test_no_secret_while_the_file_is_swapped_for_links_to_git_config(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.security.helpers import fast_directory
    from tests.waiting import wait_until

    scratch = fast_directory()
    project = next(scratch) / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text(GIT_CONFIG)
    (project / "notes.txt").write_text("meeting notes\n")
    (project / ".teddy").mkdir()
    turn = project / "turn"
    turn.mkdir()
    (turn / "turn.context").write_text("notes.txt\n")
    stop = project / "stop"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(project), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    seen = {"read": 0, "refused": 0}
    try:
        wait_until(lambda: (project / "ready").exists(), "the swapper's first swaps")
        for _ in range(2_000):
            text = build_payload(project, None, turn, max_file_bytes=1000)
            assert "s3cr3t" not in text
            seen["read" if "\nmeeting notes\n" in text else "refused"] += 1
    finally:
        stop.touch()
        out, _ = swapper.communicate(timeout=60)
    assert int(out) > 300
    print(f"\n2000 payloads {seen}, {out.strip()} swaps, 0 leaks")
    for _ in scratch:  # the scratch directory is removed
        pass


def test_a_hard_link_replaced_right_after_the_open_is_still_refused(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the race made deterministic: notes.txt is a hard link to .git/config when it is
    # opened, and a plain file again (the hard link gone, .git/config's count back to
    # one) by the time the opened file is looked at
    (project / ".teddy").mkdir()
    (project / ".teddy" / "global.context").write_text("notes.txt\n")
    (project / "notes.txt").unlink()
    os.link(project / ".git" / "config", project / "notes.txt")
    real_open = os.open

    def open_then_swap(path: str, *args: object, **kwargs: object) -> int:
        fd = real_open(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path).endswith("notes.txt") and os.stat(path).st_nlink > 1:
            (project / "plain.tmp").write_text("meeting notes\n")
            os.rename(project / "plain.tmp", project / "notes.txt")
        return fd

    monkeypatch.setattr(os, "open", open_then_swap)
    text = _build_as_user_did_not_name(project)
    assert "s3cr3t" not in text
    assert "Changed while it was read" in text or "hard link to a protected file" in text


def _build_as_user_did_not_name(project: Path) -> str:
    turn = project / "turn"
    turn.mkdir(exist_ok=True)
    (turn / "turn.context").write_text((project / ".teddy" / "global.context").read_text())
    (project / ".teddy" / "global.context").write_text("")
    return build_payload(project, None, turn)


def test_an_edit_whose_file_becomes_a_hard_link_to_git_config_is_refused_when_read(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the race made deterministic: notes.txt is a plain file when the EDIT's path is
    # checked, and a hard link to .git/config when the EDIT reads it; a FIND that matches
    # nowhere would show the closest lines of the file (the secret) in the report
    import io

    from plankit import workspace
    from plankit.teddy.format.model import Edit, EditPair
    from plankit.teddy.run import actions
    from plankit.teddy.run.actions import Runtime, run_action
    from plankit.teddy.run.approval import ShowOnly
    from plankit.teddy.session.config import load_config

    real_read_inside = workspace.read_inside

    def swap_then_read(root: Path, path: str, **kwargs: object) -> bytes:
        (project / "notes.txt").unlink()
        os.link(project / ".git" / "config", project / "notes.txt")
        return real_read_inside(root, path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(actions, "read_inside", swap_then_read)
    rt = Runtime(project, load_config(project), ShowOnly(io.StringIO()))
    result = run_action(Edit("notes.txt", (EditPair("url = https://x", "url = y"),)), rt)
    assert result.success is False
    shown = " ".join(result.notes) + result.details
    assert "s3cr3t" not in shown
    assert "hard link to a protected file" in shown
