"""The limits a workbook is read within: it is untrusted input, like a plan.

- :func:`check_part_count`: a zip whose end record declares more than
  :data:`MAX_PARTS` members is refused before its directory is read (millions of tiny
  entries would take gigabytes of memory to list);
- :func:`read_part`: a part whose declared size is over :data:`MAX_PART_BYTES` is
  refused before anything is decompressed (a zip bomb: 1.5 MB on disk, 1.5 GB
  inflated); a part is inflated a mebibyte at a time and never past its declared size
  (``zipfile`` stops there and checks the CRC), so one that lies about its size is
  found damaged without being inflated whole; a part that declares a DOCTYPE or
  entities (billion laughs, an external DTD) is refused before any XML parser sees it.
"""

from __future__ import annotations

import struct
import zipfile

from plankit.checklist.errors import StoreError

MAX_PART_BYTES = 64 * 1024 * 1024
"""Most bytes a workbook part may inflate to (a plan sheet is kilobytes; a zip bomb is
gigabytes)."""

MAX_PARTS = 0xFFFF
"""Most parts (zip members) a workbook may declare: more than any workbook has, and
more than this module can write back; the zip's directory is never read past it."""


def check_part_count(data: bytes, label: str) -> None:
    """Raise :class:`StoreError` when the zip ``data`` declares too many parts."""
    parts = declared_parts(data)
    if parts > MAX_PARTS:
        raise StoreError(
            f"{label} declares {parts:,} parts, over the {MAX_PARTS:,} an xlsx workbook "
            "can have; refused (a zip bomb?); nothing was changed",
            code="not-a-workbook",
        )


def read_part(package: zipfile.ZipFile, name: str, label: str) -> bytes:
    """The bytes of part ``name``, within the limits (:class:`StoreError` otherwise);
    :class:`KeyError` when there is no such part, ``zipfile``'s errors when it is
    damaged."""
    info = package.getinfo(name)
    if info.file_size > MAX_PART_BYTES:
        raise StoreError(
            f"{label}: the workbook part {name} inflates to {_mib(info.file_size)}, "
            f"over the {_mib(MAX_PART_BYTES)} limit for a part (a zip bomb?); "
            "nothing was changed",
            code="not-a-workbook",
        )
    data = _inflate(package, info)
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise StoreError(
            f"{label}: the workbook part {name} declares a DOCTYPE or entities, which "
            "spreadsheet programs never write; refused (open and save the workbook in "
            "Excel or LibreOffice); nothing was changed",
            code="not-a-workbook",
        )
    return data


def declared_parts(data: bytes) -> int:
    """How many members the zip's end record declares (its Zip64 record when it defers to
    one); 0 when there is none (``zipfile`` then says what is wrong)."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 0xFFFF - 22))
    if end < 0 or len(data) < end + 22:
        return 0
    (total,) = struct.unpack_from("<H", data, end + 10)
    locator = end - 20
    if total != 0xFFFF or locator < 0 or data[locator : locator + 4] != b"PK\x06\x07":
        return int(total)
    (record,) = struct.unpack_from("<Q", data, locator + 8)
    if record + 40 > len(data) or data[record : record + 4] != b"PK\x06\x06":
        return int(total)
    (total64,) = struct.unpack_from("<Q", data, record + 32)
    return int(total64)


def _inflate(package: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The part's bytes, inflated a mebibyte at a time: ``zipfile`` stops at the declared
    size (then checks the CRC), so a part that lies about its size is found damaged
    without being inflated whole."""
    chunks: list[bytes] = []
    with package.open(info) as part:
        while chunk := part.read(1024 * 1024):
            chunks.append(chunk)
    return b"".join(chunks)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):,.0f} MiB" if size >= 1024 * 1024 else f"{size:,} bytes"
