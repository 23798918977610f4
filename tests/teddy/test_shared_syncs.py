"""A turn's flushes to disk: one file system sync per group of file writes (or per other
action), each before the effects it covers, with the journal's ``start`` entries in it
(plankit.syncing, plankit.teddy.run.batch)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plankit import syncing
from plankit.teddy.run import batch
from plankit.teddy.run.approval import ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.run.journal import JOURNAL_FILE
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import Turn, create_session
from plankit.teddy.session.prompts import get_prompt
from tests.teddy.test_session_e2e import plan

pytestmark = pytest.mark.skipif(syncing._syncfs() is None, reason="needs syncfs (Linux)")


def _creates(names: list[str]) -> str:
    return "\n\n".join(
        f"### `CREATE`\n- **File Path:** [{n}](/{n})\n```\ntext of {n}\n```" for n in names
    )


def _turn(root: Path, actions: str) -> Turn:
    session = create_session(root, "syncs", get_prompt("Developer"), "Developer")
    turn = session.latest()
    turn.plan_path.write_text(plan(actions), encoding="utf-8")
    return turn


def _execute(turn: Turn) -> None:
    execute_turn(
        turn, approver=ScriptedApprover(["approve"]), chat=ScriptedChat([]), config=Config()
    )


class Watch:
    """Spies on the real flushes: each file system sync records what the journal held and
    which files existed when it ran; fsyncs are counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, turn: Turn, files: list[str]) -> None:
        self.syncs: list[tuple[list[dict], set[str]]] = []
        self.fsyncs = 0
        real_syncfs = syncing._syncfs()
        real_fsync = os.fsync
        journal = turn.file(JOURNAL_FILE)
        root = turn.session.root

        def syncfs(fd: int) -> int:
            lines = journal.read_text().splitlines() if journal.exists() else []
            existing = {f for f in files if (root / f).exists()}
            self.syncs.append(([json.loads(line) for line in lines], existing))
            return real_syncfs(fd)

        def fsync(fd: int) -> None:
            self.fsyncs += 1
            real_fsync(fd)

        monkeypatch.setattr(syncing, "_syncfs", lambda: syncfs)
        monkeypatch.setattr(os, "fsync", fsync)

    def first_sync_with(self, event: str, index: int) -> int:
        for n, (entries, _) in enumerate(self.syncs):
            if any(e["event"] == event and e.get("index") == index for e in entries):
                return n
        raise AssertionError(f"no sync after the journal's {event} of action {index}")


def test_each_create_is_announced_on_disk_before_its_file_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["a.txt", "src/b.txt", "src/deep/c.txt"]
    turn = _turn(tmp_path, _creates(names))
    watch = Watch(monkeypatch, turn, names)
    _execute(turn)
    for index, name in enumerate(names):
        assert (tmp_path / name).read_text() == f"text of {name}\n"
        n = watch.first_sync_with("start", index)
        assert name not in watch.syncs[n][1], f"{name} existed before its start was synced"
    # the last file is on disk before the report says so: a sync after its finish
    last = watch.first_sync_with("finish", len(names) - 1)
    assert names[-1] in watch.syncs[last][1]
    # one sync when the actions begin, one for the group of three, one when they end
    assert len(watch.syncs) == 3


def test_the_flushes_of_a_turn_grow_with_its_groups_not_its_creates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = []
    for size in (2, 12, 13):
        names = [f"d{size}/f{i}.txt" for i in range(size)]
        (tmp_path / f"p{size}").mkdir()
        turn = _turn(tmp_path / f"p{size}", _creates(names))
        watch = Watch(monkeypatch, turn, names)
        monkeypatch.setattr(batch, "GROUP_MAX", 6)
        _execute(turn)
        assert all((turn.session.root / n).is_file() for n in names)
        counts.append((watch.fsyncs, len(watch.syncs)))
        monkeypatch.undo()
    fsyncs = {f for f, _ in counts}
    assert len(fsyncs) == 1  # the journal's begin, the report, the next turn
    # one sync for the actions' start and one at their end, then one per group of six
    assert [s for _, s in counts] == [3, 4, 5]


