"""Paths no file system takes are one-line validation errors, never a traceback.

A path of 2,000 components once hit Python's recursion limit (RecursionError) and a
5,000-character name ENAMETOOLONG, each with a traceback and no report, on every
retry.  Now each is refused at validation with a code (``path-too-deep``,
``name-too-long``, ``path-too-long``), exit status 1, and nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plankit.workspace import PathRefused, read_inside, resolve, write_inside
from tests.security.helpers import create, edit, plan, read, snapshot, start_session, teddy

DEEP = "/".join(["a"] * 1999) + "/x.txt"  # 2,000 components
LONG_NAME = "n" * 4996 + ".txt"  # 5,000 characters
CASES = [
    (DEEP, "path-too-deep", "the path has 2,000 components; at most 128 are accepted"),
    (LONG_NAME, "name-too-long", "a name in the path is 5,000 bytes long"),
    ("d/" + "n" * 256, "name-too-long", "a name in the path is 256 bytes long"),
    ("€" * 100, "name-too-long", "a name in the path is 300 bytes long"),  # 100 characters
    ("/".join(["p" * 200] * 21), "path-too-long", "the path is 4,220 bytes long"),
    # fits on its own, not with the project root in front of it
    (
        "/".join(["q" * 199] * 20) + "/" + "x" * 90,
        "path-too-long",
        "with the project root it passes",
    ),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "keep.txt").write_text("keep\n")
    return root


@pytest.mark.parametrize(("path", "code", "message"), CASES, ids=lambda v: str(v)[:20])
@pytest.mark.parametrize("kind", ["CREATE", "EDIT", "READ"])
def test_teddy_execute_refuses_in_one_line(
    project: Path, tmp_path: Path, path: str, code: str, message: str, kind: str
) -> None:
    action = {"CREATE": create, "READ": read}.get(kind)
    text = plan(action(path) if action else edit(path, "a", "b"))
    plan_file = tmp_path / "plan.md"  # stateless mode: nothing but the actions writes
    plan_file.write_text(text)
    before = snapshot(project)

    result = teddy(project, "execute", "-y", str(plan_file), check=1)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert len(lines[0]) < 500  # the path is cut in the middle, not printed whole
    assert "Traceback" not in result.stdout + result.stderr

    result = teddy(project, "execute", "-y", "--json", str(plan_file), check=1)
    assert [e["code"] for e in json.loads(result.stdout)["errors"]] == [code]
    assert snapshot(project) == before


def test_in_a_session_the_turn_fails_validation_and_nothing_else_is_written(
    project: Path,
) -> None:
    turn = start_session(project)
    (turn / "plan.md").write_text(plan(create(DEEP) + "\n\n" + create(LONG_NAME)))
    result = teddy(project, "execute", "-y", "--no-replan", check=1)
    assert "Traceback" not in result.stderr
    report = (turn / "report.md").read_text()
    assert "at most 128 are accepted" in report
    assert "file systems take at most 255 (NAME_MAX)" in report
    assert sorted(p.name for p in project.iterdir()) == [".teddy", "keep.txt"]


def test_a_symlink_loop_is_refused_not_a_crash(project: Path) -> None:
    (project / "loop").symlink_to("loop")
    with pytest.raises(PathRefused) as caught:
        resolve(project, "loop/x.txt")
    assert caught.value.code == "path-refused"
    with pytest.raises(PathRefused):
        write_inside(project, "loop/x.txt", b"x")


@pytest.mark.parametrize(("path", "code", "message"), CASES, ids=lambda v: str(v)[:20])
def test_the_library_refuses_before_touching_the_disk(
    project: Path, path: str, code: str, message: str
) -> None:
    before = snapshot(project)
    for call in (
        lambda: resolve(project, path),
        lambda: write_inside(project, path, b"x"),
        lambda: read_inside(project, path),
    ):
        with pytest.raises(PathRefused) as caught:
            call()
        assert caught.value.code == code
        assert message in caught.value.detail
    assert snapshot(project) == before


def test_a_symlink_into_a_sibling_whose_name_starts_like_the_project_is_refused(
    tmp_path: Path,
) -> None:
    """`proj` and `proj-keys` share a prefix of characters, not of directories: a link from
    the one into the other leads outside the project."""
    project, sibling = tmp_path / "proj", tmp_path / "proj-keys"
    project.mkdir()
    sibling.mkdir()
    (sibling / "id_rsa").write_text("secret")
    (project / "keys").symlink_to(sibling)
    for path in ("keys/id_rsa", "keys/new.txt"):
        with pytest.raises(PathRefused) as caught:
            resolve(project, path)
        assert "leads outside the project" in caught.value.detail
    assert resolve(project, "sub/x.txt") == project.resolve() / "sub/x.txt"
    assert resolve(tmp_path, "proj/keys") == sibling.resolve()  # inside tmp_path: fine
