"""The one atomic writer every plankit file write goes through (plankit.textio)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plankit import textio, write_temps
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


def _fail_replace(src: object, dst: object, **kwargs: object) -> None:
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


def _record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """Replace os.fsync by one that records each descriptor it flushes: its kind, inode
    and size then."""
    flushed: list[tuple[str, int, int]] = []
    real = os.fsync

    def recording(fd: int) -> None:
        st = os.fstat(fd)
        kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "?"
        flushed.append((kind, st.st_ino, st.st_size if kind == "file" else 0))
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return flushed


@pytest.mark.parametrize("held_dir", [False, True], ids=["path", "held"])
def test_the_whole_file_then_its_directory_are_flushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int, held_dir: bool
) -> None:
    flushed = _record_fsyncs(monkeypatch)
    if held_dir:
        write_bytes_atomic("plan.md", b"# Plan\n", dir_fd=held)
    else:
        write_text_atomic(tmp_path / "plan.md", "# Plan\n")
    monkeypatch.undo()
    assert flushed == [
        ("file", (tmp_path / "plan.md").stat().st_ino, 7),  # every byte, before the rename
        ("dir", tmp_path.stat().st_ino, 0),
    ]


def test_the_directory_flush_is_skipped_where_directories_cannot_be_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def no_directories(path: str, flags: int, mode: int = 0o777, **kwargs: object) -> int:
        if flags & getattr(os, "O_DIRECTORY", 0) or os.path.isdir(path):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", no_directories)
    write_text_atomic(tmp_path / "plan.md", "x\n")
    monkeypatch.undo()
    assert (tmp_path / "plan.md").read_text(encoding="utf-8") == "x\n"


@pytest.fixture
def held(tmp_path: Path) -> Iterator[int]:
    """A descriptor of tmp_path, as a caller that walked there holds it."""
    fd = os.open(tmp_path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    yield fd
    os.close(fd)


def test_a_bare_name_is_written_in_a_held_directory(tmp_path: Path, held: int) -> None:
    (tmp_path / "plan.md").write_text("old\n", encoding="utf-8")
    os.chmod(tmp_path / "plan.md", 0o640)
    write_bytes_atomic("plan.md", b"new\n", dir_fd=held)
    assert (tmp_path / "plan.md").read_bytes() == b"new\n"
    assert stat.S_IMODE((tmp_path / "plan.md").stat().st_mode) == 0o640
    assert _entries(tmp_path) == ["plan.md"]


def test_a_held_directory_takes_bare_names_only(held: int) -> None:
    for name in ("sub/plan.md", ""):
        with pytest.raises(ValueError, match="bare file name"):
            write_bytes_atomic(name, b"x", dir_fd=held)


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symbolic_link_in_a_held_directory_is_replaced_not_followed(
    tmp_path: Path, held: int, umask: Callable[[int], None], dangling: bool
) -> None:
    umask(0o022)
    outside = tmp_path / "outside.md"
    if not dangling:
        outside.write_text("keep\n", encoding="utf-8")
        os.chmod(outside, 0o600)
    (tmp_path / "plan.md").symlink_to(outside)
    write_bytes_atomic("plan.md", b"new\n", dir_fd=held)
    assert not dangling or not outside.exists()
    assert dangling or outside.read_text(encoding="utf-8") == "keep\n"
    assert not (tmp_path / "plan.md").is_symlink()
    assert (tmp_path / "plan.md").read_bytes() == b"new\n"
    # a new file: not the link's own 0777 (world-writable), nor its target's mode
    assert stat.S_IMODE((tmp_path / "plan.md").stat().st_mode) == 0o644


@pytest.mark.parametrize("held_dir", [False, True], ids=["path", "held"])
def test_exclusive_never_replaces(tmp_path: Path, held: int, held_dir: bool) -> None:
    def write(name: str, data: bytes) -> None:
        if held_dir:
            write_bytes_atomic(name, data, dir_fd=held, exclusive=True)
        else:
            write_bytes_atomic(tmp_path / name, data, exclusive=True)

    write("new.md", b"first\n")
    assert (tmp_path / "new.md").read_bytes() == b"first\n"
    with pytest.raises(FileExistsError) as caught:
        write("new.md", b"second\n")
    assert (caught.value.errno, caught.value.strerror) == (errno.EEXIST, "the file already exists")
    assert caught.value.filename == ("new.md" if held_dir else str(tmp_path / "new.md"))
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        write("dangling.md", b"x")
    assert (tmp_path / "new.md").read_bytes() == b"first\n"
    assert _entries(tmp_path) == ["dangling.md", "new.md"]


def test_exclusive_keeps_a_file_that_appears_during_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync
    target = tmp_path / "plan.md"

    def meanwhile(fd: int) -> None:
        real_fsync(fd)
        if not target.exists():
            target.write_text("theirs\n", encoding="utf-8")

    monkeypatch.setattr(os, "fsync", meanwhile)
    with pytest.raises(FileExistsError):
        write_bytes_atomic(target, b"ours\n", exclusive=True)
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "theirs\n"
    assert _entries(tmp_path) == ["plan.md"]


def test_temporary_names_are_recognised() -> None:
    name = write_temps.temp_name("plan.md")
    assert write_temps.is_temp_name(name) and write_temps.is_temp_name(name, "plan.md")
    assert not write_temps.is_temp_name(name, "other.md")
    assert not write_temps.is_temp_name("plan.md")
    long = "p" * 300
    assert len(write_temps.temp_name(long)) < 255 and write_temps.is_temp_name(
        write_temps.temp_name(long), long
    )


def test_temporary_names_are_random_without_a_system_call_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: list[int] = []
    real = os.urandom
    monkeypatch.setattr(os, "urandom", lambda n: (drawn.append(n), real(n))[1])
    monkeypatch.setattr(write_temps, "_RANDOM", [])
    names = {write_temps.temp_name("plan.md") for _ in range(200)}
    assert len(names) == 200
    assert drawn == [256] * 4  # 64 names a draw


def test_a_forked_child_draws_temporary_names_of_its_own() -> None:
    write_temps.temp_name("plan.md")  # the pool holds bytes the child must not reuse
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the next name it would give
        os.close(read)
        os.write(write, write_temps.temp_name("plan.md").encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        childs = pipe.read().decode()
    os.waitpid(pid, 0)
    assert write_temps.is_temp_name(childs, "plan.md")
    assert childs != write_temps.temp_name("plan.md")


def test_stray_temporary_files_of_a_killed_write_are_found(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    left = tmp_path / write_temps.temp_name("plan.md")
    left.write_bytes(b"half")
    other = tmp_path / write_temps.temp_name("other.md")
    other.write_bytes(b"x")
    (tmp_path / ".plan.md.tmp").write_bytes(b"not ours")
    assert write_temps.stray_temp_files(target) == [left]
    assert write_temps.stray_temp_files(tmp_path / "missing-dir" / "plan.md") == []


KNOWN_COPIES: frozenset[str] = frozenset()
"""Modules that still do the dance themselves; each should call write_bytes_atomic
(``dir_fd=`` and ``exclusive=`` cover a walk that holds the directory)."""


def test_it_is_the_only_atomic_writer() -> None:
    """The temporary-file-and-rename dance lives in textio alone; every writer calls it."""
    src = Path(textio.__file__).parent
    copies = {
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if path != Path(textio.__file__)
        and any(
            marker in path.read_text(encoding="utf-8")
            for marker in ("mkstemp", "os.replace(", "NamedTemporaryFile", "os.link(")
        )
    }
    assert sorted(copies - KNOWN_COPIES) == [], "write through plankit.textio.write_bytes_atomic"
    assert sorted(KNOWN_COPIES - copies) == [], "no longer a copy: remove from KNOWN_COPIES"


def _names_from(monkeypatch: pytest.MonkeyPatch, *tokens: str) -> None:
    """The random parts of the next temporary names, in order (the last one repeats)."""
    left = list(tokens)
    monkeypatch.setattr(write_temps, "_token", lambda: left.pop(0) if len(left) > 1 else left[0])


def test_a_temporary_name_already_taken_is_skipped_and_its_file_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = tmp_path / ".plan.md.0000beef.tmp"  # a stray of a killed write
    taken.write_bytes(b"half a plan")
    _names_from(monkeypatch, "0000beef", "0000cafe")
    write_bytes_atomic(tmp_path / "plan.md", b"# Plan\n")
    assert (tmp_path / "plan.md").read_bytes() == b"# Plan\n"
    assert taken.read_bytes() == b"half a plan"
    assert _entries(tmp_path) == [taken.name, "plan.md"]


def test_no_free_temporary_name_is_an_error_that_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".plan.md.0000beef.tmp").write_bytes(b"x")
    (tmp_path / "plan.md").write_bytes(b"old\n")
    _names_from(monkeypatch, "0000beef")
    with pytest.raises(FileExistsError) as caught:
        write_bytes_atomic(tmp_path / "plan.md", b"new\n")
    assert (caught.value.errno, caught.value.strerror) == (
        errno.EEXIST,
        "no free temporary file name next to plan.md",
    )
    assert (tmp_path / "plan.md").read_bytes() == b"old\n"
    assert _entries(tmp_path) == [".plan.md.0000beef.tmp", "plan.md"]


def _sweep_takes_the_first_temporary_file(
    monkeypatch: pytest.MonkeyPatch, *, finish: bool
) -> list[int]:
    """A sweep of another process (here: another open file) locks the first temporary
    file right after it is created; with ``finish`` it also removes it and lets go.
    The descriptors the sweep still holds are returned, to close."""
    import fcntl

    real = os.open
    held: list[int] = []

    def open_then_swept(path: str, flags: int, mode: int = 0o777, **kwargs: object) -> int:
        fd = real(path, flags, mode, **kwargs)  # type: ignore[arg-type]
        if flags & os.O_CREAT and not held:
            sweep = real(path, os.O_RDONLY, **kwargs)  # type: ignore[arg-type]
            fcntl.flock(sweep, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(sweep)
            if finish:
                os.unlink(path, **kwargs)  # type: ignore[arg-type]
                fcntl.flock(sweep, fcntl.LOCK_UN)
        return fd

    monkeypatch.setattr(os, "open", open_then_swept)
    return held


@pytest.mark.parametrize("finish", [False, True], ids=["sweep-running", "sweep-done"])
def test_a_temporary_file_a_sweep_took_first_is_left_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, finish: bool
) -> None:
    _names_from(monkeypatch, "0000beef", "0000cafe")
    held = _sweep_takes_the_first_temporary_file(monkeypatch, finish=finish)
    try:
        write_bytes_atomic(tmp_path / "plan.md", b"# Plan\n")
    finally:
        monkeypatch.undo()
        for fd in held:
            os.close(fd)
    assert (tmp_path / "plan.md").read_bytes() == b"# Plan\n"
    # the sweep's file was not written: still there, empty, for the sweep to remove
    swept = tmp_path / ".plan.md.0000beef.tmp"
    assert _entries(tmp_path) == ([] if finish else [swept.name]) + ["plan.md"]
    assert finish or swept.read_bytes() == b""


def test_abandoned_temporary_files_are_removed_and_others_left(tmp_path: Path) -> None:
    strays = [tmp_path / write_temps.temp_name("plan.md") for _ in range(2)]
    for path in strays:
        path.write_bytes(b"half")
    other = tmp_path / write_temps.temp_name("notes.md")
    other.write_bytes(b"half")
    link = tmp_path / ".plan.md.0000beef.tmp"
    link.symlink_to(tmp_path / "plan.md")
    (tmp_path / "plan.md").write_bytes(b"# Plan\n")
    folder = tmp_path / ".plan.md.0000cafe.tmp"
    folder.mkdir()
    os.mkfifo(tmp_path / ".plan.md.0000f1f0.tmp")
    assert write_temps.remove_abandoned_temp_files(tmp_path, "plan.md") == 2
    assert not any(path.exists() for path in strays)
    assert _entries(tmp_path) == sorted(
        [other.name, link.name, folder.name, ".plan.md.0000f1f0.tmp", "plan.md"]
    )
    assert (tmp_path / "plan.md").read_bytes() == b"# Plan\n"  # the link's target too
    assert write_temps.remove_abandoned_temp_files(tmp_path) == 1  # every name: notes.md's
    assert write_temps.remove_abandoned_temp_files(tmp_path / "missing") == 0


def test_a_sweep_goes_on_past_links_named_like_temporary_files(tmp_path: Path) -> None:
    # links and strays in turn, so that some link is listed before some stray whatever
    # order the file system lists them in
    (tmp_path / "plan.md").write_bytes(b"# Plan\n")
    links, strays = [], []
    for n in range(6):
        link = tmp_path / f".plan.md.0000aa{n:02x}.tmp"
        link.symlink_to("plan.md")
        links.append(link)
        stray = tmp_path / f".plan.md.0000bb{n:02x}.tmp"
        stray.write_bytes(b"half")
        strays.append(stray)
    assert write_temps.remove_abandoned_temp_files(tmp_path, "plan.md") == 6
    assert _entries(tmp_path) == sorted([link.name for link in links] + ["plan.md"])


def test_a_running_write_keeps_its_temporary_file_from_a_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.fsync
    swept: list[int] = []

    def sweep_meanwhile(fd: int) -> None:
        real(fd)
        if not swept:
            swept.append(write_temps.remove_abandoned_temp_files(tmp_path))

    monkeypatch.setattr(os, "fsync", sweep_meanwhile)
    write_bytes_atomic(tmp_path / "plan.md", b"# Plan\n")
    monkeypatch.undo()
    assert swept == [0]
    assert (tmp_path / "plan.md").read_bytes() == b"# Plan\n"


@pytest.mark.parametrize("held_dir", [False, True], ids=["path", "held"])
def test_exclusive_works_where_hard_links_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int, held_dir: bool
) -> None:
    def no_links(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # FAT, some network shares

    monkeypatch.setattr(os, "link", no_links)

    def write(name: str, data: bytes) -> None:
        if held_dir:
            write_bytes_atomic(name, data, dir_fd=held, exclusive=True)
        else:
            write_bytes_atomic(tmp_path / name, data, exclusive=True)

    write("new.md", b"first\n")
    assert (tmp_path / "new.md").read_bytes() == b"first\n"
    with pytest.raises(FileExistsError):
        write("new.md", b"second\n")
    assert (tmp_path / "new.md").read_bytes() == b"first\n"
    assert _entries(tmp_path) == ["new.md"]


def test_an_exclusive_write_that_cannot_link_for_another_reason_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "link", broken)
    with pytest.raises(OSError, match="Input/output error"):
        write_bytes_atomic(tmp_path / "new.md", b"x", exclusive=True)
    assert _entries(tmp_path) == []


def test_a_path_through_a_symbolic_link_gets_its_targets_mode(
    tmp_path: Path, umask: Callable[[int], None]
) -> None:
    # the link is replaced by the new file; the mode is the one the user gave the file
    umask(0o022)
    real = tmp_path / "real.md"
    real.write_text("old\n", encoding="utf-8")
    os.chmod(real, 0o600)
    (tmp_path / "plan.md").symlink_to("real.md")
    write_bytes_atomic(tmp_path / "plan.md", b"new\n")
    assert not (tmp_path / "plan.md").is_symlink()
    assert stat.S_IMODE((tmp_path / "plan.md").stat().st_mode) == 0o600
    assert real.read_bytes() == b"old\n"


def test_an_exclusive_write_that_cannot_drop_its_temporary_name_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "Input/output error")  # the disk went away

    monkeypatch.setattr(os, "unlink", broken)
    with pytest.raises(OSError, match="Input/output error") as caught:
        write_bytes_atomic(tmp_path / "new.md", b"x", exclusive=True)
    assert caught.value.errno == errno.EIO


def test_without_hard_links_a_file_appearing_during_an_exclusive_write_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    real_fsync = os.fsync
    target = tmp_path / "plan.md"

    def meanwhile(fd: int) -> None:
        real_fsync(fd)
        if not target.exists():
            target.write_text("theirs\n", encoding="utf-8")

    monkeypatch.setattr(os, "link", no_links)
    monkeypatch.setattr(os, "fsync", meanwhile)
    with pytest.raises(FileExistsError):
        write_bytes_atomic(target, b"ours\n", exclusive=True)
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "theirs\n"
    assert _entries(tmp_path) == ["plan.md"]


def test_where_files_cannot_be_locked_writes_and_sweeps_still_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # some network file systems have no flock: every temporary file is then its own
    import fcntl

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    write_bytes_atomic(tmp_path / "plan.md", b"# Plan\n")
    stray = tmp_path / write_temps.temp_name("plan.md")
    stray.write_bytes(b"half")
    assert write_temps.remove_abandoned_temp_files(tmp_path) == 1
    assert _entries(tmp_path) == ["plan.md"]


# --- the two halves: staged, then published or discarded ------------------------------


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


def test_a_staged_write_changes_nothing_until_it_is_published(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("old\n")
    target.chmod(0o640)
    staged = textio.stage_bytes(target, b"new\n")
    assert target.read_text() == "old\n"  # readers still see the old file
    [temp] = [n for n in _entries(tmp_path) if n != "notes.md"]
    assert write_temps.is_temp_name(temp, "notes.md")
    assert (tmp_path / temp).read_bytes() == b"new\n"  # written in full already
    assert stat.S_IMODE((tmp_path / temp).stat().st_mode) == 0o640  # the target's mode
    staged.publish()
    assert target.read_text() == "new\n"
    assert _entries(tmp_path) == ["notes.md"]
    staged.discard()  # over: nothing more happens
    assert target.read_text() == "new\n"
    with pytest.raises(ValueError, match="over"):
        staged.fd  # noqa: B018


def test_a_discarded_write_leaves_the_target_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("old\n")
    staged = textio.stage_bytes(target, b"new\n")
    staged.discard()
    assert target.read_text() == "old\n"
    assert _entries(tmp_path) == ["notes.md"]
    staged.discard()
    assert _entries(tmp_path) == ["notes.md"]


def test_a_staged_create_never_replaces_a_file_that_appeared(tmp_path: Path) -> None:
    target = tmp_path / "new.md"
    staged = textio.stage_bytes(target, b"mine\n", exclusive=True)
    target.write_text("theirs\n")  # another program, between the check and the rename
    with pytest.raises(FileExistsError):
        staged.publish()
    assert target.read_text() == "theirs\n"
    assert _entries(tmp_path) == ["new.md"]
    with pytest.raises(FileExistsError):  # and an existing one is refused at once
        textio.stage_bytes(target, b"mine\n", exclusive=True)
    assert _entries(tmp_path) == ["new.md"]


def test_a_staged_write_in_a_held_directory_closes_it_when_over(tmp_path: Path) -> None:
    before = _fds()
    for end in ("publish", "discard"):
        dir_fd = os.open(tmp_path, os.O_RDONLY)
        staged = textio.stage_bytes(f"{end}.md", b"x", dir_fd=dir_fd, owned_dir=True)
        getattr(staged, end)()
    assert _fds() == before
    assert _entries(tmp_path) == ["publish.md"]
    dir_fd = os.open(tmp_path, os.O_RDONLY)
    with pytest.raises(ValueError, match="bare file name"):
        textio.stage_bytes("a/b.md", b"x", dir_fd=dir_fd, owned_dir=True)
    assert _fds() == before  # closed on failure too


def test_a_write_that_is_over_is_no_longer_unfinished(tmp_path: Path) -> None:
    # what discard_unfinished would discard after a Ctrl-C: only writes still staged
    from plankit import textio

    published = textio.stage_bytes(tmp_path / "a.txt", b"a\n")
    discarded = textio.stage_bytes(tmp_path / "b.txt", b"b\n")
    kept = textio.stage_bytes(tmp_path / "c.txt", b"c\n")
    assert {published, discarded, kept} <= textio._unfinished()
    published.commit()
    discarded.discard()
    assert textio._unfinished() == {kept}
    textio.discard_unfinished()
    assert textio._unfinished() == set()
    assert (tmp_path / "a.txt").read_bytes() == b"a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


class _KnownThenInterrupted:
    """A thread's set of unfinished writes whose ``add`` is followed by a Ctrl-C: the
    signal lands just after a new write became known, before its staging returned."""

    def __init__(self, writes: set[textio.StagedWrite]) -> None:
        self.writes = writes

    def add(self, write: textio.StagedWrite) -> None:
        self.writes.add(write)
        raise KeyboardInterrupt


@pytest.mark.parametrize("known", [False, True], ids=["before-known", "once-known"])
@pytest.mark.parametrize("held_dir", [False, True], ids=["path", "held"])
def test_a_ctrl_c_just_after_the_temporary_file_is_made_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, known: bool, held_dir: bool
) -> None:
    # A batch: the first file is staged, and Ctrl-C lands while the second one's
    # temporary file, just made, is being recorded as this thread's unfinished write.
    (tmp_path / "plan.md").write_text("old plan\n")
    first = textio.stage_bytes(tmp_path / "notes.md", b"notes\n")
    [first_temp] = [n for n in _entries(tmp_path) if write_temps.is_temp_name(n, "notes.md")]
    fds, others = _fds(), set(textio._unfinished())  # others: earlier tests' in this thread
    real = textio._unfinished
    calls: list[int] = []

    def interrupted() -> object:
        calls.append(1)
        if len(calls) > 1:  # the clean-up's own look
            return real()
        if known:
            return _KnownThenInterrupted(real())
        raise KeyboardInterrupt

    monkeypatch.setattr(textio, "_unfinished", interrupted)
    dir_fd = os.open(tmp_path, os.O_RDONLY) if held_dir else None
    target = "plan.md" if held_dir else tmp_path / "plan.md"
    with pytest.raises(KeyboardInterrupt):
        textio.stage_bytes(target, b"new plan\n", dir_fd=dir_fd, owned_dir=held_dir)
    monkeypatch.undo()
    assert (tmp_path / "plan.md").read_text() == "old plan\n"
    assert _entries(tmp_path) == sorted([first_temp, "plan.md"])  # the first write kept
    assert _fds() == fds  # its temporary file (and the held directory) closed
    assert textio._unfinished() == others | {first}  # the interrupted one is not left
    textio.discard_unfinished()  # what the interrupted turn does next
    assert _entries(tmp_path) == ["plan.md"]
