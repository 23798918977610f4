"""``teddy acp``: TeDDy as an Agent Client Protocol agent over stdio.

Built on the official SDK (``acp``).  One ACP session is one TeDDy session in the
project given as ``cwd`` (``.teddy/YYYYMMDD-acp-xxxxxx/``, created by the session's
first prompt, so a client that only opens sessions leaves nothing behind); one
``session/prompt`` is
one TeDDy turn: the plan of the prompt is written to the turn's ``plan.md`` and
executed by :func:`plankit.teddy.run.execute.execute_turn`, which writes ``report.md``
and prepares the next turn, exactly as ``teddy execute`` does.  :mod:`.turn` turns the
execution into ``plan`` updates, tool calls and permission requests.

Until model access lands, a prompt must give the plan (see :mod:`.prompt`); a
*planner* — any ``(prompt text, turn) → plan Markdown`` callable — can be plugged in
(``teddy acp --planner module:callable``) to write plans from plain requests.

:mod:`.stdio` runs it on stdin/stdout; when the client goes away (stdin closed),
:meth:`TeddyAgent.disconnected` cancels every running turn, which stops its command
and writes its report as ``session/cancel`` does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from plankit.acp.contract import Planner, client_caps, initialize_result
from plankit.acp.prompt import (
    FoundPlan,
    PlanRefused,
    PromptText,
    commands_update,
    find_plan,
    read_prompt,
    refused_blocks,
)
from plankit.acp.sessions import (
    Silent,
    create_session_of,
    known_roots,
    last_report,
    load_project_config,
    never_prompted,
    pick_session,
    plan_with,
    project_root,
    session_folder,
    summary,
    write_context,
)
from plankit.acp.turn import (
    ClientCaps,
    SessionState,
    TurnRun,
    message_update,
    send_update,
    thought_update,
)
from plankit.errors import InputError
from plankit.jsonrpc import surrogate_problem

if TYPE_CHECKING:
    from acp.schema import (
        InitializeResponse,
        ListSessionsResponse,
        LoadSessionResponse,
        NewSessionResponse,
        PromptResponse,
    )

    from plankit.teddy.run.outcome import Outcome
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import Turn

log = logging.getLogger("plankit.acp")

NO_PLAN = (
    "TeDDy runs plans. Send a TeDDy plan's Markdown, attach or @-mention a plan file, "
    "or name one (`/execute plan.md`); planning from a plain request needs a model: "
    "start `teddy acp --model NAME`, set TEDDY_MODEL, or put `model:` in "
    ".teddy/config.yaml."
)


class TeddyAgent:
    """The ACP agent (an ``acp.Agent``); see the module documentation."""

    def __init__(self, planner: Planner | None = None, *, model: str | None = None) -> None:
        self.planner = planner
        """A ``--planner`` plugin (used for every session)."""
        self.model = model
        """``--model``: plans plain requests (else TEDDY_MODEL or the session's project
        config.yaml, read per session)."""
        self.conn: Any = None
        self.caps = ClientCaps()
        self.sessions: dict[str, SessionState] = {}
        self.gone = asyncio.Event()
        """Set when the client has closed the connection."""
        self._tasks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # --- initialize, session/new -------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        from acp.schema import InitializeResponse

        params: dict[str, Any] = {"clientCapabilities": {}}
        if client_capabilities is not None:
            params["clientCapabilities"] = client_capabilities.model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
        self.caps = ClientCaps(*client_caps(params))
        name = getattr(client_info, "name", None) or "an unnamed client"
        log.info("initialize from %s (protocol %s): %s", name, protocol_version, self.caps)
        return InitializeResponse.model_validate(initialize_result())

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        from acp.schema import NewSessionResponse

        from acp import RequestError

        root = project_root(cwd)
        if mcp_servers:
            log.info(
                "%d MCP server(s) offered and not used: TeDDy calls no tools", len(mcp_servers)
            )
        try:
            session_id = await asyncio.to_thread(pick_session, root)
        except InputError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None
        self.sessions[session_id] = SessionState(session_id, root)
        log.info("session %s in %s (created by its first prompt)", session_id, root)
        self._later(send_update(self.conn, session_id, commands_update()))
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """Resume a TeDDy session of the project ``cwd``: its history is replayed as
        updates (:mod:`.history`), then the next prompt is its next turn.  A session
        that ``session/new`` opened and no prompt ever created (nothing on disk) comes
        back as it was: empty."""
        from acp.schema import LoadSessionResponse

        from acp import RequestError
        from plankit.acp.history import replay

        root = project_root(cwd)
        folder = session_folder(root, session_id)
        unwritten = folder is None and never_prompted(root, session_id)
        if folder is None and not unwritten:
            raise RequestError.resource_not_found(f"{cwd}/.teddy/{session_id}")
        current = self.sessions.get(session_id)
        if current is not None and current.running:
            raise RequestError.invalid_request(
                {"details": "a prompt is running in this session; cancel it first"}
            )
        try:
            await asyncio.to_thread(load_project_config, root)
            updates = (
                [] if folder is None else await asyncio.to_thread(lambda: list(replay(folder)))
            )
        except InputError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None
        except OSError as exc:
            raise RequestError.invalid_params(
                {"details": f"cannot read session {session_id}: {exc.strerror or exc}"}
            ) from None
        for update in updates:
            await send_update(self.conn, session_id, update)
        self.sessions[session_id] = SessionState(session_id, root, created=not unwritten)
        log.info("session %s in %s loaded (%d updates replayed)", session_id, root, len(updates))
        self._later(send_update(self.conn, session_id, commands_update()))
        return LoadSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The TeDDy sessions of the project ``cwd`` (without one: of the projects of
        this connection's sessions and of the directory the agent was started in),
        the most recently changed first."""
        from acp.schema import ListSessionsResponse, SessionInfo

        from plankit.acp.history import session_info

        roots = [project_root(cwd)] if cwd else known_roots(self.sessions.values())

        def collect() -> list[dict[str, Any]]:
            from plankit.teddy.session.layout import sessions

            found = []
            for root in roots:
                try:
                    found += [session_info(root, s.path) for s in sessions(root)]
                except (InputError, OSError):
                    continue
            return sorted(found, key=lambda info: str(info["updatedAt"]), reverse=True)

        infos = await asyncio.to_thread(collect)
        return ListSessionsResponse(sessions=[SessionInfo.model_validate(i) for i in infos])

    def _later(self, coro: Any) -> None:
        """Run ``coro`` after the current response is sent."""
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- session/prompt, session/cancel --------------------------------------------------

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        state = self.sessions.get(session_id)
        if state is not None and state.cancel is not None:
            log.info("cancel %s", session_id)
            state.cancel.set()

    async def disconnected(self) -> None:
        """The client closed the connection: cancel every running turn (its command is
        stopped, its report written) and stop talking to the client."""
        log.info("the client closed the connection; cancelling what runs")
        self.gone.set()
        self.shutdown()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        from acp.schema import PromptResponse

        from acp import RequestError

        state = self.sessions.get(session_id)
        if state is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session '{session_id}'"})
        refused = refused_blocks(prompt)
        if refused:
            raise RequestError.invalid_params(
                {
                    "details": f"TeDDy does not take {', '.join(sorted(set(refused)))} content "
                    "(it advertises text, resource links and embedded resources only): "
                    "send the request as text"
                }
            )
        request = read_prompt(prompt)
        problem = surrogate_problem(
            {
                "text": request.text,
                "resources": list(request.embedded),
                "links": list(request.links),
            }
        )
        if problem is not None:  # it could be neither written to plan.md nor run
            raise RequestError.invalid_params({"details": f"the prompt's {problem}"})
        if state.running:
            raise RequestError.invalid_request(
                {"details": "a prompt is already running in this session; cancel it first"}
            )
        state.running = True
        state.cancel = asyncio.Event()
        if self.gone.is_set():
            state.cancel.set()
        try:
            if not state.created:
                try:
                    await asyncio.to_thread(create_session_of, state)
                except InputError as exc:
                    raise RequestError.invalid_request({"details": str(exc)}) from None
                state.created = True
            await self._prompt(state, request)
        finally:
            state.running = False
        if state.cancel.is_set():
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn")

    async def _say(self, state: SessionState, text: str) -> None:
        if self.gone.is_set():
            log.info("not said (the client left): %s", text)
            return
        await send_update(self.conn, state.session_id, message_update(text))

    async def _prompt(self, state: SessionState, request: PromptText) -> None:
        command = request.command
        if command is not None:
            await self._command(state, *command)
            return
        try:
            found = find_plan(request, state.root)
        except PlanRefused as exc:
            await self._say(state, f"{exc}.")
            return
        planner = self.planner
        if found is None and planner is None:
            planner = await self._model_planner(state)
        if found is None and planner is not None:
            try:
                text = await asyncio.to_thread(plan_with, planner, request.text, state)
            except Exception as exc:  # a planner's failure is the user's to see
                await self._say(state, f"The planner failed: {exc}")
                return
            found = FoundPlan(text, None, "the planner")
        if found is None:
            await self._say(state, NO_PLAN)
            return
        await self._execute(state, found)

    async def _model_planner(self, state: SessionState) -> Planner | None:
        """The model planner of the session's project, streaming the model's answer to
        the client as message chunks; None when no model is set there."""
        from plankit.acp.planning import StreamingPlanner, session_model

        try:
            model = await asyncio.to_thread(session_model, state.root, self.model)
        except InputError as exc:
            await self._say(state, f"The project's configuration is broken: {exc}")
            return None
        if model is None:
            return None
        loop = asyncio.get_running_loop()
        return StreamingPlanner(
            self.model, lambda chunk: self._send(state, loop, message_update(chunk))
        )

    async def _plan_text(self, state: SessionState, found: FoundPlan) -> str | None:
        if found.text is not None:
            return found.text
        assert found.path is not None
        try:
            from plankit.textio import read_text

            return read_text(found.path).text
        except InputError as exc:
            await self._say(state, f"Cannot read the plan: {exc}")
            return None

    async def _execute(self, state: SessionState, found: FoundPlan) -> None:
        text = await self._plan_text(state, found)
        if text is None:
            return
        loop = asyncio.get_running_loop()
        try:
            message = await asyncio.to_thread(self._run_turn, state, text, loop)
        except InputError as exc:
            message = f"The turn could not run: {exc}"
        await self._say(state, message)

    def _run_turn(self, state: SessionState, text: str, loop: asyncio.AbstractEventLoop) -> str:
        """Write the plan into the current turn and execute it; after a validation
        failure, re-plan as ``teddy execute`` does and run the corrected plan (worker
        thread)."""
        from plankit.teddy.format.answer import answer_to_plan, repairs_note
        from plankit.teddy.session.config import load_config
        from plankit.teddy.session.layout import find_session
        from plankit.textio import write_text_atomic

        config = load_config(state.root)
        turn = find_session(state.root, state.session_id).latest()
        made = answer_to_plan(text)  # as teddy plan makes a model's answer a plan
        if made.problems:
            return repairs_note("The plan reads two ways, so nothing ran", made.problems)
        text = made.text
        write_text_atomic(turn.plan_path, text if text.endswith("\n") else text + "\n")
        outcome, run = self._execute_turn(state, turn, config, loop)
        cancelled = state.cancel is not None and state.cancel.is_set()
        if outcome.validation and outcome.next_turn is not None and not cancelled:
            from plankit.acp.replan import replan_in_acp

            def run_turn(target: Turn) -> str:
                done, shown = self._execute_turn(state, target, config, loop)
                return summary(done, shown, target.rel("report.md"))

            ended = replan_in_acp(
                turn,
                outcome,
                config,
                model=self.model,
                send=lambda update: self._send(state, loop, update),
                execute=run_turn,
                cancel=state.cancel,
            )
            if ended is not None:
                return ended
        told = summary(outcome, run, turn.rel("report.md"))
        if made.changes:
            told = repairs_note("The plan was repaired before it ran", made.changes) + "\n\n" + told
        return told

    def _send(
        self, state: SessionState, loop: asyncio.AbstractEventLoop, update: Mapping[str, Any]
    ) -> None:
        """Send one ``session/update`` from a worker thread (nothing once the client is
        gone; a failed send is logged)."""
        if self.gone.is_set():
            return
        try:
            coro = send_update(self.conn, state.session_id, update)
            asyncio.run_coroutine_threadsafe(coro, loop).result()
        except (ConnectionError, OSError) as exc:
            log.warning("an update could not be sent: %s", exc)

    def _execute_turn(
        self, state: SessionState, turn: Turn, config: Config, loop: asyncio.AbstractEventLoop
    ) -> tuple[Outcome, TurnRun | None]:
        """Execute the plan.md of ``turn``, its actions shown as tool calls (worker thread)."""
        from plankit.errors import PlanError
        from plankit.teddy.format.parse import parse_plan
        from plankit.teddy.run.actions import Runtime
        from plankit.teddy.run.approval import AutoApprover
        from plankit.teddy.run.execute import execute_turn

        text = turn.plan_path.read_text(encoding="utf-8", errors="replace")
        try:
            plan = parse_plan(text)
        except PlanError:
            plan = None
        run: TurnRun | None = None
        if plan is not None:
            run = TurnRun(
                conn=self.conn,
                loop=loop,
                state=state,
                plan=plan,
                caps=self.caps,
                label=f"turn-{turn.name}",
                gone=self.gone,
            )
            if plan.rationale.strip():
                run.send(thought_update(plan.rationale.strip()))
            run.send_plan()
            runtime = Runtime(
                state.root,
                config,
                run,
                files=run.files,
                run=run.runner,
                progress=run,
                permit=run.permit,
            )
        else:
            runtime = None
        outcome = execute_turn(
            turn,
            approver=AutoApprover(),
            chat=run if run is not None else Silent(),
            config=config,
            runtime=runtime,
        )
        if run is not None:
            run.finish_unrun("the plan did not pass validation")
        return outcome, run

    # --- slash commands ----------------------------------------------------------------

    async def _command(self, state: SessionState, name: str, argument: str) -> None:
        if name == "execute":
            from plankit.acp.prompt import plan_path

            path = plan_path(argument, state.root) if argument else None
            if path is None:
                await self._say(
                    state, f"/execute needs a .md plan file of the project: {argument!r}"
                )
                return
            await self._execute(state, FoundPlan(None, path, str(path)))
        elif name == "parse":
            await self._parse(state, argument)
        elif name == "context":
            message = await asyncio.to_thread(write_context, state)
            await self._say(state, message)
        elif name == "report":
            await self._say(state, await asyncio.to_thread(last_report, state))

    async def _parse(self, state: SessionState, argument: str) -> None:
        from plankit.acp.entries import plan_update, teddy_entries
        from plankit.acp.prompt import plan_path
        from plankit.teddy.format.parse import check_plan

        path = plan_path(argument, state.root)
        text = await self._plan_text(state, FoundPlan(None, path, argument)) if path else argument
        if not text:
            await self._say(state, "/parse needs a plan file of the project, or a plan's text")
            return
        plan, diagnostics = check_plan(text)
        if plan is None:
            lines = [f"- line {d.line}: {d.code} {d.message}" for d in diagnostics]
            await self._say(state, "The plan is invalid:\n" + "\n".join(lines))
            return
        update = plan_update(teddy_entries(plan), kind="teddy", title=plan.title)
        await send_update(self.conn, state.session_id, update)
        await self._say(state, f"{plan.title}: {len(plan.actions)} actions; the plan is valid.")

    def shutdown(self) -> None:
        """Cancel every running prompt (the client went away)."""
        for state in self.sessions.values():
            if state.cancel is not None:
                state.cancel.set()
