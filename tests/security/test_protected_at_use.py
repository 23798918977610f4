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
