"""One TeDDy turn as ACP updates: plan, tool calls, permission requests, results.

:func:`plankit.teddy.run.execute.execute_turn` runs in a worker thread (it is synchronous
and runs commands); :class:`TurnRun` is plugged into its
:class:`~plankit.teddy.run.actions.Runtime` as the progress hook, the per-action permit,
the CHAT_WITH_USER responder, the files and the command runner.  Each of those calls
back into the event loop (:meth:`TurnRun.call`) to talk to the client, and waits.

For every action, in order: a ``tool_call`` (pending) → ``session/request_permission``
(unless an "always" answer for the action's type was given earlier in the session)
→ ``tool_call_update`` in_progress → execution → ``tool_call_update`` completed or
failed; the whole plan is sent again whenever an entry's status changes.

The client is not trusted to behave: a permission request it answers with an error
(or garbage) counts as a rejection and stops the turn there (nothing else runs, the
report says why); once it has left (``gone``), nothing more is sent to it and requests
to it fail at once, so a turn cut short still ends and writes its report.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from plankit.acp import tools
from plankit.acp.entries import action_title, plan_update, teddy_entries
from plankit.acp.runners import first, run_in_terminal, run_locally
from plankit.teddy.format.model import Action, ActionType, ChatWithUser, Create, Edit, Plan
from plankit.teddy.run.actions import LocalFiles, file_text
from plankit.teddy.run.report import ActionResult
from plankit.teddy.run.shell import CommandResult

log = logging.getLogger("plankit.acp")

T = TypeVar("T")

CANCELLED = "cancelled by the user"
REJECTED = "rejected by the user"
NO_ANSWER = "rejected: the client answered the permission request with an error"
HALTED = "not run: the permission request of an earlier action failed"
GONE = "the client disconnected"
AFTER_CHAT = "the turn ended with CHAT_WITH_USER; the reply comes with the next prompt"

_MODELS = {
    "plan": "AgentPlanUpdate",
    "tool_call": "ToolCallStart",
    "tool_call_update": "ToolCallProgress",
    "agent_message_chunk": "AgentMessageChunk",
    "agent_thought_chunk": "AgentThoughtChunk",
    "user_message_chunk": "UserMessageChunk",
    "available_commands_update": "AvailableCommandsUpdate",
}


def update_model(update: Mapping[str, Any]) -> Any:
    """The SDK model of a ``session/update`` payload given as its JSON form."""
    import acp.schema

    model = getattr(acp.schema, _MODELS[str(update["sessionUpdate"])])
    return model.model_validate(update)


async def send_update(conn: Any, session_id: str, update: Mapping[str, Any]) -> None:
    """Send one ``session/update`` notification.

    Our updates are built as wire JSON (checked against the v1 schema by the tests),
    so they go straight to the SDK's JSON-RPC connection (``conn._conn`` in the pinned
    SDK) instead of through its models: that halves the agent's cost of a 100-entry
    plan update.  Any other connection gets the SDK model.
    """
    rpc = getattr(conn, "_conn", None)
    if rpc is not None and hasattr(rpc, "send_notification"):
        params = {"sessionId": session_id, "update": dict(update)}
        await rpc.send_notification("session/update", params)
        return
    await conn.session_update(session_id=session_id, update=update_model(update))


def message_update(text: str) -> dict[str, Any]:
    """An ``agent_message_chunk`` with ``text``."""
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def thought_update(text: str) -> dict[str, Any]:
    """An ``agent_thought_chunk`` with ``text`` (a plan's Rationale)."""
    return {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}}


def user_update(text: str) -> dict[str, Any]:
    """A ``user_message_chunk`` with ``text`` (a prompt, replayed by ``session/load``)."""
    return {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}


@dataclass(frozen=True, slots=True)
class ClientCaps:
    """What the client offers, from its ``initialize`` request."""

    read: bool = False
    """``fs.readTextFile``."""
    write: bool = False
    """``fs.writeTextFile``."""
    terminal: bool = False
    """``terminal``."""


