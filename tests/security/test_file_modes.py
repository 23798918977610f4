"""Every file TeDDy creates gets 0666 less the umask (0644 under the usual 022), every
directory 0777 less the umask; a file it rewrites keeps its mode.

Files were once created 0600 whatever the umask, so a shared project's new source files
were unreadable to the group.  Checked for everything one `teddy new` + `teddy execute`
writes (CREATE, EDIT, report.md, memos.yaml, meta.yaml, the next turn's files) and for
``fs/write_text_file`` of ``plankit acp run``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.acp.host import Files
from plankit.workspace import write_inside
from tests.security.helpers import create, edit, plan, read, start_session, teddy

UMASKS = [0o022, 0o077, 0o002]


def _modes(root: Path, skip: set[Path]) -> dict[str, int]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            if path not in skip:
                out[path.relative_to(root).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return out


@pytest.mark.parametrize("umask", UMASKS, ids=lambda m: f"umask {m:03o}")
def test_teddy_new_and_execute_create_files_with_the_umask_mode(tmp_path: Path, umask: int) -> None:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    keep = root / "src" / "keep.txt"
    keep.write_text("old\n")
    keep.chmod(0o640)
    turn = start_session(root, umask=umask)
    (turn / "turn.context").write_text("src/keep.txt\n")
    (turn / "plan.md").write_text(
        plan(
            "\n\n".join(
                [
                    create("new/dir/file.txt", "hi"),
                    edit("src/keep.txt", "old", "new"),
                    read("src/keep.txt"),
                ]
            ),
            memos="[+] Files keep the user's umask.",
        )
    )
    teddy(root, "execute", "-y", umask=umask)

    made_by_test = {root / "src", keep, turn / "plan.md", turn / "turn.context"}
    modes = _modes(root, made_by_test)
    assert "new/dir/file.txt" in modes and ".teddy/memos.yaml" in modes
    assert any(name.endswith("/01/report.md") for name in modes)
    assert any(name.endswith("/02/meta.yaml") for name in modes)
    wrong = {
        name: oct(mode)
        for name, mode in modes.items()
        if mode != ((0o777 if (root / name).is_dir() else 0o666) & ~umask)
        and not (root / name).is_symlink()
    }
    assert wrong == {}
    assert stat.S_IMODE(keep.stat().st_mode) == 0o640  # EDIT kept the file's own mode
    assert keep.read_text() == "new\n"


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("umask")
def test_write_inside_gives_new_files_the_umask_mode_and_keeps_old_modes(tmp_path: Path) -> None:
    write_inside(tmp_path, "a/b/new.txt", b"x")
    assert stat.S_IMODE((tmp_path / "a" / "b" / "new.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o755
    old = tmp_path / "old.sh"
    old.write_text("#!/bin/sh\n")
    old.chmod(0o750)
    write_inside(tmp_path, "old.sh", b"#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(old.stat().st_mode) == 0o750


@pytest.mark.usefixtures("umask")
def test_acp_write_text_file_of_a_new_file_uses_the_umask_mode(tmp_path: Path) -> None:
    files = Files(tmp_path)
    files.write(str(tmp_path / "sub" / "new.md"), "# new\n")
    assert stat.S_IMODE((tmp_path / "sub" / "new.md").stat().st_mode) == 0o644
    existing = tmp_path / "private.md"
    existing.write_text("x\n")
    existing.chmod(0o600)
    files.write(str(existing), "y\n")
    assert stat.S_IMODE(existing.stat().st_mode) == 0o600
