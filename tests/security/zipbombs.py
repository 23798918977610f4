"""Hostile zip files written by hand: a member that inflates far beyond its size on disk
(a zip bomb), without ever holding the inflated bytes in memory."""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Member:
    """A zip member as stored: deflated bytes, CRC and sizes (which may lie)."""

    name: str
    body: bytes
    crc: int
    size: int
    method: int = zipfile.ZIP_DEFLATED


def deflated(name: str, data: bytes) -> Member:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return Member(name, packer.compress(data) + packer.flush(), zlib.crc32(data), len(data))


def bomb(name: str, prefix: bytes, inflated: int, *, filler: bytes = b" ") -> Member:
    """``prefix`` then ``filler`` repeated up to ``inflated`` bytes, deflated a mebibyte
    at a time: each full-flushed block compresses the same, so it is made once."""
    chunk = filler * (1024 * 1024 // len(filler))
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = packer.compress(prefix) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    assert again == block
    count = -(-(inflated - len(prefix)) // len(chunk))
    tail = packer.flush()
    crc = zlib.crc32(prefix)
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    return Member(name, head + block * count + tail, crc, len(prefix) + count * len(chunk))


def members_of(path: str) -> list[Member]:
    """The members of an ordinary zip file, deflated afresh."""
    with zipfile.ZipFile(path) as zf:
        return [deflated(info.filename, zf.read(info)) for info in zf.infolist()]


def write_zip(path: str, members: list[Member]) -> None:
    """A zip file of ``members``, their sizes as given (a lie included)."""
    out = bytearray()
    central = bytearray()
    for m in members:
        name = m.name.encode()
        offset = len(out)
        fixed = (20, 0, m.method, 0, 0x21, m.crc, len(m.body), m.size, len(name), 0)
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", *fixed) + name + m.body
        central += (
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                20,
                *fixed[:8],
                len(name),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + name
        )
    start = len(out)
    out += central
    out += struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), start, 0
    )
    with open(path, "wb") as handle:
        handle.write(out)


def declaring_parts(data: bytes, parts: int) -> bytes:
    """The zip ``data`` with a Zip64 end record (and its locator) that says it holds
    ``parts`` members; its real central directory is left where it is."""
    end = data.rfind(b"PK\x05\x06")
    start, size = struct.unpack_from("<2L", data, end + 12)[::-1]
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, parts, parts, size, start)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    tail = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, size, start, 0)
    return data[:end] + record + locator + tail