@dataclass(slots=True)
class SessionState:
    """What one ACP session remembers between prompts."""

    session_id: str
    """The ACP session id (the TeDDy session's directory name)."""
    root: Path
    """The project root (the ``cwd`` of ``session/new``)."""
    remembered: dict[ActionType, bool] = field(default_factory=dict)
    """"Always allow" (True) and "always reject" (False) answers, per action type."""
    cancel: asyncio.Event | None = None
    """Set by ``session/cancel`` while a prompt runs."""
    running: bool = False
    """Whether a prompt is running."""
    created: bool = False
    """Whether the TeDDy session exists on disk (its first prompt creates it)."""


@dataclass(frozen=True, slots=True)
class _Failed:
    """A permission request that got no usable answer."""

    why: str
    """What came back instead."""


class ClientFiles:
    """Files read and written through the client's ``fs/*`` methods when it offers them
    (so an editor sees unsaved buffers and can review the edits), locally otherwise.

    Existence is checked on the local disk: a stdio agent runs on the client's machine.
    """

    def __init__(self, run: TurnRun) -> None:
        self.run = run
        self.local = LocalFiles()

    def exists(self, path: Path) -> bool:
        return self.local.exists(path)

    def read_text(self, path: Path) -> str:
        if not self.run.caps.read:
            return self.local.read_text(path)
        from acp import RequestError

        try:
            response = self.run.ask(
                self.run.conn.read_text_file(session_id=self.run.session_id, path=str(path))
            )
        except RequestError as exc:
            if not path.exists():
                raise FileNotFoundError(str(path)) from None
            raise OSError(f"the client could not read {path}: {exc}") from None
        text: str = response.content
        return text

    def write_text(self, path: Path, text: str) -> None:
        if not self.run.caps.write:
            self.local.write_text(path, text)
            return
        from acp import RequestError

        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.run.ask(
                self.run.conn.write_text_file(
                    session_id=self.run.session_id, path=str(path), content=text
                )
            )
        except RequestError as exc:
            raise OSError(f"the client could not write {path}: {exc}") from None


class _Runner:
    """The :class:`~plankit.teddy.run.actions.CommandRunner` of a turn."""

    def __init__(self, run: TurnRun) -> None:
        self.run = run

    def __call__(
        self, command: str, *, cwd: Path, env: Mapping[str, str], timeout: float, cap: int
    ) -> CommandResult:
        return self.run.run_command(command, cwd=cwd, env=env, timeout=timeout, cap=cap)


