"""plankit.workspace.write_inside / read_inside: checked and done in one step."""

from __future__ import annotations

import errno
import os
import stat
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


def _record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Each descriptor flushed to disk, as (kind, inode)."""
    flushed: list[tuple[str, int]] = []
    real = os.fsync

    def recording(fd: int) -> None:
        st = os.fstat(fd)
        flushed.append(("dir" if stat.S_ISDIR(st.st_mode) else "file", st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return flushed


def test_new_directories_get_the_umask_mode_and_are_flushed_with_the_file(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = dirs
    old = os.umask(0o027)
    try:
        flushed = _record_fsyncs(monkeypatch)
        write_inside(root, "docs/plan.md", b"# Plan\n")
    finally:
        os.umask(old)
    docs = root / "docs"
    assert stat.S_IMODE(docs.stat().st_mode) == 0o750
    assert flushed == [
        ("dir", root.stat().st_ino),  # the new directory's entry
        ("file", (docs / "plan.md").stat().st_ino),
        ("dir", docs.stat().st_ino),  # the rename
    ]


def test_a_directory_another_writer_makes_at_the_same_time_is_used(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = dirs
    real = os.mkdir

    def they_were_first(name: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real(name, mode, dir_fd=dir_fd)  # the other writer's
        raise FileExistsError(17, "File exists")

    monkeypatch.setattr(os, "mkdir", they_were_first)
    write_inside(root, "a/b/c.txt", b"mine\n")
    monkeypatch.undo()
    assert (root / "a" / "b" / "c.txt").read_bytes() == b"mine\n"


def test_a_link_swapped_in_for_a_directory_just_made_is_refused(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # another process replaces the folder the moment it is made with a link leading out
    root, outside = dirs
    real = os.mkdir

    def then_swapped(name: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real(name, mode, dir_fd=dir_fd)
        os.rmdir(name, dir_fd=dir_fd)
        os.symlink(outside, name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", then_swapped)
    with pytest.raises(PathRefused) as caught:
        write_inside(root, "build/out/report.txt", b"pwned")
    monkeypatch.undo()
    assert (caught.value.code, caught.value.path) == ("path-refused", "build/out/report.txt")
    assert caught.value.detail.startswith("'build' is a symbolic link (it may have")
    assert os.listdir(outside) == []


def test_a_read_creates_no_directory(dirs: tuple[Path, Path]) -> None:
    root, _ = dirs
    with pytest.raises(FileNotFoundError):
        read_inside(root, "missing/deeper/x.txt")
    assert os.listdir(root) == []


def test_the_refusal_names_the_link_or_file_where_the_walk_stopped(
    dirs: tuple[Path, Path],
) -> None:
    root, outside = dirs
    (root / "src" / "lib").mkdir(parents=True)
    (root / "src" / "lib" / "out").symlink_to(outside, target_is_directory=True)
    (root / "src" / "notes.txt").write_text("x\n")
    for call in (
        lambda: write_inside(root, "src/lib/out/deeper/x.txt", b"pwned"),
        lambda: read_inside(root, "src/lib/out/x.txt"),
    ):
        with pytest.raises(PathRefused) as caught:
            call()
        assert caught.value.code == "path-refused"
        assert caught.value.detail.startswith("'src/lib/out' is a symbolic link (it may have")
        assert caught.value.detail.endswith("never follow one: nothing was done")
    with pytest.raises(NotADirectoryError) as not_dir:
        write_inside(root, "src/notes.txt/x.txt", b"x")
    assert (not_dir.value.errno, not_dir.value.strerror) == (
        errno.ENOTDIR,
        "'src/notes.txt' is a file, not a directory",
    )
    with pytest.raises(PathRefused, match="'src/lib/out' is a symbolic link"):
        write_inside(root, "src/lib/out", b"x")
    assert os.listdir(outside) == []


def test_the_root_itself_is_no_file(dirs: tuple[Path, Path]) -> None:
    root, _ = dirs
    for path in (".", "./", "./."):
        with pytest.raises(PathRefused) as writing:
            write_inside(root, path, b"x")
        with pytest.raises(PathRefused) as reading:
            read_inside(root, path)
        for caught in (writing, reading):
            assert (caught.value.code, caught.value.detail) == (
                "path-refused",
                "names the project root itself, not a file",
            )


def test_a_read_check_sees_the_file_before_and_after_the_read(dirs: tuple[Path, Path]) -> None:
    root, _ = dirs
    (root / "notes.txt").write_text("meeting notes\n")
    seen: list[int] = []
    assert read_inside(root, "notes.txt", check=lambda st: seen.append(st.st_ino)) == (
        b"meeting notes\n"
    )
    assert seen == [(root / "notes.txt").stat().st_ino] * 2

    def refuse(st: os.stat_result) -> None:
        if st.st_nlink > 1:
            raise PermissionError(1, "a hard link to a protected file")

    os.link(root / "notes.txt", root / "copy.txt")
    with pytest.raises(PermissionError, match="hard link"):
        read_inside(root, "copy.txt", check=refuse)


def test_a_file_named_like_a_directory_target_is_refused_as_such(
    dirs: tuple[Path, Path],
) -> None:
    root, _ = dirs
    (root / "dir").mkdir()
    os.mkfifo(root / "pipe")
    with pytest.raises(IsADirectoryError) as caught:
        write_inside(root, "dir", b"x")
    assert (caught.value.errno, caught.value.strerror) == (
        errno.EISDIR,
        "is a directory, not a file",
    )
    with pytest.raises(IsADirectoryError):
        read_inside(root, "dir")
    for call in (lambda: write_inside(root, "pipe", b"x"), lambda: read_inside(root, "pipe")):
        with pytest.raises(OSError, match="is not a regular file") as caught:
            call()
        assert (caught.value.errno, caught.value.strerror) == (
            errno.EINVAL,
            "is not a regular file",
        )
    with pytest.raises(FileExistsError) as exists:
        write_inside(root, "pipe", b"x", exclusive=True)
    assert (exists.value.errno, exists.value.strerror) == (errno.EEXIST, "the file already exists")
    assert sorted(os.listdir(root)) == ["dir", "pipe"]


def test_without_directory_descriptors_the_check_then_act_fallback_still_confines(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # platforms without dir_fd (Windows) check the path, then act on it by name
    root, outside = dirs
    monkeypatch.setattr(workspace, "HAVE_DIR_FD", False)
    write_inside(root, "a/b/c.txt", b"one\n")
    assert read_inside(root, "a/b/c.txt") == b"one\n"
    write_inside(root, "a/b/c.txt", b"two\n")
    assert (root / "a" / "b" / "c.txt").read_bytes() == b"two\n"
    with pytest.raises(FileExistsError) as exists:
        write_inside(root, "a/b/c.txt", b"three\n", exclusive=True)
    assert (exists.value.errno, exists.value.strerror) == (errno.EEXIST, "the file already exists")
    write_inside(root, "new.txt", b"new\n", exclusive=True)
    assert (root / "new.txt").read_bytes() == b"new\n"
    (root / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused):
        write_inside(root, "out/x.txt", b"pwned")
    with pytest.raises(PathRefused):
        read_inside(root, "../outside/x.txt")
    (root / "fifo").unlink(missing_ok=True)
    os.mkfifo(root / "fifo")
    with pytest.raises(OSError, match="is not a regular file"):
        read_inside(root, "fifo")  # not waited on
    assert os.listdir(outside) == []


def test_without_directory_descriptors_a_file_appearing_during_an_exclusive_write_is_kept(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = dirs
    monkeypatch.setattr(workspace, "HAVE_DIR_FD", False)
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


def test_where_directories_cannot_be_flushed_the_write_still_succeeds(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # some network file systems refuse fsync on a directory (EINVAL)
    root, _ = dirs
    real_fsync = os.fsync

    def files_only(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", files_only)
    write_inside(root, "new/dir/plan.md", b"# Plan\n")
    assert (root / "new" / "dir" / "plan.md").read_bytes() == b"# Plan\n"
