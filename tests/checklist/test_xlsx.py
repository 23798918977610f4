"""XlsxWorkbook: a real workbook, read back by python-calamine; every bad input a clear
error that leaves the file as it was (real processes updating it at once:
``test_xlsx_processes.py``)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
from python_calamine import CalamineWorkbook

from plankit.checklist import (
    CellTooLargeError,
    PhaseInput,
    PlanManager,
    StoreError,
    XlsxWorkbook,
)

ROOT = Path(__file__).resolve().parents[2]


def calamine_cell(path: Path, sheet: str, row: int, col: int) -> object:
    rows = (
        CalamineWorkbook.from_path(str(path))
        .get_sheet_by_name(sheet)
        .to_python(skip_empty_area=False)
    )
    return rows[row - 1][col - 1]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "plan.xlsx"


def test_written_workbook_is_read_back_by_calamine(path: Path) -> None:
    manager = PlanManager(XlsxWorkbook(path))
    manager.init_plan(raise_errors=True)
    manager.complete_task("1.1")
    manager.block_task("1.2", "headers are merged — unmerge first")
    plan = manager.get_plan()
    assert plan is not None
    assert calamine_cell(path, "AGENT_BASE", 2, 3) == plan.raw
    assert calamine_cell(path, "AGENT_BASE", 1, 3) == "PLAN.md Contents"
    assert CalamineWorkbook.from_path(str(path)).sheet_names == ["AGENT_BASE"]


@pytest.mark.parametrize(
    "text",
    [
        "# Plan: CRLF\r\n\r\n### Phase 1: W\r\n- [ ] 1.1 A\r\n",
        "# Plan: lone CR\r### Phase 1: W\r- [ ] 1.1 A",
        "# Plan: escapes _x0041_ and _x000D_ stay literal\n\tand a tab ✅ — 🎉\n",
        "=SUM(A1:A3) must stay text, not become a formula",
        "  leading and trailing spaces  \n\n",
        "control \x01 and \x1f characters",
    ],
)
def test_text_round_trips_exactly_through_the_file(path: Path, text: str) -> None:
    store = XlsxWorkbook(path)
    store.create_sheet("AGENT_BASE")
    store.set_cell("AGENT_BASE!C2", text)
    assert store.get_cell("AGENT_BASE!C2") == text
    assert calamine_cell(path, "AGENT_BASE", 2, 3) == text
    assert openpyxl.load_workbook(path)["AGENT_BASE"]["C2"].data_type == "s"


def test_crlf_plan_is_updated_byte_for_byte(path: Path) -> None:
    text = "# Plan: W\r\n\r\n### Phase 1: W\r\n- [ ] 1.1 A\r\n- [ ] 1.2 B\r\n"
    store = XlsxWorkbook(path)
    store.create_sheet("AGENT_BASE")
    store.set_cell("AGENT_BASE!C2", text)
    PlanManager(store).start_task("1.2")
    assert calamine_cell(path, "AGENT_BASE", 2, 3) == text.replace("[ ] 1.2", "[/] 1.2")


def test_other_sheets_and_cells_are_kept(path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.active.title = "Data"
    wb["Data"]["A1"] = "SKU"
    wb["Data"]["B2"] = 42
    wb.save(path)
    manager = PlanManager(XlsxWorkbook(path))
    manager.init_plan(raise_errors=True)
    manager.start_task("1.1")
    book = CalamineWorkbook.from_path(str(path))
    assert book.sheet_names == ["Data", "AGENT_BASE"]
    rows = book.get_sheet_by_name("Data").to_python()
    assert rows[0][0] == "SKU" and rows[1][1] == 42


def test_missing_file_reads_as_empty_and_is_not_created_by_reads(path: Path) -> None:
    manager = PlanManager(XlsxWorkbook(path))
    assert manager.get_plan() is None
    assert manager.get_next_task() is None
    assert not path.exists()


def test_write_is_atomic_and_keeps_permissions(path: Path) -> None:
    manager = PlanManager(XlsxWorkbook(path))
    manager.init_plan(raise_errors=True)
    os.chmod(path, 0o640)
    inode = path.stat().st_ino
    manager.complete_task("1.1")
    assert path.stat().st_mode & 0o777 == 0o640
    assert path.stat().st_ino != inode  # replaced by a rename, not rewritten in place
    leftovers = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_new_workbook_gets_the_umask_mode_and_its_folder_is_flushed(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds: list[str] = []
    real_fsync = os.fsync

    def recording(fd: int) -> None:
        kinds.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording)
    old = os.umask(0o027)
    try:
        PlanManager(XlsxWorkbook(path)).init_plan(raise_errors=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert kinds == ["file", "dir"]


def test_a_failed_save_is_a_store_error_and_leaves_no_temporary_file(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = PlanManager(XlsxWorkbook(path))
    manager.init_plan(raise_errors=True)
    before = path.read_bytes()

    def full_disk(src: object, dst: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(StoreError, match="No space left on device") as caught:
        manager.complete_task("1.1")
    monkeypatch.undo()
    assert caught.value.code == "write-failed"
    assert str(caught.value) == (
        f"cannot write {path} (No space left on device); check that its folder is writable; "
        "nothing was changed"
    )
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir() if not p.name.endswith(".lock")) == [
        path.name
    ]


# --- bad input: a clear error, and the file as it was ---------------------------------------


def _plan_file(path: Path) -> PlanManager:
    manager = PlanManager(XlsxWorkbook(path, lock_timeout=0.2))
    manager.create_plan("Kept", "Unchanged", [PhaseInput("W", ["a", "b"])])
    return manager


@pytest.mark.parametrize("content", [b"", b"not a zip at all", b"PK\x03\x04 truncated"])
def test_file_that_is_not_a_workbook_is_a_clear_error(path: Path, content: bytes) -> None:
    path.write_bytes(content)
    manager = PlanManager(XlsxWorkbook(path))
    with pytest.raises(StoreError) as caught:
        manager.get_plan()
    assert str(caught.value).startswith(f"{path} is not an xlsx workbook (not a zip file: ")
    assert str(caught.value).endswith(
        "; an encrypted workbook or an old .xls file cannot be read); nothing was changed"
    )
    assert caught.value.code == "not-a-workbook"
    with pytest.raises(StoreError):
        manager.create_plan("New", "Goal", [PhaseInput("W", ["a"])])
    assert manager.init_plan().title == "Initialization Error"
    assert path.read_bytes() == content


def test_directory_in_place_of_the_workbook(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        PlanManager(XlsxWorkbook(tmp_path)).get_plan()


def test_read_only_workbook_is_a_clear_error(path: Path) -> None:
    manager = _plan_file(path)
    before = path.read_bytes()
    os.chmod(path, 0o444)
    try:
        with pytest.raises(StoreError, match=r"is read-only; make it writable") as caught:
            manager.complete_task("1.1")
        assert caught.value.code == "read-only"
        assert manager.get_plan() is not None  # reading still works
    finally:
        os.chmod(path, 0o644)
    assert path.read_bytes() == before


def test_a_workbook_writable_only_through_its_group_is_refused_when_the_user_cannot_write(
    path: Path,
) -> None:
    # mode r--rw-r--: the owner may not write, the group may; only a user who can write
    # the file (root, or a group member who is not the owner) gets the plan written
    manager = _plan_file(path)
    os.chmod(path, 0o464)
    try:
        if os.access(path, os.W_OK):
            manager.complete_task("1.1")
            assert "- [x] 1.1" in XlsxWorkbook(path).get_cell("AGENT_BASE!C2")
        else:
            with pytest.raises(StoreError, match="is read-only"):
                manager.complete_task("1.1")
    finally:
        os.chmod(path, 0o644)


def test_workbook_locked_by_another_process_is_a_clear_error(path: Path) -> None:
    manager = _plan_file(path)
    before = path.read_bytes()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from plankit.checklist.stores.files import file_lock\n"
            "with file_lock(sys.argv[1], 1):\n"
            "    print('held', flush=True); time.sleep(600)",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match=r"locked by another process"):
            manager.complete_task("1.1")
    finally:
        holder.kill()
        holder.wait()
    assert path.read_bytes() == before
    assert manager.complete_task("1.1").status == "done"  # free again


def test_workbook_open_in_excel_is_a_clear_error(path: Path) -> None:
    manager = _plan_file(path)
    before = path.read_bytes()
    owner = path.parent / f"~${path.name}"
    owner.write_bytes(b"excel owner file")
    with pytest.raises(StoreError, match=r"open in Excel") as caught:
        manager.start_task("1.1")
    assert caught.value.code == "locked"
    assert path.read_bytes() == before
    owner.unlink()
    assert manager.start_task("1.1").status == "doing"


def test_a_long_workbook_name_open_in_excel_is_a_clear_error(tmp_path: Path) -> None:
    # for a name of eight characters or more, Excel's owner file drops the first two
    path = tmp_path / "Budget 2026.xlsx"
    manager = _plan_file(path)
    before = path.read_bytes()
    (tmp_path / "~$dget 2026.xlsx").write_bytes(b"excel owner file")
    with pytest.raises(StoreError) as caught:
        manager.start_task("1.1")
    assert str(caught.value) == (
        f"{path} is open in Excel (~$dget 2026.xlsx exists); close it in Excel and try "
        "again (if Excel is not running, delete ~$dget 2026.xlsx)"
    )
    assert caught.value.code == "locked"
    assert path.read_bytes() == before


def test_plan_over_the_excel_cell_limit_is_refused_before_writing(path: Path) -> None:
    manager = _plan_file(path)
    before = path.read_bytes()
    long_steps = ["x" * 1000 for _ in range(33)]
    with pytest.raises(CellTooLargeError, match=r"more than the 32,767 a cell of an Excel"):
        manager.create_plan("Too big", "Overflow", [PhaseInput("W", long_steps)])
    assert path.read_bytes() == before


def test_update_that_would_overflow_the_cell_is_refused(path: Path) -> None:
    store = XlsxWorkbook(path)
    store.create_sheet("AGENT_BASE")
    near_limit = "# Plan: Full\n\n### Phase 1: W\n- [ ] 1.1 A\n" + "y" * (32_767 - 60)
    store.set_cell("AGENT_BASE!C2", near_limit)
    before = path.read_bytes()
    with pytest.raises(CellTooLargeError):
        PlanManager(store).block_task("1.1", "a reason long enough to push it over " * 2)
    assert path.read_bytes() == before


def test_emoji_count_twice_towards_the_limit(path: Path) -> None:
    store = XlsxWorkbook(path)
    store.create_sheet("AGENT_BASE")
    store.set_cell("AGENT_BASE!C2", "🎉" * 16_383)  # 32,766 UTF-16 units: fits
    with pytest.raises(CellTooLargeError):
        store.set_cell("AGENT_BASE!C2", "🎉" * 16_384)


@pytest.mark.parametrize("name", ["plan.xlsx", "PLAN.md"])
def test_a_missing_folder_is_reported_not_created(tmp_path: Path, name: str) -> None:
    from plankit.checklist import open_store

    target = tmp_path / "no" / "such" / name
    manager = PlanManager(open_store(str(target)))
    assert manager.get_plan() is None
    with pytest.raises(StoreError) as caught:
        manager.create_plan("T", "G", [PhaseInput("W", ["a"])])
    assert str(caught.value) == (
        f"cannot write {target}: the folder {target.parent} does not exist (plankit does not "
        "create folders); check the path"
    )
    assert caught.value.code == "no-folder"
    assert not (tmp_path / "no").exists()


def test_messages_name_the_workbook_and_the_plan_cell(path: Path) -> None:
    manager = PlanManager(XlsxWorkbook(path))
    assert manager.where == f"{path}, AGENT_BASE!C2 (the file does not exist; check the path)"
    manager.init_plan(raise_errors=True)
    assert manager.where == f"{path}, AGENT_BASE!C2"
