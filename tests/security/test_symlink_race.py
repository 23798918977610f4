"""Checking a path and writing it are one step: a directory swapped for a symbolic link
(pointing outside the project) while TeDDy writes never sends a byte outside.

Another process swaps ``d`` between a real directory and a link to ``outside/`` as fast
as it can, while this one runs 10,000 CREATE and EDIT actions under ``d/`` through
:func:`plankit.teddy.run.actions.run_action`.  Each action either writes inside the
project or is refused; ``outside/`` must end as it started.
"""

from __future__ import annotations

import io
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.teddy.format.model import Action, Create, Edit, EditPair
from plankit.teddy.run.actions import Runtime, run_action
from plankit.teddy.run.approval import ShowOnly
from plankit.teddy.run.report import ActionResult
from plankit.teddy.session.config import Config
from tests.security.helpers import fast_directory, snapshot
from tests.waiting import wait_until

ATTEMPTS = 10_000

# argv: the project, a directory for the swapper's own files.  Swaps `d` and `d.swap`
# (one a directory, the other a link to outside/) until `stop` appears: atomically with
# renameat2(RENAME_EXCHANGE) where the kernel has it, else by renaming the directory
# away and the link into its place.  Writes `ready` after the first swap and the count
# of swaps to `swaps` at the end.
SWAPPER = r"""
import ctypes, os, sys
project, control = sys.argv[1], sys.argv[2]
os.chdir(project)
libc = ctypes.CDLL(None, use_errno=True)
renameat2 = getattr(libc, "renameat2", None)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def exchange():
    if renameat2 is not None:
        if renameat2(AT_FDCWD, b"d", AT_FDCWD, b"d.swap", RENAME_EXCHANGE) == 0:
            return
    try:
        os.rename("d", "d.parked")
        os.rename("d.swap", "d")
        os.rename("d.parked", "d.swap")
    except OSError:
        pass
stop = os.path.join(control, "stop")
swaps = 0
while not os.path.exists(stop):
    exchange()
    swaps += 1
    if swaps == 1:
        open(os.path.join(control, "ready"), "w").close()
with open(os.path.join(control, "swaps"), "w") as f:
    f.write(str(swaps))
"""


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from fast_directory()


def _action(i: int) -> Action:
    match i % 4:
        case 0:
            return Create(f"d/f{i}.txt", "data")
        case 1:  # toggles e.txt between a and b; a FIND that misses just fails
            find, replace = ("a", "b") if i % 8 == 1 else ("b", "a")
            return Edit("d/e.txt", (EditPair(find, replace),))
        case 2:  # a directory to create on the way
            return Create(f"d/new{i}/f.txt", "data")
        case _:
            return Create(f"d/shared{i % 7}/g{i}.txt", "data")


def test_no_write_escapes_while_a_directory_and_a_symlink_are_swapped(scratch: Path) -> None:
    root, outside, control = scratch / "proj", scratch / "outside", scratch / "control"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    control.mkdir()
    (root / "d" / "e.txt").write_text("a\n")
    (outside / "e.txt").write_text("a\n")  # what an EDIT through the link would change
    (root / "d.swap").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    rt = Runtime(root, Config(), ShowOnly(io.StringIO()))

    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(control)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: (control / "ready").exists(), "the swapper's first swap")
        outcomes: Counter[str] = Counter()
        for i in range(ATTEMPTS):
            result = run_action(_action(i), rt)
            outcomes["written" if result.success else "refused or failed"] += 1
    finally:
        (control / "stop").touch()
        _, err = swapper.communicate(timeout=60)
    assert swapper.returncode == 0, err
    swaps = int((control / "swaps").read_text())

    assert snapshot(outside) == before, "a write reached outside the project"
    assert sum(outcomes.values()) == ATTEMPTS
    assert swaps > 0
    print(f"\n{ATTEMPTS} actions ({dict(outcomes)}), {swaps} swaps, 0 escapes")


def _create_with_a_swap(
    root: Path, folder: str, outside: Path, at: int
) -> tuple[ActionResult, list[Path]]:
    """A CREATE of d/x.txt whose write, the ``at``-th time it is asked, first swaps
    ``folder`` for a link to ``outside`` (the race made deterministic); its result and
    the paths the write was asked for."""
    rt = Runtime(root, Config(), ShowOnly(io.StringIO()))
    files = rt.files
    real_write = files.create_text  # type: ignore[attr-defined]
    written: list[Path] = []

    def swap_then_write(path: Path, text: str) -> None:
        written.append(path)
        if len(written) == at:
            (root / folder).rename(root / f"{folder}.old")
            (root / folder).symlink_to(outside, target_is_directory=True)
        real_write(path, text)

    files.create_text = swap_then_write  # type: ignore[attr-defined]
    return run_action(Create("d/x.txt", "data"), rt), written


def test_a_symlink_swapped_in_before_the_write_is_refused(scratch: Path) -> None:
    # The path is checked while `d` is a directory, and `d` becomes a link to outside/
    # right before the write.  The write walks into no link: it meets `d`, resolves
    # where `d` leads now, and refuses that.
    root, outside = scratch / "proj", scratch / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    result, _ = _create_with_a_swap(root, "d", outside, at=1)
    assert result.success is False
    assert "goes through a symbolic link that leads outside the project" in result.notes[0]
    assert list(outside.iterdir()) == []


def test_a_symlink_swapped_in_after_the_path_was_resolved_is_refused(scratch: Path) -> None:
    # `d` links to `e`, inside the project: the write meets the link, resolves the path
    # to e/x.txt and writes there; right before it does, `e` becomes a link to outside/.
    # The second walk follows no link either: refused, nothing written anywhere.
    root, outside = scratch / "proj", scratch / "outside"
    (root / "e").mkdir(parents=True)
    (root / "d").symlink_to("e", target_is_directory=True)
    outside.mkdir()
    result, written = _create_with_a_swap(root, "e", outside, at=2)
    assert result.success is False
    assert "'e' is a symbolic link" in result.notes[0]
    real = root.resolve()
    assert written == [real / "d/x.txt", real / "e/x.txt"]
    assert list(outside.iterdir()) == [] and list((root / "e.old").iterdir()) == []


def test_a_link_inside_the_project_is_written_through_where_it_leads(scratch: Path) -> None:
    root = scratch / "proj"
    (root / "src").mkdir(parents=True)
    (root / "lib").symlink_to("src", target_is_directory=True)
    rt = Runtime(root, Config(), ShowOnly(io.StringIO()))
    result = run_action(Create("lib/app.py", "x = 1"), rt)
    assert result.success is True, result.notes
    assert (root / "src/app.py").read_text() == "x = 1\n"
    assert (root / "lib").is_symlink()


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/srv/.git/hooks/x", "absolute paths are refused"),
        ("~/.teddy/config.yaml", "paths starting with ~ are refused"),
        ("docs/../.git/config", "'..' is refused"),
        (".git/hooks/pre-commit", "protected path: plans may not create or edit paths matching"),
    ],
)
def test_a_create_run_without_validation_is_refused_for_the_first_reason(
    scratch: Path, path: str, why: str
) -> None:
    # a library caller that skips validation: the path is judged as validation judges it,
    # what it is before which names it holds
    root = scratch / "proj"
    root.mkdir()
    result = run_action(Create(path, "x"), Runtime(root, Config(), ShowOnly(io.StringIO())))
    assert result.success is False and why in result.notes[0]
    assert [p.name for p in root.iterdir()] == []
