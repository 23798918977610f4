"""The ``teddy`` command.

Each command parses its options, calls one library function and formats the result.
Exit codes: 0 success, 1 invalid input or a failed check, 2 usage error, 130
interrupted.  Machine output goes to stdout; messages and progress to stderr.
Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from plankit.cliutil import EXIT_INTERRUPTED, EXIT_INVALID, run

if TYPE_CHECKING:
    from plankit.acp.stdio import Planner as AcpPlanner
    from plankit.errors import Diagnostic
    from plankit.teddy.format.model import Action, Plan
    from plankit.textio import TextFile


def _fail(message: str) -> NoReturn:
    click.echo(f"teddy: {message}", err=True)
    sys.exit(EXIT_INVALID)


def _read(path: str) -> TextFile:
    from plankit.errors import InputError
    from plankit.textio import decode_text, read_text

    try:
        if path == "-":
            return decode_text(sys.stdin.buffer.read(), path="<stdin>")
        return read_text(path)
    except InputError as exc:
        _fail(str(exc))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="plankit", prog_name="teddy")
def cli() -> None:
    """TeDDy: Markdown action plans that AI agents write and people approve.

    A plan is one Markdown file: a title, a Rationale, optional Memos and an Action
    Plan of CREATE, READ, EDIT, EXECUTE, RESEARCH, CHAT_WITH_USER, INVOKE, CONCLUDE
    and PRUNE actions.
    """


# --- teddy parse ------------------------------------------------------------------------


def _one_line(text: str | None, width: int = 60) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _summary(action: Action) -> str:
    from plankit.teddy.format import model as m

    match action:
        case m.Create(path=path, content=content):
            lines = content.count("\n") + 1 if content else 0
            return f"{path} ({lines} line{'s' * (lines != 1)})"
        case m.Read(resource=res) | m.Prune(resource=res):
            return res.target
        case m.Edit(path=path, edits=edits):
            return f"{path} ({len(edits)} change{'s' * (len(edits) != 1)})"
        case m.Execute(command=command, cwd=cwd):
            where = f" (in {cwd})" if cwd else ""
            return _one_line(command) + where
        case m.Research(queries=queries):
            return "; ".join(queries)
        case m.ChatWithUser(message=message):
            return _one_line(message)
        case m.Invoke(agent=agent, message=message):
            return f"{agent}: {_one_line(message, 50)}" if message else agent
        case m.Conclude(message=message):
            return _one_line(message)
    return ""  # pragma: no cover - every action is matched above


def _print_plan(plan: Plan) -> None:
    out = [plan.title]
    out += [f"  {key}: {value}" for key, value in plan.metadata]
    out.append(f"Rationale: {plan.rationale.count(chr(10)) + 1} lines")
    if plan.memos:
        out.append(f"Memos ({len(plan.memos)}):")
        out += [f"  [{memo.op}] {memo.text}" for memo in plan.memos]
    out.append(f"Actions ({len(plan.actions)}):")
    width = max(len(str(a.type)) for a in plan.actions)
    for action in plan.actions:
        out.append(f"  line {action.line:<5} {action.type!s:<{width}}  {_summary(action)}")
    click.echo("\n".join(out))


def _echo_json(obj: object) -> None:
    import json  # only --json needs it: plain `teddy parse` starts without it

    click.echo(json.dumps(obj, ensure_ascii=False))


def _print_diagnostics(path: str, diagnostics: list[Diagnostic], as_json: bool) -> None:
    if as_json:
        _echo_json({"errors": [d.to_dict() for d in diagnostics]})
    for diag in diagnostics:
        click.echo(diag.format(path), err=True)
    count = len(diagnostics)
    click.echo(f"{path}: {count} problem{'s' * (count != 1)}; the plan is invalid", err=True)


@cli.command()
@click.argument("plan", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print the plan as one JSON object.")
def parse(plan: str, as_json: bool) -> None:
    """Parse PLAN and print its summary (or JSON); exit 1 listing every problem.

    PLAN is a Markdown file, or - for standard input.
    """
    from plankit.errors import InputError
    from plankit.teddy.format.model import plan_to_dict
    from plankit.teddy.format.parse import check_plan
    from plankit.textio import decode_text, read_text

    name = "<stdin>" if plan == "-" else plan
    try:
        doc = decode_text(sys.stdin.buffer.read(), path=name) if plan == "-" else read_text(plan)
    except InputError as exc:
        if as_json:
            _echo_json({"errors": [exc.diagnostic().to_dict()]})
        _fail(str(exc))
    result, diagnostics = check_plan(doc.text)
    if result is None:
        _print_diagnostics(name, diagnostics, as_json)
        sys.exit(EXIT_INVALID)
    if as_json:
        _echo_json(plan_to_dict(result))
    else:
        _print_plan(result)


# --- teddy preprocess -----------------------------------------------------------------


def _clipboard_error(exc: Exception) -> NoReturn:
    _fail(f"no clipboard is available ({exc}); pass a plan file, or - to read standard input")


@cli.command()
@click.argument("plan", required=False, type=click.Path(dir_okay=True, allow_dash=True))
@click.option(
    "--check",
    is_flag=True,
    help="Change nothing; exit 1 when the plan would be repaired (for pre-commit).",
)
@click.option("--no-copy", is_flag=True, help="Clipboard mode: do not copy the result back.")
def preprocess(plan: str | None, check: bool, no_copy: bool) -> None:
    """Repair ambiguous code fences in a plan.

    \b
    teddy preprocess PLAN     rewrite PLAN in place
    teddy preprocess -        read standard input, write the result to standard output
    teddy preprocess          clipboard mode: read the clipboard, print the result and
                              copy it back (unless --no-copy)

    What was changed is listed on standard error, line by line.
    """
    from plankit.teddy.format.preprocess import preprocess as sanitize
    from plankit.textio import decode_text, write_text_atomic

    if plan is None:
        from plankit import clipboard

        try:
            pasted = clipboard.paste()
        except clipboard.ClipboardUnavailable as exc:
            _clipboard_error(exc)
        if not pasted.strip():
            _fail("the clipboard is empty; copy a plan first, or pass a plan file")
        source = decode_text(pasted.encode("utf-8"), path="<clipboard>")
        name = "<clipboard>"
    else:
        source = _read(plan)
        name = "<stdin>" if plan == "-" else plan
    result = sanitize(source.text)
    for change in result.changes:
        click.echo(f"{name}:{change.line}: {change.message}", err=True)
    if check:
        if result.changed:
            click.echo(f"{name}: would repair {len(result.changes)} fence(s)", err=True)
            sys.exit(EXIT_INVALID)
        return
    if plan is None:
        click.echo(result.text, nl=False)
        if not no_copy:
            from plankit import clipboard

            try:
                clipboard.copy(result.text)
            except clipboard.ClipboardUnavailable as exc:
                _clipboard_error(exc)
        return
    if plan == "-":
        sys.stdout.buffer.write(result.text.encode("utf-8"))
        sys.stdout.buffer.flush()
        return
    if result.changed:
        write_text_atomic(plan, result.text, bom=source.bom)
        click.echo(f"{name}: repaired ({len(result.changes)} change(s))", err=True)
    else:
        click.echo(f"{name}: nothing to repair", err=True)


# --- sessions: teddy new / context / execute ----------------------------------------


def _project_root() -> Path:
    from plankit.workspace import find_root

    root = find_root()
    if root is None:
        _fail("no .teddy/ directory here or in any parent; start a session with `teddy new NAME`")
    return root


@cli.command()
@click.argument("name")
def new(name: str) -> None:
    """Start a session NAME (kebab-case) in the current directory and print its path.

    Creates .teddy/YYYYMMDD-NAME/ with session.context and turn 01, whose
    system_prompt.xml is the default agent's prompt.
    """
    from plankit.errors import InputError
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import create_session
    from plankit.teddy.session.prompts import agent_name, get_prompt
    from plankit.workspace import find_root

    root = find_root() or Path.cwd()
    try:
        config = load_config(root)
        prompt = get_prompt(config.default_agent, root)
        session = create_session(root, name, prompt, agent_name(prompt, config.default_agent))
    except InputError as exc:
        _fail(str(exc))
    click.echo(session.path)


@cli.command()
@click.option("--session", "session_name", help="The session (default: the current one).")
def context(session_name: str | None) -> None:
    """Write input.md for the current turn and print its path."""
    from plankit.errors import InputError
    from plankit.teddy.context.payload import build_payload
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import find_session
    from plankit.textio import write_text_atomic

    root = _project_root()
    try:
        config = load_config(root)
        session = find_session(root, session_name)
        turn = session.latest()
        text = build_payload(
            root, session.path, turn.path, max_file_bytes=config.context_max_file_bytes
        )
    except InputError as exc:
        _fail(str(exc))
    write_text_atomic(turn.file("input.md"), text)
    click.echo(turn.file("input.md"))


@cli.command()
@click.argument("plan", required=False, type=click.Path(dir_okay=True))
@click.option("-y", "--yes", is_flag=True, help="Approve every action without asking.")
@click.option("--session", "session_name", help="The session (default: the current one).")
@click.option("--model", help="Re-plan after a validation failure with this model.")
@click.option("--manual", is_flag=True, help="Re-plan by hand after a validation failure.")
@click.option("--no-replan", is_flag=True, help="No corrected plan after a validation failure.")
def execute(
    plan: str | None,
    yes: bool,
    session_name: str | None,
    model: str | None = None,
    manual: bool = False,
    no_replan: bool = False,
) -> None:
    """Validate, approve and execute a plan, then prepare the next turn.

    \b
    With no PLAN: the current turn's plan.md.
    With a PLAN inside .teddy/: that turn (it must be the latest).
    With any other PLAN: stateless mode, against the project root (the directory
    holding .teddy/, or the current directory); the report is printed, not saved.
    When a session's plan fails validation, the model that wrote it (or --model,
    TEDDY_MODEL, config.yaml; --manual: by hand) gets the errors and writes a corrected
    plan in the next turn, at most replan.max_attempts times; nothing else runs.
    """
    from plankit.errors import InputError
    from plankit.teddy.review.console import ConsoleApprover, ConsoleChat, ShowOnly
    from plankit.teddy.run.actions import Runtime
    from plankit.teddy.run.approval import Approver, AutoApprover, ChatResponder
    from plankit.teddy.run.execute import execute_stateless, execute_turn
    from plankit.teddy.run.progress import live_progress
    from plankit.teddy.run.report import Status
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import find_session, turn_of_plan
    from plankit.workspace import find_root

    root = find_root() or Path.cwd()
    progress = live_progress()  # rich on a terminal, plain lines otherwise (stderr)
    try:
        config = load_config(root)
        approver: Approver = (
            AutoApprover() if yes else ConsoleApprover(config.preview_command, root=root)
        )
        approver = progress.watch(approver)
        chat: ChatResponder = ShowOnly() if yes else ConsoleChat()
        runtime = Runtime(root, config, chat, progress=progress)
        turn = None
        if plan is None:
            if not (root / ".teddy").is_dir():
                _fail("no .teddy/ directory here or above: give a PLAN file, or `teddy new NAME`")
            turn = find_session(root, session_name).latest()
        else:
            turn = turn_of_plan(root, Path(plan))
        if turn is not None:
            outcome = execute_turn(
                turn, approver=approver, chat=chat, config=config, runtime=runtime
            )
        else:
            from plankit.textio import read_text

            read_text(plan or "")  # a clear error for a missing or bad file
            outcome = execute_stateless(
                Path(plan or ""), root, approver=approver, chat=chat, config=config,
                runtime=runtime,
            )  # fmt: skip
    except InputError as exc:
        _fail(str(exc))
    finally:
        progress.close()
    if outcome.status is None:
        click.echo(f"teddy: {outcome.message}", err=True)
        sys.exit(EXIT_INVALID if outcome.refused else 0)
    if turn is None and outcome.report is not None:
        click.echo(outcome.report, nl=False)
    else:
        click.echo(f"{outcome.status}: {turn.report_path if turn else ''}", err=True)
    for issue in outcome.validation:
        where = f"action {issue.action}" if issue.action else "plan"
        click.echo(f"  {where}: {issue.message}", err=True)
    if outcome.next_turn is not None:
        click.echo(f"next turn: {outcome.next_turn.path}", err=True)
    if turn is not None and outcome.validation and outcome.next_turn and not no_replan:
        _replan(turn, outcome, model=model, manual=manual, yes=yes)  # section 8.3
    if outcome.interrupted:
        sys.exit(EXIT_INTERRUPTED)
    if outcome.status in (Status.COMPLETED, Status.SKIPPED):
        return
    sys.exit(EXIT_INVALID)


# --- teddy acp ----------------------------------------------------------------------------


@cli.command(name="acp")
@click.option(
    "--planner",
    metavar="MODULE:CALLABLE",
    help="Write plans from plain prompts with CALLABLE(prompt_text, turn) -> plan Markdown.",
)
@click.option(
    "--model",
    help="Plan plain requests with this llm model (default: TEDDY_MODEL or config.yaml).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log each request on standard error.")
def acp_command(planner: str | None, model: str | None, verbose: bool) -> None:
    """Serve TeDDy as an Agent Client Protocol agent on stdin/stdout.

    For ACP clients (Zed, acpx, `plankit acp run` …): each prompt is one TeDDy turn in
    a session created in the client's working directory; actions become tool calls,
    each asking the client's permission.  Only ACP messages go to stdout.
    """
    from plankit.acp.stdio import load_planner, serve
    from plankit.errors import InputError

    try:
        loaded: AcpPlanner | None = load_planner(planner) if planner else None
        if loaded is None:
            from plankit.teddy.planning.loop import TurnPlanner
            from plankit.teddy.planning.models import configured_model
            from plankit.teddy.session.config import load_config
            from plankit.workspace import find_root

            root = find_root() or Path.cwd()
            if configured_model(model, load_config(root).model) is not None:
                loaded = TurnPlanner(model)
    except InputError as exc:
        _fail(str(exc))
    serve(loaded, verbose=verbose)


# --- planning: teddy plan / resume / get-prompt ---------------------------------------

if TYPE_CHECKING:
    from plankit.teddy.planning.models import Planner
    from plankit.teddy.run.execute import Outcome
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import Turn

_MODEL_HELP = "The model: an llm model id or alias (default: TEDDY_MODEL, config.yaml, llm's)."
_ANSWER_SOURCES = ("auto", "clipboard", "stdin", "editor")


def _read_message(turn_name: str, saved: str | None) -> str:
    """A message typed on the terminal, ending at an empty line."""
    if not sys.stdin.isatty():
        _fail("no message: pass -m MESSAGE (there is no terminal to ask on)")
    hint = " (an empty first line: the turn's message.md)" if saved else ""
    click.echo(f"Message for turn {turn_name}, ending with an empty line{hint}:", err=True)
    lines: list[str] = []
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        if not line.strip():
            break
        lines.append(line.rstrip("\n"))
    if not lines and saved:
        return saved
    if not lines:
        _fail("no message was given; nothing was planned")
    return "\n".join(lines) + "\n"


def _plan_and_report(
    turn: Turn,
    message: str,
    planner: Planner,
    config: Config,
    *,
    replace_plan: bool = False,
    as_json: bool = False,
) -> None:
    from plankit.errors import InputError
    from plankit.teddy.planning.loop import plan_turn
    from plankit.teddy.planning.models import PlanningCancelled

    try:
        planned = plan_turn(turn, message, planner, config, replace_plan=replace_plan)
    except PlanningCancelled as exc:
        _fail(f"planning was cancelled ({exc}); no plan.md was written")
    except InputError as exc:
        _fail(str(exc))
    if as_json:
        usage = planned.answer.usage
        _echo_json(
            {
                "plan": str(planned.plan_path),
                "model": planned.answer.model,
                "input_tokens": usage.input_tokens if usage else None,
                "output_tokens": usage.output_tokens if usage else None,
                "parses": planned.plan is not None,
                "problems": list(planned.problems),
            }
        )
    else:
        click.echo(planned.plan_path)
    if planned.unwrapped:
        click.echo("teddy: text around the plan was dropped (answer.md keeps the answer)", err=True)
    if planned.repaired:
        click.echo(f"teddy: {planned.repaired} ambiguous fence(s) repaired", err=True)
    if planned.plan is None:
        click.echo(
            f"teddy: warning: plan.md does not parse ({planned.problems[0]}); "
            "`teddy execute` will report it and re-plan",
            err=True,
        )
        return
    kinds = ", ".join(dict.fromkeys(str(a.type) for a in planned.plan.actions))
    count = len(planned.plan.actions)
    click.echo(
        f"teddy: “{planned.plan.title}”: {count} action{'s' * (count != 1)} ({kinds}); "
        "review it, then `teddy execute`",
        err=True,
    )


@cli.command("plan")
@click.option("-m", "--message", help="What this turn should do (default: message.md, or asked).")
@click.option("--model", help=_MODEL_HELP)
@click.option("--manual", is_flag=True, help="Plan by hand: the prompt goes to prompt.md.")
@click.option(
    "--answer-from",
    type=click.Choice(_ANSWER_SOURCES),
    default="auto",
    show_default=True,
    help="Manual mode: where the answer is read from.",
)
@click.option("--no-copy", is_flag=True, help="Manual mode: leave the clipboard alone.")
@click.option("--replace", "replace_plan", is_flag=True, help="Plan a turn that has plan.md again.")
@click.option("--session", "session_name", help="The session (default: the current one).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def plan_command(
    message: str | None,
    model: str | None,
    manual: bool,
    answer_from: str,
    no_copy: bool,
    replace_plan: bool,
    session_name: str | None,
    as_json: bool,
) -> None:
    """Plan the current turn with a model and save plan.md (its path is printed).

    \b
    Rebuilds input.md, sends system_prompt.xml, input.md and the message to the
    model, drops text around the plan, repairs ambiguous fences, saves plan.md and
    records the model and its token usage in meta.yaml.
    The model: --model, else TEDDY_MODEL, else `model:` in .teddy/config.yaml, else
    llm's default (keys: `llm keys set openai`, or the provider's variable).
    Manual mode (--manual, or when no model can be used): the prompt is written to
    prompt.md and copied to the clipboard when there is one; the answer is read from
    standard input when it is not a terminal, else the clipboard (press Enter once
    the answer is copied), else $EDITOR, else the terminal (end with Ctrl-D).
    """
    from plankit.errors import InputError
    from plankit.teddy.planning.loop import check_plannable, choose_planner, saved_message
    from plankit.teddy.planning.manual import ManualOptions
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import find_session

    root = _project_root()
    try:
        config = load_config(root)
        turn = find_session(root, session_name).latest()
        check_plannable(turn, replace_plan)
        saved = saved_message(turn)
        text = message if message is not None else saved or _read_message(turn.name, None)
        planner = choose_planner(
            model=model,
            manual=manual,
            config=config,
            manual_options=ManualOptions(answer_from, not no_copy),
        )
    except InputError as exc:
        _fail(str(exc))
    assert planner is not None
    _plan_and_report(turn, text, planner, config, replace_plan=replace_plan, as_json=as_json)


def _replan(turn: Turn, outcome: Outcome, *, model: str | None, manual: bool, yes: bool) -> None:
    """The automated re-plan loop after a validation failure (``teddy execute``)."""
    from plankit.errors import InputError
    from plankit.teddy.planning.loop import Planned, choose_replanner, replan
    from plankit.teddy.planning.models import PlanningCancelled
    from plankit.teddy.session.config import load_config

    root = turn.session.root
    try:
        config = load_config(root)
        planner = choose_replanner(
            turn,
            model=model,
            manual=manual,
            config=config,
            interactive=sys.stdin.isatty() and not yes,
        )
    except InputError as exc:
        _fail(f"no re-plan: {exc}")
    if planner is None:
        click.echo(
            "teddy: no automatic re-plan (the plan was not written by a model, and none is "
            "set); the next turn's message.md holds the errors: `teddy plan` uses it",
            err=True,
        )
        from plankit.teddy.planning.loop import MESSAGE_FILE, feedback_message
        from plankit.teddy.run.validate import describe
        from plankit.textio import write_text_atomic

        assert outcome.next_turn is not None
        faulty = turn.plan_path.read_text(encoding="utf-8", errors="replace")
        message = feedback_message(describe(outcome.validation), faulty)
        write_text_atomic(outcome.next_turn.file(MESSAGE_FILE), message)
        return
    limit = config.replan_max_attempts
    who = "by hand (manual mode)" if planner.name == "manual" else f"with {planner.name}"
    click.echo(f"teddy: re-planning {who}, at most {limit} attempts", err=True)

    def planned(done: Planned) -> None:
        where = f"turn {done.turn.name}"
        title = f"“{done.plan.title}”" if done.plan else "a plan that does not parse"
        click.echo(f"teddy: {where}: {title}; validating", err=True)

    try:
        result = replan(turn, outcome, planner, config, on_planned=planned)
    except PlanningCancelled as exc:
        _fail(f"re-planning was cancelled ({exc})")
    except InputError as exc:
        _fail(str(exc))
    if result.valid:
        click.echo(
            f"teddy: turn {result.turn.name} has a corrected plan that passes validation: "
            f"{result.turn.plan_path}\nteddy: review it, then run `teddy execute`",
            err=True,
        )
        return
    failed = ", ".join(result.failed_turns)
    click.echo(
        f"teddy: validation failed again after {result.attempts} automatic re-plan"
        f"{'s' * (result.attempts != 1)} (turn{'s' * (len(result.failed_turns) != 1)} {failed}); "
        f"stopping.\nteddy: turn {result.turn.name}'s message.md holds the last errors: write "
        "its plan.md by hand, or run `teddy plan -m MESSAGE`",
        err=True,
    )


@cli.command()
@click.option("-m", "--message", help="The message for the next turn (default: asked).")
@click.option("-y", "--yes", is_flag=True, help="Approve every action without asking.")
@click.option("--model", help=_MODEL_HELP)
@click.option("--manual", is_flag=True, help="Plan by hand (manual mode).")
@click.option("--no-replan", is_flag=True, help="No corrected plan after a validation failure.")
@click.option("--session", "session_name", help="The session (default: the current one).")
@click.pass_context
def resume(
    ctx: click.Context,
    message: str | None,
    yes: bool,
    model: str | None,
    manual: bool,
    no_replan: bool,
    session_name: str | None,
) -> None:
    """Continue the session with whatever comes next.

    \b
    The latest turn has plan.md but no report.md: it is executed, as by
    `teddy execute` (-y, --no-replan, --model and --manual apply).
    The previous turn is complete: asks for a message (or takes -m), then plans the
    latest turn, as by `teddy plan`.
    """
    from plankit.errors import InputError
    from plankit.teddy.planning.loop import choose_planner, saved_message
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import find_session

    root = _project_root()
    try:
        config = load_config(root)
        session = find_session(root, session_name)
        turn = session.latest()
    except InputError as exc:
        _fail(str(exc))
    if turn.plan_path.exists() and not turn.report_path.exists():
        if message is not None:
            click.echo(f"teddy: turn {turn.name} already has a plan; -m is not used", err=True)
        ctx.invoke(
            execute,
            plan=None,
            yes=yes,
            session_name=session.name,
            model=model,
            manual=manual,
            no_replan=no_replan,
        )
        return
    if turn.report_path.exists():
        _fail(
            f"turn {turn.name} was executed but the session has no next turn; "
            "start a new session with `teddy new NAME`"
        )
    saved = saved_message(turn)
    text = message if message is not None else _read_message(turn.name, saved)
    try:
        planner = choose_planner(model=model, manual=manual, config=config)
    except InputError as exc:
        _fail(str(exc))
    assert planner is not None
    _plan_and_report(turn, text, planner, config)


@cli.command("get-prompt")
@click.argument("agent", required=False)
@click.option("--list", "list_agents", is_flag=True, help="List the agents that have a prompt.")
def get_prompt_command(agent: str | None, list_agents: bool) -> None:
    """Print the system prompt of AGENT (default: the configured default agent).

    A project's .teddy/prompts/<agent>.xml wins over the bundled prompt.
    """
    from plankit.errors import InputError
    from plankit.teddy.session.config import Config, load_config
    from plankit.teddy.session.prompts import get_prompt, known_agents
    from plankit.workspace import find_root

    root = find_root()
    try:
        if list_agents:
            click.echo("\n".join(known_agents(root)))
            return
        config = load_config(root) if root is not None else Config()
        text = get_prompt(agent or config.default_agent, root)
    except InputError as exc:
        _fail(str(exc))
    click.echo(text, nl=not text.endswith("\n"))


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``teddy`` console script."""
    run(cli, "teddy", argv)
