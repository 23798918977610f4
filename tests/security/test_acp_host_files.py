"""``plankit acp run``'s fs/* methods: checked and used in one step, never outside, no
traceback for a hostile path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")

from plankit.acp.host import Files  # noqa: E402


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Files, Path, Path]:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return Files(inside), inside, outside


def test_a_symlink_to_outside_is_refused_for_read_and_write(setup) -> None:  # type: ignore[no-untyped-def]
    files, inside, outside = setup
    (inside / "link").symlink_to(outside)
    with pytest.raises(acp.RequestError):
        files.write(str(inside / "link" / "new.txt"), "escaped")
    with pytest.raises(acp.RequestError):
        files.read(str(inside / "link" / "secret.txt"))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_dot_dot_and_prefix_tricks_are_refused(setup) -> None:  # type: ignore[no-untyped-def]
    files, inside, outside = setup
    for path in (
        str(inside / ".." / "outside" / "x.txt"),
        str(inside) + "-sibling/x.txt",
        str(inside),
    ):
        with pytest.raises(acp.RequestError):
            files.write(path, "no")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@pytest.mark.parametrize(
    "relative", ["/".join(["d"] * 2000) + "/f.txt", "n" * 5000 + ".txt", "a/" + "b" * 300]
)
def test_hostile_paths_get_a_protocol_error_not_a_traceback(setup, relative: str) -> None:  # type: ignore[no-untyped-def]
    files, inside, _ = setup
    with pytest.raises(acp.RequestError):
        files.write(f"{inside}/{relative}", "x")
    assert list(inside.iterdir()) == []


def test_new_files_get_the_umask_mode(setup) -> None:  # type: ignore[no-untyped-def]
    files, inside, _ = setup
    old = os.umask(0o027)
    try:
        files.write(str(inside / "sub" / "f.txt"), "ok\n")
    finally:
        os.umask(old)
    assert (inside / "sub" / "f.txt").stat().st_mode & 0o777 == 0o640
    assert files.read(str(inside / "sub" / "f.txt")) == "ok\n"
