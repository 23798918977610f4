"""Reading a resource into input.md while a directory and a symbolic link to outside the
project are swapped: the secret outside never reaches input.md (the file that was opened
is checked, not only the path before it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.teddy.context.payload import build_payload
from tests.security.helpers import fast_directory
from tests.security.test_symlink_race import SWAPPER
from tests.waiting import wait_until

BUILDS = 2_000


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from fast_directory()


def test_no_secret_from_outside_while_the_path_is_swapped(scratch: Path) -> None:
    root, outside, control = scratch / "proj", scratch / "outside", scratch / "control"
    (root / "d").mkdir(parents=True)
    (root / ".teddy").mkdir()
    outside.mkdir()
    control.mkdir()
    (root / "d" / "notes.txt").write_text("inside\n")
    (outside / "notes.txt").write_text("SECRET-OUTSIDE\n")
    (root / "d.swap").symlink_to(outside, target_is_directory=True)
    (root / ".teddy" / "global.context").write_text("d/notes.txt\n")
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(control)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    seen = {"inside": 0, "refused or missing": 0}
    try:
        wait_until(lambda: (control / "ready").exists(), "the swapper's first swap")
        for _ in range(BUILDS):
            text = build_payload(root, None, None, max_file_bytes=1000)
            assert "SECRET-OUTSIDE" not in text
            seen["inside" if "\ninside\n" in text else "refused or missing"] += 1
    finally:
        (control / "stop").touch()
        _, err = swapper.communicate(timeout=60)
    assert swapper.returncode == 0, err
    assert int((control / "swaps").read_text()) > 0
    print(f"\n{BUILDS} payloads {seen}, 0 leaks")


def test_a_link_swapped_in_right_before_the_open_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the race made deterministic: `d` is a directory when the path is checked and a
    # link to outside/ when the file is opened
    import os

    root, outside = tmp_path / "proj", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    (root / ".teddy").mkdir()
    outside.mkdir()
    (root / "d" / "notes.txt").write_text("inside\n")
    (outside / "notes.txt").write_text("SECRET-OUTSIDE\n")
    (root / ".teddy" / "global.context").write_text("d/notes.txt\n")
    real_open = os.open

    def swap_then_open(path: str, *args: object, **kwargs: object) -> int:
        if str(path).endswith("notes.txt") and not (root / "d").is_symlink():
            (root / "d").rename(root / "d.old")
            (root / "d").symlink_to(outside, target_is_directory=True)
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", swap_then_open)
    text = build_payload(root, None, None)
    assert "SECRET-OUTSIDE" not in text
    assert "Refused: a symbolic link on this path leads outside the project root." in text
