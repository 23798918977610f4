"""A workbook is untrusted: a plan sheet that is a zip bomb, or XML that declares
entities, is refused with one line naming the part, and the workbook is left as it was.

The commands run as real processes with their address space capped at 1 GiB, so a
reader that inflates the bomb fails here (MemoryError) instead of taking the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.security.zipbombs import (
    Member,
    bomb,
    declaring_parts,
    deflated,
    members_of,
    write_zip,
)

SHEET = "xl/worksheets/sheet1.xml"
SHEET_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b"<sheetData>"
)


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def plankit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from plankit.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_cap_memory,
        check=False,
    )


@pytest.fixture
def workbook(tmp_path: Path) -> Path:
    """A real plan workbook, as `plankit checklist init` writes it."""
    path = tmp_path / "plan.xlsx"
    result = plankit("checklist", "init", "--store", str(path))
    assert result.returncode == 0, result.stderr
    return path


def replaced(path: Path, part: Member) -> bytes:
    """Rewrite ``path`` with ``part`` in place of the member of the same name."""
    members = [part if m.name == part.name else m for m in members_of(str(path))]
    assert part.name in {m.name for m in members}
    write_zip(str(path), members)
    return path.read_bytes()


def assert_refused(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


@pytest.mark.parametrize(
    "command", [["show"], ["done", "1.1"], ["next"], ["add-step", "more", "--after", "1.1"]]
)
def test_a_plan_sheet_that_inflates_to_1_5_gb_is_refused(
    workbook: Path, command: list[str]
) -> None:
    before = replaced(workbook, bomb(SHEET, SHEET_HEAD, 1536 * 1024 * 1024))
    assert len(before) < 3 * 1024 * 1024  # small on disk
    result = plankit("checklist", *command, "--store", str(workbook))
    assert_refused(result, SHEET, "1,536 MiB", "64 MiB")
    assert workbook.read_bytes() == before
    assert sorted(os.listdir(workbook.parent)) == ["plan.xlsx"]  # nothing written beside it


def test_a_part_that_lies_about_its_size_is_damaged_not_inflated(workbook: Path) -> None:
    big = bomb(SHEET, SHEET_HEAD, 512 * 1024 * 1024)
    before = replaced(workbook, Member(big.name, big.body, big.crc, 4096))
    result = plankit("checklist", "done", "1.1", "--store", str(workbook))
    assert_refused(result, SHEET, "damaged")
    assert workbook.read_bytes() == before


ENTITY_SHEET = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<!DOCTYPE worksheet [<!ENTITY e "injected">]>'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b'<sheetData><row r="2"><c r="C2" t="inlineStr"><is><t>&e;</t></is></c></row>'
    b"</sheetData></worksheet>"
)
LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(
        b'<!ENTITY %c "%s">' % (ord("a") + i, (b"&%c;" % (ord("a") + i - 1)) * 10)
        for i in range(1, 10)
    )
    + b"]>"
)


@pytest.mark.parametrize(
    ("part", "content"),
    [
        (SHEET, ENTITY_SHEET),
        (
            "xl/workbook.xml",
            LAUGHS + b'<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            b'<sheets><sheet name="&j;" sheetId="1"/></sheets></workbook>',
        ),
        (
            "_rels/.rels",
            b'<?xml version="1.0"?><!DOCTYPE Relationships SYSTEM "file:///etc/passwd">'
            b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>',
        ),
    ],
    ids=["entity-in-a-cell", "billion-laughs-workbook", "external-dtd"],
)
@pytest.mark.parametrize("command", [["show"], ["done", "1.1"]])
def test_a_part_declaring_entities_is_refused(
    workbook: Path, part: str, content: bytes, command: list[str]
) -> None:
    before = replaced(workbook, deflated(part, content))
    result = plankit("checklist", *command, "--store", str(workbook))
    assert_refused(result, part, "DOCTYPE")
    assert "ParseError" not in result.stderr
    assert workbook.read_bytes() == before


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "8-gib"])
@pytest.mark.parametrize("store", ["plan.xlsx", "PLAN.md"])
def test_a_store_that_is_a_fifo_a_device_or_huge_is_refused(
    tmp_path: Path, store: str, kind: str
) -> None:
    path = tmp_path / store
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as handle:
            handle.truncate(8 * 1024**3)  # sparse
    for command in (["show"], ["done", "1.1"]):
        result = plankit("checklist", *command, "--store", str(path))  # never waits
        assert_refused(result, str(path))


def test_a_zip_declaring_millions_of_parts_is_refused_before_its_directory_is_read(
    workbook: Path,
) -> None:
    # the Zip64 end record says 40 million parts; listing that many would take gigabytes
    workbook.write_bytes(declaring_parts(workbook.read_bytes(), 40_000_000))
    before = workbook.read_bytes()
    result = plankit("checklist", "show", "--store", str(workbook))
    assert_refused(result, "declares 40,000,000 parts, over the 65,535")
    assert workbook.read_bytes() == before