def test_a_command_runs_only_after_its_start_is_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    actions = _creates(["a.txt"]) + "\n\n### `EXECUTE`\n```shell\necho ran > out.txt\n```"
    turn = _turn(tmp_path, actions)
    watch = Watch(monkeypatch, turn, ["a.txt", "out.txt"])
    _execute(turn)
    assert (tmp_path / "out.txt").read_text() == "ran\n"
    n = watch.first_sync_with("start", 1)
    assert "out.txt" not in watch.syncs[n][1]


def test_without_syncfs_every_write_is_flushed_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = []
    for size in (2, 6):
        names = [f"f{i}.txt" for i in range(size)]
        root = tmp_path / f"p{size}"
        root.mkdir()
        turn = _turn(root, _creates(names))
        watch = Watch(monkeypatch, turn, names)
        monkeypatch.setattr(syncing, "_syncfs", lambda: None)
        _execute(turn)
        assert all((root / n).is_file() for n in names)
        assert watch.syncs == []
        counts.append(watch.fsyncs)
        monkeypatch.undo()
    # the journal's start, the file, its directory: three per CREATE
    assert counts[1] - counts[0] == 3 * 4


def test_barrier_and_deferred_outside_a_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    calls: list[str] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    with open(tmp_path / "f", "wb") as handle:
        assert syncing.deferred(handle.fileno()) is False
        syncing.barrier(handle.fileno())
        assert calls == ["fsync"]
        with syncing.shared_syncs(handle.fileno()) as gathered:
            assert gathered is True
            assert syncing.deferred(handle.fileno()) is True
            with syncing.shared_syncs() as inner:  # nested: the outer one gathers
                assert inner is True
            syncing.barrier(handle.fileno())
        assert calls == ["fsync"]
        assert syncing.deferred() is False


def test_a_failing_syncfs_fails_the_write_that_needed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = iter([0, -1])  # the first sync of the block works, the write's fails
    monkeypatch.setattr(syncing, "_syncfs", lambda: lambda fd: next(results))
    with (
        open(tmp_path / "f", "wb") as handle,
        syncing.shared_syncs(handle.fileno()),
        pytest.raises(OSError, match="syncfs failed"),
    ):
        syncing.barrier(handle.fileno())


def _other_file_system(tmp_path: Path) -> Path | None:
    """A writable folder on another file system than ``tmp_path`` (/dev/shm), if any."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        return None
    if shm.stat().st_dev == tmp_path.stat().st_dev:
        return None
    return shm


def test_a_group_writing_on_two_file_systems_syncs_both_before_any_file_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a project holding a mount point: its files are on another disk than the first's
    other = _other_file_system(tmp_path)
    if other is None:
        pytest.skip("no second file system to write on")
    import tempfile

    from plankit.teddy.format.model import Create
    from plankit.teddy.run.report import ActionResult
    from plankit.textio import stage_bytes

    real_syncfs = syncing._syncfs()
    targets = [tmp_path / "a.txt"]
    synced: list[tuple[int, list[bool]]] = []

    def syncfs(fd: int) -> int:
        synced.append((os.fstat(fd).st_dev, [t.exists() for t in targets]))
        return real_syncfs(fd)

    monkeypatch.setattr(syncing, "_syncfs", lambda: syncfs)
    with tempfile.TemporaryDirectory(dir=other) as mounted:
        targets.append(Path(mounted) / "b.txt")
        with syncing.shared_syncs():
            staged = [
                (i, ActionResult(Create(t.name, "x"), True, None, True, 0.0), stage_bytes(t, b"x"))
                for i, t in enumerate(targets)
            ]
            done = batch._publish(staged, lambda index, result: result)
        assert [r.success for r in done] == [True, True]
        assert all(t.read_bytes() == b"x" for t in targets)
        devices = {t.parent.stat().st_dev for t in targets}
        before = {device for device, seen in synced if not any(seen)}
        assert devices <= before, "a file system was not synced before the files appeared"
