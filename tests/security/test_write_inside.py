"""plankit.workspace.write_inside / read_inside: checked and done in one step."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from plankit import textio, workspace
from plankit.workspace import PathRefused, is_temp_name, read_inside, write_inside
from tests.waiting import DEADLINE


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "proj", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    return root, outside


def test_writes_and_reads_inside_creating_directories(dirs: tuple[Path, Path]) -> None:
    root, _ = dirs
    write_inside(root, "a/b/c.txt", b"one\n")
    write_inside(root, "a/b/c.txt", b"two\n")
    assert (root / "a" / "b" / "c.txt").read_bytes() == b"two\n"
    assert read_inside(root, "a/b/c.txt") == b"two\n"
    assert sorted(os.listdir(root / "a" / "b")) == ["c.txt"]  # no temporary file left


@pytest.mark.parametrize("where", ["link/x.txt", "link"])
def test_a_symbolic_link_on_the_way_or_at_the_end_is_refused(
    dirs: tuple[Path, Path], where: str
) -> None:
    root, outside = dirs
    if where == "link":
        (outside / "target.txt").write_text("secret\n")
        (root / "link").symlink_to(outside / "target.txt")
    else:
        (root / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused, match="'link' is a symbolic link"):
        write_inside(root, where, b"pwned")
    with pytest.raises(PathRefused, match="symbolic link"):
        read_inside(root, where)
    assert sorted(os.listdir(outside)) == (["target.txt"] if where == "link" else [])
    if where == "link":
        assert (outside / "target.txt").read_text() == "secret\n"


def test_exclusive_never_replaces_a_file(dirs: tuple[Path, Path]) -> None:
    root, _ = dirs
    (root / "a.txt").write_text("theirs\n")
    with pytest.raises(FileExistsError):
        write_inside(root, "a.txt", b"mine\n", exclusive=True)
    assert (root / "a.txt").read_text() == "theirs\n"
    assert os.listdir(root) == ["a.txt"]


def test_a_file_that_appears_during_an_exclusive_write_is_kept(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = dirs
    real_fsync = os.fsync

    def someone_else_creates_it(fd: int) -> None:
        real_fsync(fd)
        if not (root / "a.txt").exists():
            (root / "a.txt").write_text("theirs\n")

    monkeypatch.setattr(os, "fsync", someone_else_creates_it)
    with pytest.raises(FileExistsError):
        write_inside(root, "a.txt", b"mine\n", exclusive=True)
    assert (root / "a.txt").read_text() == "theirs\n"
    assert os.listdir(root) == ["a.txt"]


def test_a_failed_write_removes_its_temporary_file(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = dirs
    (root / "a.txt").write_text("old\n")

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space left"):
        write_inside(root, "a.txt", b"new\n")
    assert os.listdir(root) == ["a.txt"]
    assert (root / "a.txt").read_text() == "old\n"


def test_temporary_names_are_the_shared_writers_and_recognisable(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = dirs
    seen: list[str] = []

    def record(src: str | os.PathLike[str], *args: Any, **kwargs: Any) -> None:
        seen.append(os.path.basename(os.fspath(src)))
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", record)
    name = "n" * 250 + ".md"
    for write in (
        lambda: write_inside(root, name, b"x"),
        lambda: textio.write_bytes_atomic(root / name, b"x"),
    ):
        with pytest.raises(OSError, match="Input/output error"):
            write()
    assert len(seen) == 2
    for tmp in seen:
        assert is_temp_name(tmp) and is_temp_name(tmp, name)
        assert not is_temp_name(tmp, "other.md")
        assert len(tmp.encode()) <= 255
    assert not is_temp_name(name) and not is_temp_name(".x.tmp")
    assert workspace.TEMP_RE.fullmatch(seen[0])


def test_fifos_directories_and_files_in_the_way_are_errors_not_hangs(
    dirs: tuple[Path, Path],
) -> None:
    root, _ = dirs
    os.mkfifo(root / "pipe")
    (root / "dir").mkdir()
    (root / "file").write_text("x")
    errors: list[BaseException] = []

    def attempts() -> None:
        for call in (
            lambda: read_inside(root, "pipe"),
            lambda: read_inside(root, "dir"),
            lambda: write_inside(root, "dir", b"x"),
            lambda: write_inside(root, "pipe", b"x"),
            lambda: write_inside(root, "file/x.txt", b"x"),
            lambda: read_inside(root, "missing/x.txt"),
            lambda: write_inside(root, ".", b"x"),
        ):
            try:
                call()
            except (OSError, PathRefused) as exc:
                errors.append(exc)

    worker = threading.Thread(target=attempts, daemon=True)
    worker.start()
    worker.join(DEADLINE)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert [type(e).__name__ for e in errors] == [
        "OSError",
        "IsADirectoryError",
        "IsADirectoryError",
        "OSError",
        "NotADirectoryError",
        "FileNotFoundError",
        "PathRefused",
    ]
    assert (root / "file").read_text() == "x"
