"""``teddy parse`` and ``teddy preprocess``: the plan format on its own."""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING

import click

from plankit.cliutil import EXIT_INVALID
from plankit.teddy.cli.common import (
    JSON_HELP,
    clipboard_error,
    echo_json,
    fail,
    print_diagnostics,
    read_input,
)

if TYPE_CHECKING:
    from plankit.teddy.format.model import Action, Plan


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


def _suggest_preprocess(name: str, texts: list[str]) -> None:
    """Say so when ``teddy preprocess`` makes an invalid plan valid (``texts``: see
    :func:`_changes_to_valid`)."""
    # a full collection empties the free lists, whose objects pin memory the failed parse
    # freed: 20 MB for a 10 MB plan, given back for 14 ms
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()  # what the repair and the parse leave goes at exit; collecting it costs more
    try:
        count = _changes_to_valid(texts)
    finally:
        if enabled:
            gc.enable()
    if count:
        target = "-" if name == "<stdin>" else name
        click.echo(
            f"{name}: `teddy preprocess {target}` makes it a valid plan "
            f"({count} change{'s' * (count != 1)})",
            err=True,
        )


def _changes_to_valid(texts: list[str]) -> int:
    """How many changes ``teddy preprocess`` makes to an invalid plan to make it valid;
    0 when it changes nothing, or the result does not parse either.

    ``texts`` holds the plan's text, and nothing else does: it is let go before the
    repaired plan is parsed and, where the repair is known as edits, before the repaired
    plan is decoded (from its UTF-8, see :func:`apply_edits`), so that a large plan is
    never in memory twice, nor with a parse beside it.
    """
    from plankit.teddy.format.answer import answer_edits, answer_to_plan, apply_edits
    from plankit.teddy.format.parse import check_plan

    found = answer_edits(texts[0])
    if found is None:
        made = answer_to_plan(texts.pop())
        count, repaired = len(made.changes), made.text
        del made
    else:
        edits, changes = found
        count = len(changes)
        if not count:
            return 0
        repaired = apply_edits(texts, edits)
    return count if count and check_plan(repaired)[0] is not None else 0


@click.command()
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
            from plankit.errors import diagnostics_json

            echo_json({"errors": diagnostics_json([exc.diagnostic()], name)})
        fail(str(exc))
    text = doc.text
    del doc
    result, diagnostics = check_plan(text)
    if result is None:
        print_diagnostics(name, diagnostics, as_json)
        del diagnostics
        texts = [text]
        del text  # the suggestion holds the only reference, and lets it go when it can
        _suggest_preprocess(name, texts)
        sys.exit(EXIT_INVALID)
    if as_json:
        echo_json(plan_to_dict(result))
    else:
        _print_plan(result)


@click.command()
@click.argument("plan", required=False, type=click.Path(dir_okay=True, allow_dash=True))
@click.option(
    "--check",
    is_flag=True,
    help="Change nothing; exit 1 when the plan would be repaired (for pre-commit).",
)
@click.option("--no-copy", is_flag=True, help="Clipboard mode: do not copy the result back.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def preprocess(plan: str | None, check: bool, no_copy: bool, as_json: bool) -> None:
    """Make a model's answer a plan: unwrap it and repair its fences.

    \b
    teddy preprocess PLAN     rewrite PLAN in place
    teddy preprocess -        read standard input, write the result to standard output
    teddy preprocess          clipboard mode: read the clipboard, print the result and
                              copy it back (unless --no-copy)

    Text before the plan's title and a fence wrapped around the plan are dropped (a
    plan copied out of a chat window), ambiguous code fences repaired, remarks after
    the last action's block dropped; a plan that parses is never changed.  What was
    changed is listed on standard error, line by line.  With --json, standard output
    gets one object instead: the source, whether it changed, the changes (line, kind,
    message) and the resulting text.
    """
    from plankit.teddy.format.answer import answer_to_plan
    from plankit.textio import decode_text, write_text_atomic

    if plan is None:
        from plankit import clipboard

        try:
            pasted = clipboard.paste()
        except clipboard.ClipboardUnavailable as exc:
            clipboard_error(exc)
        if not pasted.strip():
            fail("the clipboard is empty; copy a plan first, or pass a plan file")
        source = decode_text(pasted.encode("utf-8"), path="<clipboard>")
        name = "<clipboard>"
    else:
        source = read_input(plan)
        name = "<stdin>" if plan == "-" else plan
    result = answer_to_plan(source.text)
    for change in result.changes:
        click.echo(f"{name}:{change.line}: {change.message}", err=True)
    for problem in result.problems:
        click.echo(f"{name}:{problem.line}: error: {problem.message}", err=True)
    if as_json:
        echo_json(
            {
                "source": name,
                "changed": result.changed,
                "changes": [
                    {
                        "line": c.line,
                        "kind": c.kind,
                        "message": c.message,
                        "touches_action": c.touches_action,
                    }
                    for c in result.changes
                ],
                "problems": [{"line": p.line, "message": p.message} for p in result.problems],
                "text": result.text,
            }
        )
    if result.problems:
        count = len(result.problems)
        fail(
            f"{name}: nothing was written: {count} place{'s' * (count != 1)} where the "
            "answer reads two ways (listed above); fix it by hand"
        )
    if check:
        if result.changed:
            count = len(result.changes)
            click.echo(f"{name}: would change it ({count} change{'s' * (count != 1)})", err=True)
            sys.exit(EXIT_INVALID)
        return
    if plan is None:
        if not as_json:
            click.echo(result.text, nl=False)
        if not no_copy:
            from plankit import clipboard

            try:
                clipboard.copy(result.text)
            except clipboard.ClipboardUnavailable as exc:
                clipboard_error(exc)
        return
    if plan == "-":
        if not as_json:
            sys.stdout.buffer.write(result.text.encode("utf-8"))
            sys.stdout.buffer.flush()
        return
    if result.changed:
        write_text_atomic(plan, result.text, bom=source.bom)
        count = len(result.changes)
        click.echo(f"{name}: repaired ({count} change{'s' * (count != 1)})", err=True)
    else:
        click.echo(f"{name}: nothing to repair", err=True)
