"""What ``plankit acp run`` offers an agent: files (``fs/*``) and terminals (``terminal/*``).

Files are read and written inside the working directory only, with no symbolic link
followed (anything else is refused with -32602), writes atomically, creating missing
parent directories.
Terminals run the agent's command (no shell of our own: ``command`` + ``args``) in
a new process group; their output (stdout and stderr merged) is kept up to
``outputByteLimit`` bytes, cut from the beginning on a character boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plankit.errors import InputError
from plankit.workspace import read_inside, write_inside


def _refuse(message: str) -> Exception:
    from acp import RequestError

    return RequestError.invalid_params({"details": message})


class Files:
    """``fs/read_text_file`` and ``fs/write_text_file`` inside ``root``.

    The path is checked and used in one step (:func:`plankit.workspace.read_inside`,
    :func:`~plankit.workspace.write_inside`): no symbolic link is followed, so another
    process swapping a directory for a link cannot lead a write outside."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: list[Path] = []

    def _relative(self, path: str) -> str:
        target = Path(path)
        if not target.is_absolute():
            raise _refuse(f"'{path}' is not an absolute path")
        base = os.path.abspath(self.root)
        normal = os.path.normpath(path)
        if normal == base or not normal.startswith(base.rstrip(os.sep) + os.sep):
            raise _refuse(f"'{path}' is outside the working directory {self.root}; refused")
        return os.path.relpath(normal, base)

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text, from 1-based ``line``, at most ``limit`` lines."""
        from acp import RequestError

        relative = self._relative(path)
        try:
            text = read_inside(self.root, relative).decode("utf-8")
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except InputError as exc:
            raise _refuse(f"'{path}': {exc.detail}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise _refuse(f"cannot read '{path}' as UTF-8 text: {exc}") from None
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = start + limit if limit is not None else None
        return "".join(lines[start:end])

    def write(self, path: str, content: str) -> None:
        """Replace (or create) the file, atomically, creating parent directories."""
        relative = self._relative(path)
        try:
            write_inside(self.root, relative, content.encode("utf-8"))
        except InputError as exc:
            raise _refuse(f"'{path}': {exc.detail}") from None
        except OSError as exc:
            raise _refuse(f"cannot write '{path}': {exc.strerror or exc}") from None
        self.written.append(self.root / relative)


@dataclass(slots=True)
class _Terminal:
    process: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None


class Terminals:
    """The ``terminal/*`` methods."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._terminals: dict[str, _Terminal] = {}
        self.commands: list[list[str]] = []

    async def create(
        self,
        command: str,
        args: list[str] | None,
        env: list[Any] | None,
        cwd: str | None,
        limit: int | None,
    ) -> str:
        """Start the command; its terminal id."""
        workdir = Path(cwd) if cwd else self.root
        extra = {item.name: item.value for item in env or ()}
        try:
            process = await asyncio.create_subprocess_exec(
                command,
                *(args or ()),
                cwd=workdir,
                env={**os.environ, **extra},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise _refuse(f"cannot run '{command}': {exc.strerror or exc}") from None
        terminal_id = uuid.uuid4().hex
        term = _Terminal(process, limit)
        term.reader = asyncio.ensure_future(self._read(term))
        self._terminals[terminal_id] = term
        self.commands.append([command, *(args or ())])
        return terminal_id

    async def _read(self, term: _Terminal) -> None:
        assert term.process.stdout is not None
        while chunk := await term.process.stdout.read(65536):
            term.output += chunk
            if term.limit is not None and len(term.output) > term.limit:
                cut = len(term.output) - term.limit
                while cut < len(term.output) and (term.output[cut] & 0xC0) == 0x80:
                    cut += 1  # never split a UTF-8 character
                del term.output[:cut]
                term.truncated = True

    def _get(self, terminal_id: str) -> _Terminal:
        term = self._terminals.get(terminal_id)
        if term is None:
            raise _refuse(f"unknown terminal '{terminal_id}'")
        return term

    @staticmethod
    def _status(term: _Terminal) -> dict[str, Any] | None:
        code = term.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}

    async def output(self, terminal_id: str) -> dict[str, Any]:
        """``{output, truncated, exitStatus?}``."""
        term = self._get(terminal_id)
        if term.process.returncode is not None and term.reader is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(term.reader), 2)
        out: dict[str, Any] = {
            "output": term.output.decode("utf-8", errors="replace"),
            "truncated": term.truncated,
        }
        status = self._status(term)
        if status is not None:
            out["exitStatus"] = status
        return out

    async def wait(self, terminal_id: str) -> dict[str, Any]:
        """Wait for the command to end; ``{exitCode, signal}``."""
        term = self._get(terminal_id)
        await term.process.wait()
        status = self._status(term)
        assert status is not None
        return status

    async def kill(self, terminal_id: str) -> None:
        """Stop the command's process group (the terminal stays until released)."""
        term = self._get(terminal_id)
        if term.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(term.process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(term.process.wait(), 2)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(term.process.pid, signal.SIGKILL)
                await term.process.wait()

    async def release(self, terminal_id: str) -> None:
        """Kill the command if it still runs and forget the terminal."""
        await self.kill(terminal_id)
        term = self._terminals.pop(terminal_id)
        if term.reader is not None:
            term.reader.cancel()

    async def close(self) -> None:
        """Release every terminal (the session ended)."""
        for terminal_id in list(self._terminals):
            await self.release(terminal_id)
