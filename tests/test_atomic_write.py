"""The one atomic writer every plankit file write goes through (plankit.textio)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plankit import textio
from plankit.textio import write_bytes_atomic, write_text_atomic


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for one test; the old one comes back afterwards."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


def _entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_0666_less_the_umask(
    tmp_path: Path, umask: Callable[[int], None], mask: int, expected: int
) -> None:
    umask(mask)
    target = tmp_path / "new.md"
    write_text_atomic(target, "# Plan\n")
    assert stat.S_IMODE(target.stat().st_mode) == expected
    assert target.read_text(encoding="utf-8") == "# Plan\n"


def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask: Callable[[int], None]) -> None:
    umask(0o022)
    target = tmp_path / "plan.md"
    target.write_text("old\n", encoding="utf-8")
    os.chmod(target, 0o640)
    inode = target.stat().st_ino
    write_bytes_atomic(target, b"new\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_ino != inode  # replaced by a rename, not rewritten in place
    assert _entries(tmp_path) == ["plan.md"]


def test_text_is_utf8_with_an_optional_bom(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    write_text_atomic(target, "é\r\n", bom=True)
    assert target.read_bytes() == b"\xef\xbb\xbf\xc3\xa9\r\n"
    write_text_atomic(target, "é\n")
    assert target.read_bytes() == b"\xc3\xa9\n"


def test_a_relative_path_and_a_long_name_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "p" * 250 + ".md"
    write_text_atomic(name, "x\n")
    assert _entries(tmp_path) == [name]


def _fail_replace(src: object, dst: object) -> None:
    raise OSError(28, "No space left on device")


def _interrupt_fsync(fd: int) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("name", "replacement", "error"),
    [("replace", _fail_replace, OSError), ("fsync", _interrupt_fsync, KeyboardInterrupt)],
)
def test_a_failed_write_leaves_the_target_and_no_temporary_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    replacement: Callable[..., None],
    error: type[BaseException],
) -> None:
    target = tmp_path / "plan.md"
    target.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(os, name, replacement)
    with pytest.raises(error):
        write_text_atomic(target, "new\n")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "old\n"
    assert _entries(tmp_path) == ["plan.md"]


def test_writing_over_a_directory_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "plan.md").mkdir()
    with pytest.raises(IsADirectoryError):
        write_bytes_atomic(tmp_path / "plan.md", b"x")
    assert _entries(tmp_path) == ["plan.md"]
    assert (tmp_path / "plan.md").is_dir()


def test_a_missing_folder_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_bytes_atomic(tmp_path / "nowhere" / "plan.md", b"x")


def _record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace os.fsync by one that records the kind of each descriptor it flushes."""
    kinds: list[str] = []
    real = os.fsync

    def recording(fd: int) -> None:
        mode = os.fstat(fd).st_mode
        kinds.append("dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "?")
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return kinds


def test_the_file_then_its_directory_are_flushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds = _record_fsyncs(monkeypatch)
    write_text_atomic(tmp_path / "plan.md", "x\n")
    assert kinds == ["file", "dir"]


def test_the_directory_flush_is_skipped_where_directories_cannot_be_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def no_directories(path: str, flags: int, mode: int = 0o777) -> int:
        if os.path.isdir(path):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", no_directories)
    write_text_atomic(tmp_path / "plan.md", "x\n")
    monkeypatch.undo()
    assert (tmp_path / "plan.md").read_text(encoding="utf-8") == "x\n"


def test_it_is_the_only_atomic_writer() -> None:
    """The temporary-file-and-rename dance lives in textio alone; every writer calls it."""
    src = Path(textio.__file__).parent
    copies = sorted(
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if path != Path(textio.__file__)
        and any(
            marker in path.read_text(encoding="utf-8")
            for marker in ("mkstemp", "os.replace(", "NamedTemporaryFile")
        )
    )
    assert copies == []
