"""Rewriting a zip file with some members changed and every other member copied as
it is: its compressed bytes, CRC and sizes, without decompressing anything.

:func:`rebuild` writes the members in their original order (changed ones compressed
anew with deflate), then the new ones, then the central directory.  Python's
``zipfile`` cannot copy a member without decompressing and recompressing it, which
for a large sheet costs more than everything else an update does.
"""

from __future__ import annotations

import io
import struct
import time
import zipfile
import zlib
from collections.abc import Mapping, Sequence

from plankit.checklist.errors import StoreError


def rebuild(
    data: bytes,
    infos: Sequence[zipfile.ZipInfo],
    changed: Mapping[str, bytes],
    added: Sequence[str],
    removed: set[str],
    comment: bytes,
    label: str,
) -> bytes:
    """The zip ``data`` (whose members are ``infos``) with the members in ``changed``
    replaced, those in ``removed`` left out and those in ``added`` (taken from
    ``changed``) appended."""
    out = io.BytesIO()
    central: list[bytes] = []
    view = memoryview(data)
    for info in infos:
        name = info.filename
        if name in removed:
            continue
        offset = out.tell()
        if name in changed:
            header, body = _fresh_entry(info.orig_filename, changed[name], info)
        else:
            header, body = _copied_entry(info, view)
        out.write(header)
        out.write(body)
        central.append(_central_record(header, info, offset))
    for name in added:
        offset = out.tell()
        header, body = _fresh_entry(name, changed[name], None)
        out.write(header)
        out.write(body)
        central.append(_central_record(header, None, offset))
    start = out.tell()
    for record in central:
        out.write(record)
    size = out.tell() - start
    if len(central) >= 0xFFFF or start >= 0xFFFFFFFF:
        raise StoreError(
            f"{label} is too large to be rewritten (over 4 GB or 65,535 parts)",
            code="write-failed",
        )
    out.write(
        struct.pack(
            "<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), size, start, len(comment)
        )
    )
    out.write(comment)
    return out.getvalue()


def _dos_time(date_time: tuple[int, int, int, int, int, int]) -> tuple[int, int]:
    year, month, day, hour, minute, second = date_time
    return (hour << 11) | (minute << 5) | (second // 2), ((max(year, 1980) - 1980) << 9) | (
        month << 5
    ) | day


def _name_bytes(name: str, flags: int) -> bytes:
    if flags & 0x800:
        return name.encode("utf-8")
    try:
        return name.encode("cp437")
    except UnicodeEncodeError:
        return name.encode("utf-8")


def _local_header(
    name: bytes,
    flags: int,
    method: int,
    version: int,
    stamp: tuple[int, int],
    crc: int,
    csize: int,
    usize: int,
) -> bytes:
    if csize >= 0xFFFFFFFF or usize >= 0xFFFFFFFF:
        raise StoreError(
            "a workbook part is over 4 GB; it cannot be rewritten", code="write-failed"
        )
    return (
        struct.pack(
            "<4s5H3L2H",
            b"PK\x03\x04",
            version,
            flags,
            method,
            stamp[0],
            stamp[1],
            crc,
            csize,
            usize,
            len(name),
            0,
        )
        + name
    )


def _copied_entry(info: zipfile.ZipInfo, view: memoryview) -> tuple[bytes, bytes]:
    """The local header and the compressed bytes of an entry copied unchanged."""
    if info.flag_bits & 0x1:
        raise StoreError(
            "the workbook has an encrypted part; it cannot be rewritten", code="not-a-workbook"
        )
    at = info.header_offset
    fixed = bytes(view[at : at + 30])
    if len(fixed) < 30 or fixed[:4] != b"PK\x03\x04":
        raise StoreError(
            "the workbook's zip structure is damaged; nothing was changed", code="not-a-workbook"
        )
    name_len, extra_len = struct.unpack("<2H", fixed[26:30])
    start = at + 30 + name_len + extra_len
    body = bytes(view[start : start + info.compress_size])
    flags = info.flag_bits & ~0x08  # sizes in the header: no data descriptor
    name = _name_bytes(info.orig_filename, flags)
    header = _local_header(
        name,
        flags,
        info.compress_type,
        max(info.extract_version, 20),
        _dos_time(info.date_time),
        info.CRC,
        info.compress_size,
        info.file_size,
    )
    return header, body


def _fresh_entry(name: str, data: bytes, like: zipfile.ZipInfo | None) -> tuple[bytes, bytes]:
    """The local header and compressed bytes of a new or changed part."""
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = packer.compress(data) + packer.flush()
    flags = (like.flag_bits & 0x800) if like is not None else (0x800 if not name.isascii() else 0)
    stamp = _dos_time(time.localtime()[:6])
    header = _local_header(
        _name_bytes(name, flags),
        flags,
        zipfile.ZIP_DEFLATED,
        20,
        stamp,
        zlib.crc32(data),
        len(body),
        len(data),
    )
    return header, body


def _central_record(header: bytes, like: zipfile.ZipInfo | None, offset: int) -> bytes:
    """The central directory record of the entry whose local ``header`` is given."""
    version, flags, method, t, d, crc, csize, usize, name_len, _ = struct.unpack(
        "<5H3L2H", header[4:30]
    )
    name = header[30 : 30 + name_len]
    made_by = (like.create_system << 8 | like.create_version) if like is not None else 20
    comment = like.comment if like is not None else b""
    internal = like.internal_attr if like is not None else 0
    external = like.external_attr if like is not None else 0
    return (
        struct.pack(
            "<4s6H3L5H2L",
            b"PK\x01\x02",
            made_by,
            version,
            flags,
            method,
            t,
            d,
            crc,
            csize,
            usize,
            name_len,
            0,
            len(comment),
            0,
            internal,
            external,
            offset,
        )
        + name
        + comment
    )