class TurnRun:
    """The ACP side of one executing turn (see the module documentation)."""

    def __init__(
        self,
        *,
        conn: Any,
        loop: asyncio.AbstractEventLoop,
        state: SessionState,
        plan: Plan,
        caps: ClientCaps,
        label: str,
        gone: asyncio.Event | None = None,
    ) -> None:
        self.conn = conn
        self.loop = loop
        self.state = state
        self.session_id = state.session_id
        self.root = state.root
        self.plan = plan
        self.caps = caps
        count = len(plan.actions)
        self.statuses = ["pending"] * count
        self.reasons: list[str | None] = [None] * count
        self.tool_ids = [f"{label}-{i + 1}" for i in range(count)]
        self.announced: set[int] = set()
        self.keep: dict[int, list[dict[str, Any]]] = {}
        self.shown: dict[int, list[dict[str, Any]]] = {}
        """Each announced tool call's content (the diff, the command): repeated in its
        permission request, for clients that show only the request."""
        self.terminals: set[int] = set()
        self.current: int | None = None
        self.chat_ended = False
        self.halted: str | None = None
        self.gone = gone or asyncio.Event()
        self.files = ClientFiles(self)
        self.runner = _Runner(self)
        self.cancel = state.cancel or asyncio.Event()

    # --- talking to the client ---------------------------------------------------------

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the event loop and wait for its result (worker thread only)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def ask(self, coro: Coroutine[Any, Any, T]) -> T:
        """:meth:`call` for a request to the client: ConnectionError at once when the
        client is gone or leaves before answering."""
        return self.call(self._unless_gone(coro))

    async def _unless_gone(self, coro: Coroutine[Any, Any, T]) -> T:
        if self.gone.is_set():
            coro.close()
            raise ConnectionError(GONE)
        task = asyncio.ensure_future(coro)
        gone = asyncio.ensure_future(self.gone.wait())
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not task.done():
            task.cancel()
            raise ConnectionError(GONE)
        return task.result()

    def send(self, update: Mapping[str, Any]) -> None:
        """Send one ``session/update`` (nothing once the client is gone; a failed send
        is logged, never the end of the turn)."""
        if self.gone.is_set():
            return
        try:
            self.call(send_update(self.conn, self.session_id, update))
        except (ConnectionError, OSError) as exc:
            log.warning("an update could not be sent: %s", exc)

    def send_plan(self) -> None:
        """Send the whole plan with every entry's current status."""
        entries = teddy_entries(self.plan, self.statuses, self.reasons)
        self.send(plan_update(entries, kind="teddy", title=self.plan.title))

    def _mark(self, index: int, status: str, reason: str | None = None) -> None:
        self.statuses[index] = status
        self.reasons[index] = reason
        self.send_plan()

    @property
    def cancelled(self) -> bool:
        """Whether ``session/cancel`` arrived."""
        return self.cancel.is_set()

    # --- the permit hook ---------------------------------------------------------------

    def permit(self, index: int, action: Action) -> str | None:
        """Announce the action and ask the client; None runs it, a string skips it."""
        if self.cancelled:
            self._mark(index, "cancelled", CANCELLED)
            return CANCELLED
        if self.chat_ended:
            self._mark(index, "skipped", AFTER_CHAT)
            return AFTER_CHAT
        if self.halted is not None:
            self._mark(index, "skipped", self.halted)
            return self.halted
        if isinstance(action, ChatWithUser):
            return None
        self._announce(index, action)
        remembered = self.state.remembered.get(action.type)
        if remembered is True:
            return None
        if remembered is False:
            return self._refuse(index, f"{REJECTED} (always reject {action.type})")
        self._mark(index, "awaiting_permission")
        choice = self.call(self._ask(index, action))
        if choice is None:
            self._refuse(index, CANCELLED, status="cancelled")
            return CANCELLED
        if isinstance(choice, _Failed):
            self.halted = HALTED
            return self._refuse(index, f"{NO_ANSWER} ({choice.why})")
        if choice == tools.ALLOW_ALWAYS:
            self.state.remembered[action.type] = True
        elif choice == tools.REJECT_ALWAYS:
            self.state.remembered[action.type] = False
        if choice in tools.ALLOWING:
            return None
        return self._refuse(index, REJECTED)

    def _refuse(self, index: int, reason: str, status: str = "rejected") -> str:
        self.send(
            tools.tool_update(
                self.tool_ids[index],
                status="failed",
                content=[{"type": "content", "content": {"type": "text", "text": reason}}],
            )
        )
        self._mark(index, status, reason)
        return reason

    def _announce(self, index: int, action: Action) -> None:
        before: str | None = None
        after: str | None = None
        if isinstance(action, Create):
            after = file_text(action.content)
        elif isinstance(action, Edit):
            before, after = self._preview_edit(action)
        update = tools.tool_call(
            self.tool_ids[index], action, self.root, before=before, after=after
        )
        if after is not None:
            self.keep[index] = list(update.get("content", []))
        self.shown[index] = list(update.get("content", []))
        self.send(update)
        self.announced.add(index)

    def _preview_edit(self, action: Edit) -> tuple[str | None, str | None]:
        from plankit.teddy.run.edits import EditFailed, edit_file_text
        from plankit.workspace import PathRefused, resolve

        try:
            original = self.files.read_text(resolve(self.root, action.path))
            return original, edit_file_text(original, action.edits).output
        except (EditFailed, PathRefused, OSError, UnicodeDecodeError):
            return None, None  # execution reports the problem

    async def _ask(self, index: int, action: Action) -> str | _Failed | None:
        """The option the user picked, None when the turn was cancelled, :class:`_Failed`
        when the client answered with an error or something unreadable."""
        from acp.schema import PermissionOption, ToolCallUpdate

        request = asyncio.ensure_future(
            self.conn.request_permission(
                session_id=self.session_id,
                tool_call=ToolCallUpdate.model_validate(
                    {
                        "toolCallId": self.tool_ids[index],
                        "title": action_title(action),
                        "kind": tools.tool_kind(action),
                        "status": "pending",
                        **({"content": self.shown[index]} if self.shown.get(index) else {}),
                    }
                ),
                options=[
                    PermissionOption.model_validate(o)
                    for o in tools.permission_options(action.type)
                ],
            )
        )
        _, cancelled = await first(request, self.cancel)
        if cancelled:
            request.cancel()
            return None
        try:
            outcome = request.result().outcome
        except Exception as exc:  # the client's error answer, or one the SDK cannot read
            log.warning("permission request answered with an error: %s", exc)
            return _Failed(str(exc) or type(exc).__name__)
        if outcome.outcome != "selected":
            return None
        option: str = outcome.option_id
        return option

    # --- the progress hook -------------------------------------------------------------

    def started(self, index: int, action: Action) -> None:
        """Action ``index`` starts: in_progress in the plan and its tool call."""
        self.current = index
        if index in self.announced:
            self.send(tools.tool_update(self.tool_ids[index], status="in_progress"))
        self._mark(index, "in_progress")

    def finished(self, index: int, result: ActionResult) -> None:
        """Action ``index`` ran (or was skipped): its tool call's result and the plan."""
        self.current = None
        if result.success is None:
            if self.statuses[index] in ("rejected", "cancelled", "skipped"):
                return  # the permit already said so
            status = "cancelled" if self.cancelled else "skipped"
            self._mark(index, status, result.skip_reason)
            return
        if index in self.announced:
            keep = self.keep.get(index)
            if index in self.terminals and keep is not None and result.details:
                # the terminal, and its output as text for clients that drop released ones
                keep = [
                    *keep,
                    {"type": "content", "content": {"type": "text", "text": result.details}},
                ]
            self.send(tools.result_update(self.tool_ids[index], result, keep=keep))
        if result.success:
            self._mark(index, "completed")
        elif self.cancelled and "interrupted" in result.notes:
            self._mark(index, "cancelled", CANCELLED)
        else:
            self._mark(index, "failed", result.notes[0] if result.notes else None)

    # --- CHAT_WITH_USER ----------------------------------------------------------------

    def reply(self, message: str) -> str | None:
        """Send the message to the user; the turn ends and the reply is the next prompt."""
        self.send(message_update(message))
        self.chat_ended = True
        return None

    # --- EXECUTE -----------------------------------------------------------------------

    def run_command(
        self, command: str, *, cwd: Path, env: Mapping[str, str], timeout: float, cap: int
    ) -> CommandResult:
        """Run an EXECUTE command in the client's terminal, or locally."""
        if self.caps.terminal:
            from acp import RequestError

            try:
                return self.ask(self._in_terminal(command, cwd, env, timeout, cap))
            except RequestError as exc:
                raise OSError(f"the client's terminal failed: {exc}") from None
            except ConnectionError:
                if not self.cancelled:
                    raise
                # the client left with its terminal: the command is its to stop
                return CommandResult(None, 0.0, "", GONE, False, True)
        return self.call(
            run_locally(command, cwd=cwd, env=env, timeout=timeout, cap=cap, cancel=self.cancel)
        )

    async def _in_terminal(
        self, command: str, cwd: Path, env: Mapping[str, str], timeout: float, cap: int
    ) -> CommandResult:
        index = self.current

        async def show(terminal_id: str) -> None:
            if index is None:
                return
            content = [{"type": "terminal", "terminalId": terminal_id}]
            self.keep[index] = content
            self.terminals.add(index)
            await send_update(
                self.conn,
                self.session_id,
                tools.tool_update(self.tool_ids[index], content=content),
            )

        return await run_in_terminal(
            self.conn,
            self.session_id,
            command,
            cwd=cwd,
            env=env,
            timeout=timeout,
            cap=cap,
            cancel=self.cancel,
            on_terminal=show,
        )

    # --- the end -----------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """How many actions ended in each status."""
        out: dict[str, int] = {}
        for status in self.statuses:
            out[status] = out.get(status, 0) + 1
        return out

    def finish_unrun(self, reason: str) -> None:
        """Mark every action still pending as skipped (validation failed …) and send."""
        changed = False
        for index, status in enumerate(self.statuses):
            if status == "pending":
                self.statuses[index] = "skipped"
                self.reasons[index] = reason
                changed = True
        if changed:
            self.send_plan()
