"""Reading documents (plankit.textio.read_text, decode_text, read_bytes_limited): every
way a file can be wrong ends in one error naming the file, the line and the fix."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from plankit import textio
from plankit.errors import InputError
from plankit.textio import decode_text, read_bytes_limited, read_text

MIB = 1_048_576


def _refusal(path: Path, **kwargs: object) -> InputError:
    with pytest.raises(InputError) as caught:
        read_text(path, **kwargs)  # type: ignore[arg-type]
    assert caught.value.path == str(path)
    return caught.value


# --- decoding ---------------------------------------------------------------------------


def test_a_plan_saved_with_a_bom_reads_without_it_and_remembers_it() -> None:
    plain = decode_text(b"# Plan\r\n- [ ] one\n", path="plan.md")
    assert (plain.text, plain.bom) == ("# Plan\r\n- [ ] one\n", False)
    marked = decode_text(b"\xef\xbb\xbf# Plan\n", path="plan.md")
    assert (marked.text, marked.bom) == ("# Plan\n", True)


def test_a_latin1_byte_is_reported_at_its_line_and_offset() -> None:
    data = "# Plan\n\n- [ ] café\n- [ ] two\n".encode("latin-1")
    with pytest.raises(InputError) as caught:
        decode_text(data, path="plan.md")
    err = caught.value
    assert (err.code, err.path, err.line) == ("not-utf8", "plan.md", 3)
    assert err.detail == "not UTF-8 text (byte 0xe9 at offset 17); save the file as UTF-8"


def test_the_offset_and_line_of_a_bad_byte_after_a_bom_leave_the_bom_out() -> None:
    data = b"\xef\xbb\xbf# Plan\n\xff\n- [ ] two\n"
    with pytest.raises(InputError) as caught:
        decode_text(data, path="plan.md")
    assert caught.value.line == 2
    assert caught.value.detail.startswith("not UTF-8 text (byte 0xff at offset 7);")


def test_a_bad_byte_after_a_blank_first_line_is_on_line_2() -> None:
    with pytest.raises(InputError) as caught:
        decode_text(b"\n\xff plan\n", path="plan.md")
    assert caught.value.line == 2


def test_a_bad_first_byte_is_on_line_1() -> None:
    with pytest.raises(InputError) as caught:
        decode_text(b"\x80# Plan\n\n", path="plan.md")
    assert (caught.value.line, caught.value.code) == (1, "not-utf8")
    assert "at offset 0)" in caught.value.detail


@pytest.mark.parametrize(
    ("data", "line"),
    [(b"\0PNG\n\n", 1), (b"# Plan\n\nab\0c\nd\0\n", 3), (b"\n\0\n", 2)],
)
def test_a_nul_byte_is_refused_as_binary_at_its_line(data: bytes, line: int) -> None:
    with pytest.raises(InputError) as caught:
        decode_text(data, path="logo.png")
    err = caught.value
    assert (err.code, err.path, err.line) == ("nul-byte", "logo.png", line)
    assert err.detail == "contains a NUL byte; this looks like a binary file, not a text document"


@pytest.mark.parametrize("data", [b"", b"\n", b" \t\r\n\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n"])
def test_an_empty_or_blank_document_is_refused_unless_allowed(data: bytes) -> None:
    with pytest.raises(InputError) as caught:
        decode_text(data, path="plan.md")
    err = caught.value
    assert (err.code, err.path, err.line) == ("empty", "plan.md", None)
    assert err.detail == "is empty; expected a Markdown document"
    assert decode_text(data, path="plan.md", allow_empty=True).text.strip() == ""


def test_one_character_is_not_empty() -> None:
    assert decode_text(b"x", path="plan.md").text == "x"


# --- reading bytes, never more than the limit ---------------------------------------------


def test_a_file_of_exactly_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"0123456789")
    assert read_bytes_limited(path, 10) == b"0123456789"
    with pytest.raises(OSError, match="limit") as caught:
        read_bytes_limited(path, 9)
    assert caught.value.errno == errno.EFBIG
    assert caught.value.strerror == "10 bytes, over the 9 bytes limit"


def test_a_file_of_several_mebibytes_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    data = b"".join(b"- [ ] step %07d\n" % n for n in range(200_000))  # 3.4 MB
    path.write_bytes(data)
    assert read_bytes_limited(path, len(data)) == data


def test_sizes_in_the_limit_message_switch_to_mebibytes_at_one(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with open(path, "wb") as handle:
        handle.truncate(5 * MIB + MIB // 2)
    with pytest.raises(OSError, match="limit") as caught:
        read_bytes_limited(path, MIB)
    assert caught.value.strerror == "5.5 MiB, over the 1.0 MiB limit"
    with pytest.raises(OSError, match="limit") as caught:
        read_bytes_limited(path, MIB - 1)
    assert caught.value.strerror == "5.5 MiB, over the 1,048,575 bytes limit"
    with open(path, "wb") as handle:
        handle.truncate(1_101_005)  # 1.0500002 MiB: rounded up
    with pytest.raises(OSError, match="limit") as caught:
        read_bytes_limited(path, MIB)
    assert caught.value.strerror == "1.1 MiB, over the 1.0 MiB limit"


def _grows_after_the_size_check(monkeypatch: pytest.MonkeyPatch, path: Path, extra: bytes) -> None:
    """The file is appended to right after its size is read (a log still written)."""
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        st = real(fd)
        with open(path, "ab") as handle:
            handle.write(extra)
        monkeypatch.setattr(os, "fstat", real)
        return st

    monkeypatch.setattr(os, "fstat", fstat)


@pytest.mark.parametrize("extra", [b"1", b"12345"])
def test_a_file_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: bytes
) -> None:
    path = tmp_path / "build.log"
    path.write_bytes(b"0123456789")
    _grows_after_the_size_check(monkeypatch, path, extra)
    with pytest.raises(OSError, match="limit") as caught:
        read_bytes_limited(path, 10)
    assert caught.value.errno == errno.EFBIG
    assert caught.value.strerror == "over the 10 bytes limit"


def test_a_file_that_grows_within_the_limit_while_read_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "build.log"
    path.write_bytes(b"01234")
    _grows_after_the_size_check(monkeypatch, path, b"56789")
    assert read_bytes_limited(path, 10) == b"0123456789"


def test_a_directory_a_fifo_and_a_device_are_refused_not_read(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as caught:
        read_bytes_limited(tmp_path, 100)
    assert (caught.value.errno, caught.value.strerror) == (errno.EISDIR, "is a directory")
    fifo = tmp_path / "plan.md"
    os.mkfifo(fifo)
    for special in (fifo, Path(os.devnull)):
        with pytest.raises(OSError, match="not a regular file") as caught:
            read_bytes_limited(special, 100)
        assert caught.value.errno == errno.EINVAL
        assert caught.value.strerror == "not a regular file (a FIFO, a socket or a device)"


def test_a_symbolic_link_to_a_file_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_bytes(b"# Plan\n")
    (tmp_path / "plan.md").symlink_to("real.md")
    assert read_bytes_limited(tmp_path / "plan.md", 100) == b"# Plan\n"


# --- read_text: each problem its code and its message -------------------------------------


def test_a_plan_is_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(b"\xef\xbb\xbf# Plan\n\n- [ ] one\n")
    assert read_text(path) == textio.TextFile("# Plan\n\n- [ ] one\n", True)
    assert read_text(str(path), max_bytes=23) == textio.TextFile("# Plan\n\n- [ ] one\n", True)


def test_a_missing_file_says_check_the_path(tmp_path: Path) -> None:
    err = _refusal(tmp_path / "plna.md")
    assert (err.code, err.line, err.detail) == ("not-found", None, "no such file; check the path")


def test_a_path_through_a_file_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "plan.md").write_text("# Plan\n", encoding="utf-8")
    err = _refusal(tmp_path / "plan.md" / "tasks.md")
    assert (err.code, err.detail) == ("unreadable", "cannot be read (Not a directory)")


def test_a_symlink_loop_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "plan.md").symlink_to("plan.md")
    err = _refusal(tmp_path / "plan.md")
    assert (err.code, err.detail) == (
        "unreadable",
        "cannot be read (Too many levels of symbolic links)",
    )


def test_a_directory_is_not_a_document(tmp_path: Path) -> None:
    err = _refusal(tmp_path)
    assert (err.code, err.detail) == ("is-directory", "is a directory; expected a Markdown file")


def test_a_document_over_20_mib_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "dump.md"
    with open(path, "wb") as handle:
        handle.truncate(25 * MIB)
    err = _refusal(path)
    assert (err.code, err.detail) == (
        "too-large",
        "is 25.0 MiB; documents over 20 MiB are refused (is this the right file?)",
    )
    with open(path, "wb") as handle:
        handle.truncate(textio.MAX_TEXT_BYTES)
    assert _refusal(path).code == "nul-byte"  # read: 20 MiB is not over the limit


def test_a_document_over_a_smaller_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(b"# Plan\n" * (MIB // 7 + 1))
    err = _refusal(path, max_bytes=MIB)
    assert (err.code, err.detail) == (
        "too-large",
        "is 1.0 MiB; documents over 1 MiB are refused (is this the right file?)",
    )
    with open(path, "wb") as handle:
        handle.truncate(1_101_005)  # 1.0500002 MiB: rounded up
    assert _refusal(path, max_bytes=MIB).detail.startswith("is 1.1 MiB;")


def test_a_document_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(b"# Plan\n" + b"x" * (2 * MIB - 7))
    _grows_after_the_size_check(monkeypatch, path, b"more\n")
    err = _refusal(path, max_bytes=2 * MIB)
    assert (err.code, err.detail) == ("too-large", "is over 2 MiB; refused")


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_is_refused_not_waited_on(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "plan.md"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(os.devnull)
    err = _refusal(path)
    assert (err.code, err.detail) == (
        "not-a-file",
        "is not a regular file (a FIFO, a socket or a device); refused",
    )


def test_a_file_deleted_between_the_check_and_the_read_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "plan.md"
    path.write_text("# Plan\n", encoding="utf-8")
    real = os.stat

    def stat_then_delete(name: str, *args: object, **kwargs: object) -> os.stat_result:
        st = real(name, *args, **kwargs)  # type: ignore[arg-type]
        if name == str(path):
            path.unlink()
        return st

    monkeypatch.setattr(os, "stat", stat_then_delete)
    err = _refusal(path)
    assert (err.code, err.detail) == ("unreadable", "cannot be read (No such file or directory)")


def test_an_empty_file_is_refused_unless_allowed(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(b"")
    assert _refusal(path).code == "empty"
    assert read_text(path, allow_empty=True) == textio.TextFile("", False)
