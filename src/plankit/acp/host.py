"""What ``plankit acp run`` offers an agent: files (``fs/*``) and terminals (``terminal/*``).

Files are read and written inside the working directory only (anything else is
refused with -32602), writes atomically, creating missing parent directories.  A
symbolic link is followed when it leads inside the working directory (the path is
resolved first, then the resolved path is walked with no link followed, so a link
swapped in meanwhile is refused, not followed); one leading outside is refused.

Terminals run the agent's command (no shell of our own: ``command`` + ``args``) in
the working directory or a directory inside it (a ``cwd`` outside is refused), in a
session of its own, below the same supervisor as ``teddy execute``'s commands
(:class:`plankit.teddy.run.shell.Launch`): when the terminal is killed or released,
or the client ends, the command and everything it started (``cmd &``, ``setsid``,
``nohup``, double forks) are stopped, SIGTERM then SIGKILL.  Their output (stdout and
stderr merged) is kept up to ``outputByteLimit`` bytes (at most 16 MiB), cut from the
beginning on a character boundary.
:class:`TerminalMethods` serves ACP's ``terminal/*`` requests from them, for any
client class that mixes it in.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plankit.errors import InputError
from plankit.teddy.run.shell import Launch
from plankit.workspace import read_inside, write_inside


def _refuse(message: str) -> Exception:
    from acp import RequestError

    return RequestError.invalid_params({"details": message})


def inside(base: str, path: str) -> str | None:
    """``path`` when it is ``base`` or below it (both absolute and normalised)."""
    if path == base or path.startswith(base.rstrip(os.sep) + os.sep):
        return path
    return None


class Files:
    """``fs/read_text_file`` and ``fs/write_text_file`` inside ``root``.

    The path is checked and used in one step (:func:`plankit.workspace.read_inside`,
    :func:`~plankit.workspace.write_inside`): no symbolic link is followed, so another
    process swapping a directory for a link cannot lead a write outside."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: list[Path] = []

    def _relative(self, path: str) -> str:
        """``path`` relative to the real working directory, symbolic links resolved;
        refused when it is not absolute or does not lead inside."""
        if "\0" in path or not Path(path).is_absolute():
            raise _refuse(f"'{path}' is not an absolute path")
        base = os.path.realpath(self.root)
        normal = os.path.normpath(path)
        if inside(base, normal) is None and inside(os.path.abspath(self.root), normal) is None:
            raise _refuse(f"'{path}' is outside the working directory {self.root}; refused")
        real = inside(base, os.path.realpath(normal))
        if real is None or real == base:
            raise _refuse(
                f"'{path}' leads outside the working directory {self.root} "
                "(through a symbolic link); refused"
            )
        return os.path.relpath(real, base)

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text, from 1-based ``line``, at most ``limit`` lines."""
        from acp import RequestError

        relative = self._relative(path)
        try:
            text = read_inside(Path(os.path.realpath(self.root)), relative).decode("utf-8")
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
            write_inside(Path(os.path.realpath(self.root)), relative, content.encode("utf-8"))
        except InputError as exc:
            raise _refuse(f"'{path}': {exc.detail}") from None
        except OSError as exc:
            raise _refuse(f"cannot write '{path}': {exc.strerror or exc}") from None
        self.written.append(self.root / relative)


@dataclass(slots=True)
class _Terminal:
    process: asyncio.subprocess.Process
    launch: Launch
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None
    code: int | None = None
    """The command's exit status (negative for a signal), once :attr:`ended` is set."""
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    stopping: bool = False
    """Whether the client stopped it (kill, release, the end of the run)."""
    watcher: asyncio.Task[None] | None = None


OUTPUT_CAP = 16 * 1024 * 1024
"""The most output a terminal keeps (its last bytes), whatever ``outputByteLimit``
asks: an agent cannot make the client hold a command's output without bound."""


