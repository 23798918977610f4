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

if TYPE_CHECKING:
    from plankit.errors import Diagnostic
    from plankit.teddy.plan import Action, Plan
    from plankit.textio import TextFile

EXIT_INVALID = 1
EXIT_INTERRUPTED = 130


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
    from plankit.teddy import plan as m

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
    from plankit.teddy.parse import check_plan
    from plankit.teddy.plan import plan_to_dict
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
    from plankit.teddy.preprocess import preprocess as sanitize
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
    from plankit.teddy.config import load_config
    from plankit.teddy.prompts import agent_name, get_prompt
    from plankit.teddy.session import create_session
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
    from plankit.teddy.config import load_config
    from plankit.teddy.context import build_payload
    from plankit.teddy.session import find_session
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
def execute(plan: str | None, yes: bool, session_name: str | None) -> None:
    """Validate, approve and execute a plan, then prepare the next turn.

    \b
    With no PLAN: the current turn's plan.md.
    With a PLAN inside .teddy/: that turn (it must be the latest).
    With any other PLAN: stateless mode, against the project root (the directory
    holding .teddy/, or the current directory); the report is printed, not saved.
    """
    from plankit.errors import InputError
    from plankit.teddy.config import load_config
    from plankit.teddy.execute import execute_stateless, execute_turn
    from plankit.teddy.report import Status
    from plankit.teddy.review import Approver, AutoApprover, ChatResponder
    from plankit.teddy.review.console import ConsoleApprover, ConsoleChat, ShowOnly
    from plankit.teddy.session import find_session, plan_turn
    from plankit.workspace import find_root

    root = find_root() or Path.cwd()
    try:
        config = load_config(root)
        approver: Approver = AutoApprover() if yes else ConsoleApprover(config.preview_command)
        chat: ChatResponder = ShowOnly() if yes else ConsoleChat()
        turn = None
        if plan is None:
            if not (root / ".teddy").is_dir():
                _fail("no .teddy/ directory here or above: give a PLAN file, or `teddy new NAME`")
            turn = find_session(root, session_name).latest()
        else:
            turn = plan_turn(root, Path(plan))
        if turn is not None:
            outcome = execute_turn(turn, approver=approver, chat=chat, config=config)
        else:
            from plankit.textio import read_text

            read_text(plan or "")  # a clear error for a missing or bad file
            outcome = execute_stateless(
                Path(plan or ""), root, approver=approver, chat=chat, config=config
            )
    except InputError as exc:
        _fail(str(exc))
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
@click.option("-v", "--verbose", is_flag=True, help="Log each request on standard error.")
def acp_command(planner: str | None, verbose: bool) -> None:
    """Serve TeDDy as an Agent Client Protocol agent on stdin/stdout.

    For ACP clients (Zed, acpx, `plankit acp run` …): each prompt is one TeDDy turn in
    a session created in the client's working directory; actions become tool calls,
    each asking the client's permission.  Only ACP messages go to stdout.
    """
    from plankit.acp.agent import load_planner, serve
    from plankit.errors import InputError

    try:
        loaded = load_planner(planner) if planner else None
    except InputError as exc:
        _fail(str(exc))
    serve(loaded, verbose=verbose)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``teddy`` console script."""
    try:
        code = cli.main(args=argv, prog_name="teddy", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("teddy: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        click.echo("teddy: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
