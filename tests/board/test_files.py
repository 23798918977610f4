"""How the board reads one file (plankit.board.files): what it refuses, in the words the
page shows, and how much it reads."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from plankit.board import files
from plankit.board.files import (
    FileText,
    error,
    file_error,
    iso,
    mtime,
    read_file,
    read_small,
    what_it_is,
)

ONLY_FILES = "not a regular file; the board reads files only"


def test_a_plan_is_read_whole_and_bad_bytes_do_not_stop_it(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    path.write_bytes(b"# Plan: Caf\xe9\n- [ ] 1.1 Pay\n")  # Latin-1 from an old editor
    assert read_file(path) == FileText("# Plan: Caf\ufffd\n- [ ] 1.1 Pay\n", None)
    assert read_small(path) == "# Plan: Caf\ufffd\n- [ ] 1.1 Pay\n"


def test_a_missing_file_is_nothing_to_say(tmp_path: Path) -> None:
    assert read_file(tmp_path / "PLAN.md") == FileText(None, None)
    assert read_small(tmp_path / "PLAN.md") is None
    assert file_error("docs/PLAN.md", read_file(tmp_path / "PLAN.md")) == []


def test_a_named_pipe_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "PLAN.md")
    found = read_file(tmp_path / "PLAN.md")
    assert found == FileText(None, f"is a named pipe (FIFO), {ONLY_FILES}")
    assert (
        file_error("PLAN.md", found)[0]["message"]
        == f"PLAN.md is a named pipe (FIFO), {ONLY_FILES}"
    )
    assert file_error("docs/PLAN.md", found) == [
        {
            "code": "file-refused",
            "message": f"PLAN.md is a named pipe (FIFO), {ONLY_FILES}",
            "line": None,
            "file": "docs/PLAN.md",
        }
    ]


def test_a_socket_a_directory_and_a_device_are_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "PLAN.md"))
        assert read_file(tmp_path / "PLAN.md").problem == f"is a socket, {ONLY_FILES}"
    (tmp_path / "report.md").mkdir()
    assert read_file(tmp_path / "report.md").problem == f"is a directory, {ONLY_FILES}"
    assert read_file(Path(os.devnull)).problem == f"is a device, {ONLY_FILES}"


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("# Plan: Secret\n")
    (tmp_path / "PLAN.md").symlink_to(tmp_path / "secret.md")
    found = read_file(tmp_path / "PLAN.md")
    assert found == FileText(None, "is a symbolic link; the board does not follow links")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone.md")
    assert (
        read_file(tmp_path / "dangling.md").problem
        == "is a symbolic link; the board does not follow links"
    )


def test_a_file_without_read_permission_says_why(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        path = tmp_path / "PLAN.md"  # root reads every file: a file under a file instead
        path.write_text("x")
        found = read_file(path / "child.md")
        assert found == FileText(None, "cannot be read (Not a directory)")
    else:
        path = tmp_path / "PLAN.md"
        path.write_text("x")
        path.chmod(0)
        assert read_file(path) == FileText(None, "cannot be read (Permission denied)")


def test_a_file_over_the_limit_is_refused_and_one_at_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    path.write_text("0123456789")
    assert read_file(path, 10) == FileText("0123456789")
    assert read_file(path, 9).text is None
    assert read_file(path, 9, head=True) == FileText("012345678")
    assert read_file(path, 20, head=True) == FileText("0123456789")


def test_a_huge_file_says_its_size_and_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    with path.open("wb") as out:
        out.truncate(files.MAX_TEXT + 350_000)  # sparse: costs no disk
    found = read_file(path)
    assert found.problem == (
        "is 2.4 MB, over the board's 2 MB limit (a plan is never that big: is it the right file?)"
    )
    assert read_file(path, head=True).text == "\0" * files.MAX_TEXT


def test_a_file_that_grows_while_it_is_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("{}\n" * 3)
    real = os.fstat

    def then_a_writer_appends(fd: int) -> os.stat_result:
        found = real(fd)
        with path.open("a") as log:
            log.write("{}\n" * 10)
        return found

    monkeypatch.setattr(os, "fstat", then_a_writer_appends)
    assert read_file(path, 20) == FileText(None, files.too_large(21))  # read up to one past
    monkeypatch.undo()
    assert read_file(path, 100) == FileText("{}\n" * 13)


def test_mtime_is_the_link_itself_and_zero_when_gone(tmp_path: Path) -> None:
    (tmp_path / "target.md").write_text("x")
    os.utime(tmp_path / "target.md", (1_000, 1_000))
    (tmp_path / "PLAN.md").symlink_to(tmp_path / "target.md")
    os.utime(tmp_path / "PLAN.md", (2_000, 2_000), follow_symlinks=False)
    assert mtime(tmp_path / "PLAN.md") == 2_000.0
    assert mtime(tmp_path / "gone.md") == 0.0


def test_times_and_diagnostics_in_the_apis_shape() -> None:
    assert iso(1_764_150_764.9) == "2025-11-26T09:52:44Z"
    assert error("bad-meta", "meta.yaml must be a mapping", ".teddy/s/01/meta.yaml") == {
        "code": "bad-meta",
        "message": "meta.yaml must be a mapping",
        "line": None,
        "file": ".teddy/s/01/meta.yaml",
    }


def test_each_kind_of_file_in_words() -> None:
    assert what_it_is(stat.S_IFIFO) == "a named pipe (FIFO)"
    assert what_it_is(stat.S_IFSOCK) == "a socket"
    assert what_it_is(stat.S_IFCHR) == what_it_is(stat.S_IFBLK) == "a device"
    assert what_it_is(stat.S_IFDIR) == "a directory"
    assert what_it_is(stat.S_IFLNK) == "a symbolic link"
    assert what_it_is(0o160000) == "not a regular file"  # a BSD whiteout


def test_times_are_utc_wherever_the_board_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "JST-9")  # Tokyo, without needing tzdata
    time.tzset()
    try:
        assert iso(1_764_150_764) == "2025-11-26T09:52:44Z"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_file_at_the_limit_that_grows_between_two_reads_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("x" * 20)
    real = os.read
    appended: list[bool] = []

    def then_a_writer_appends(fd: int, size: int) -> bytes:
        chunk = real(fd, size)
        if not appended:
            appended.append(True)
            with path.open("a") as log:
                log.write("y" * 10)
        return chunk

    monkeypatch.setattr(os, "read", then_a_writer_appends)
    assert read_file(path, 20) == FileText(None, files.too_large(21))


def test_a_disk_error_while_reading_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    path = tmp_path / "PLAN.md"
    path.write_text("# Plan: On a failing disk\n")

    def failing(fd: int, size: int) -> bytes:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "read", failing)
    assert read_file(path) == FileText(None, "cannot be read (Input/output error)")