class Terminals:
    """The ``terminal/*`` methods."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._terminals: dict[str, _Terminal] = {}
        self.commands: list[list[str]] = []

    def _workdir(self, cwd: str | None) -> Path:
        base = os.path.realpath(self.root)
        if not cwd:
            return Path(base)
        if "\0" in cwd or not Path(cwd).is_absolute():
            raise _refuse(f"terminal cwd '{cwd}' is not an absolute path")
        real = inside(base, os.path.realpath(cwd))
        if real is None:
            raise _refuse(
                f"terminal cwd '{cwd}' is outside the working directory {self.root}; refused"
            )
        if not os.path.isdir(real):
            raise _refuse(f"terminal cwd '{cwd}' is not a directory")
        return Path(real)

    async def create(
        self,
        command: str,
        args: list[str] | None,
        env: list[Any] | None,
        cwd: str | None,
        limit: int | None,
    ) -> str:
        """Start the command; its terminal id."""
        workdir = self._workdir(cwd)
        if "\0" in command or any("\0" in a for a in args or ()):
            raise _refuse("a terminal command or argument holds a NUL character")
        limit = OUTPUT_CAP if limit is None or limit > OUTPUT_CAP else max(limit, 0)
        extra = {item.name: item.value for item in env or ()}
        environ = {**os.environ, **extra}
        found = shutil.which(command, path=environ.get("PATH")) if os.sep not in command else None
        program = found or (str(workdir / command) if os.sep in command else command)
        if not os.path.isfile(program) or not os.access(program, os.X_OK):
            raise _refuse(f"cannot run '{command}': no such program")
        launch = Launch(command, program=[program, *(args or ())])
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv,
                cwd=workdir,
                env=launch.environment(extra),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                pass_fds=launch.pass_fds,
            )
        except (OSError, ValueError) as exc:  # ValueError: a NUL or '=' in a name
            launch.close()
            message = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise _refuse(f"cannot run '{command}': {message}") from None
        launch.spawned(process.pid)
        terminal_id = uuid.uuid4().hex
        term = _Terminal(process, launch, limit)
        term.reader = asyncio.ensure_future(self._read(term))
        term.watcher = asyncio.ensure_future(self._watch(term))
        self._terminals[terminal_id] = term
        self.commands.append([command, *(args or ())])
        return terminal_id

    @staticmethod
    async def _watch(term: _Terminal) -> None:
        """Wait for the supervisor to end; then the command's own exit status."""
        returncode = await term.process.wait()
        code, _ = await asyncio.to_thread(
            term.launch.finish, returncode, stopped_early=term.stopping
        )
        term.code = code
        term.ended.set()

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
        if not term.ended.is_set():
            return None
        code = term.code
        if code is None:
            return {"exitCode": None, "signal": "SIGKILL"}
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return {"exitCode": None, "signal": name}
        return {"exitCode": code, "signal": None}

    async def output(self, terminal_id: str) -> dict[str, Any]:
        """``{output, truncated, exitStatus?}``."""
        term = self._get(terminal_id)
        if term.ended.is_set() and term.reader is not None:
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
        await term.ended.wait()
        status = self._status(term)
        assert status is not None
        return status

    async def kill(self, terminal_id: str) -> None:
        """Stop the command and everything it started (the terminal stays until
        released): SIGTERM, then SIGKILL when it has not ended after the grace."""
        await self._stop(self._get(terminal_id))

    @staticmethod
    async def _stop(term: _Terminal) -> None:
        if term.process.returncode is None:
            term.stopping = True
            term.launch.terminate()
            try:
                await asyncio.wait_for(asyncio.shield(term.ended.wait()), term.launch.grace)
            except TimeoutError:
                term.launch.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(term.ended.wait()), term.launch.grace)

    async def release(self, terminal_id: str) -> None:
        """Kill the command if it still runs and forget the terminal."""
        term = self._get(terminal_id)
        await self._stop(term)
        self._terminals.pop(terminal_id, None)
        if term.reader is not None:
            term.reader.cancel()

    async def close(self) -> None:
        """Release every terminal (the session ended), all at once."""
        await asyncio.gather(
            *(self.release(terminal_id) for terminal_id in list(self._terminals)),
            return_exceptions=True,
        )


class FileMethods:
    """The client side of ACP's ``fs/*`` methods, served by a :class:`Files` in
    ``self.files`` (shared by ``plankit acp run`` and ``agentctl run``'s clients); a
    client that offers writes only on request overrides :meth:`check_write`."""

    __slots__ = ()
    files: Files

    def check_write(self) -> None:
        """Raise when ``fs/write_text_file`` is not offered (it is, here)."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        from acp.schema import ReadTextFileResponse

        return ReadTextFileResponse(content=self.files.read(path, line, limit))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        from acp.schema import WriteTextFileResponse

        self.check_write()
        self.files.write(path, content)
        return WriteTextFileResponse()


class TerminalMethods:
    """The client side of ACP's ``terminal/*`` methods, served by a
    :class:`~plankit.acp.host.Terminals` in ``self.terminals`` (shared by every client
    that offers terminals: ``plankit acp run`` and the tests' recording client)."""

    __slots__ = ()
    terminals: Terminals

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        from acp.schema import CreateTerminalResponse

        terminal_id = await self.terminals.create(command, args, env, cwd, output_byte_limit)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import TerminalOutputResponse

        return TerminalOutputResponse.model_validate(await self.terminals.output(terminal_id))

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import WaitForTerminalExitResponse

        return WaitForTerminalExitResponse.model_validate(await self.terminals.wait(terminal_id))

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import KillTerminalResponse

        await self.terminals.kill(terminal_id)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import ReleaseTerminalResponse

        await self.terminals.release(terminal_id)
        return ReleaseTerminalResponse()
