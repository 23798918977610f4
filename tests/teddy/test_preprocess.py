"""`teddy preprocess`: the data-driven corpus, its properties, and the command line.

Each case in ``tests/data/preprocess/`` is a pair ``NN-name.broken.md`` →
``NN-name.expected.md``, the expected file written by hand: the outer fences of a block
lengthened to one more than the longest run of the fence character inside it, a
missing closing fence inserted after the block's last non-blank line, every other
byte as it was; for a model's answer (text around the plan, a fence wrapped around it,
remarks after the last action), the plan alone.  :func:`answer_to_plan` turns each
broken file into its expected one; the fence sanitizer alone (:func:`preprocess`) does
the cases that only need fences.  Cases named ``-clean-`` are plans that already
parse: they must come back byte for byte.  Files are read as bytes and decoded without any newline
translation, so CRLF line endings, a UTF-8 byte-order mark and a missing final newline
are compared exactly (``.gitattributes`` keeps git from converting them).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plankit import clipboard
from plankit.teddy import cli as teddy_cli
from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.model import Create, Edit, EditPair, Plan
from plankit.teddy.format.parse import RATIONALE_SECTIONS, check_plan
from plankit.teddy.format.preprocess import Change, Preprocessed, Sanitizer, preprocess
from plankit.teddy.format.render import render_plan
from plankit.textio import decode_text
from tests.profiles import examples
from tests.teddy.strategies import plans, text_line

DATA = Path(__file__).resolve().parents[1] / "data" / "preprocess"
CASES = sorted(p.name.removesuffix(".broken.md") for p in DATA.glob("*.broken.md"))
CLEAN = [name for name in CASES if "-clean-" in name]
BROKEN = [name for name in CASES if name not in CLEAN]
TEDDY = Path(sys.executable).parent / "teddy"
BOM = b"\xef\xbb\xbf"
FENCE_LINE = re.compile(r"( {0,3})(`{3,}|~{3,})([^\r]*)")

# PREPROCESS_EXAMPLES=20000 searches harder (minutes) when the sanitizer changes; so does
# HYPOTHESIS_PROFILE=long (1,500), see tests/profiles.py.
SETTINGS = settings(
    max_examples=int(os.environ.get("PREPROCESS_EXAMPLES", "0")) or examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def raw(name: str, kind: str) -> bytes:
    return (DATA / f"{name}.{kind}.md").read_bytes()


def load(name: str, kind: str) -> str:
    """A corpus file as text: CRLF and a byte-order mark (as U+FEFF) kept."""
    return raw(name, kind).decode("utf-8")


# the cases whose repair is fences only (the others drop text around the plan)
FENCES_ONLY = [n for n in BROKEN if {c.kind for c in answer_to_plan(load(n, "broken")).changes} == {"fence"}]  # fmt: skip


def proposed_edits(text: str) -> list[tuple[int, int, str]]:
    """What the sanitizer would change, before the parse of rule 1 can veto it."""
    sanitizer = Sanitizer(text.removeprefix("\ufeff"))
    sanitizer.run()
    return sanitizer.edits


def align(before: str, after: str) -> tuple[dict[int, tuple[int, int]], list[tuple[int, str]]]:
    """How ``after`` differs from ``before``, when only fences were lengthened or added.

    Returns {line in before: (old run, new run)} for lengthened fences and, for each
    inserted fence, (the line of ``before`` it comes after, the fence).  Fails when
    ``after`` differs in any other way.
    """
    # Line endings are compared by the corpus tests; a closing fence inserted after a
    # last line without a newline gives that line one.
    old = [line.removesuffix("\r") for line in before.split("\n")]
    new = [line.removesuffix("\r") for line in after.split("\n")]
    lengthened: dict[int, tuple[int, int]] = {}
    inserted: list[tuple[int, str]] = []
    i = 0
    for line in new:
        if i < len(old) and line == old[i]:
            i += 1
            continue
        a = FENCE_LINE.fullmatch(old[i]) if i < len(old) else None
        b = FENCE_LINE.fullmatch(line)
        assert b is not None, f"line {line!r} of the result is neither kept nor a fence"
        if a is not None and a.group(1, 3) == b.group(1, 3) and a[2][0] == b[2][0]:
            assert len(b[2]) > len(a[2]), f"fence shortened at line {i + 1}"
            lengthened[i + 1] = (len(a[2]), len(b[2]))
            i += 1
            continue
        assert not b.group(3).strip(), f"an inserted fence has an info string: {line!r}"
        inserted.append((i, b.group(2)))
    assert i == len(old), f"line {i + 1} of the input was dropped"
    return lengthened, inserted


# --- the corpus ------------------------------------------------------------------------


def test_the_corpus_has_every_kind_of_case_the_issue_names() -> None:
    assert len(CASES) >= 24
    names = {p.name for p in DATA.iterdir()}
    assert names == {f"{n}.{k}.md" for n in CASES for k in ("broken", "expected")}
    broken_bytes = {name: raw(name, "broken") for name in BROKEN}
    assert len(CLEAN) >= 5
    assert any(b"\r\n" in data for data in broken_bytes.values())  # CRLF
    assert any(b"\r\n" in raw(name, "broken") for name in CLEAN)
    assert any(data.startswith(BOM) for data in broken_bytes.values())  # BOM
    assert any(not data.endswith(b"\n") for data in broken_bytes.values())  # no final newline
    assert any(re.search(rb"^~~~~", raw(n, "expected"), re.M) for n in BROKEN)  # tildes
    inserted = [n for n in BROKEN if raw(n, "expected").count(b"\n") > broken_bytes[n].count(b"\n")]
    assert len(inserted) >= 4  # unclosed blocks
    assert any(b"### `CREATE`" in data and b"`FIND:`" in data for data in broken_bytes.values())


@pytest.mark.parametrize("name", [n for n in CASES if "crlf" in n])
def test_crlf_cases_are_crlf_throughout(name: str) -> None:
    for kind in ("broken", "expected"):
        data = raw(name, kind)
        assert data.count(b"\n") == data.count(b"\r\n") > 20


@pytest.mark.parametrize("name", CASES)
def test_repairs_into_the_expected_plan(name: str) -> None:
    result = answer_to_plan(load(name, "broken"))
    assert result.text.encode("utf-8") == raw(name, "expected")
    assert result.changed == (name in BROKEN)
    if name in FENCES_ONLY or name in CLEAN:
        assert preprocess(load(name, "broken")) == result


def test_the_corpus_has_answers_to_unwrap() -> None:
    kinds = {c.kind for n in BROKEN for c in answer_to_plan(load(n, "broken")).changes}
    assert kinds == {"fence", "preamble", "wrapper", "remarks"}
    assert len(FENCES_ONLY) >= 30


@pytest.mark.parametrize("name", CASES)
def test_the_expected_plan_parses_without_diagnostics(name: str) -> None:
    text = decode_text(raw(name, "expected"), path=name).text
    plan, diagnostics = check_plan(text)
    assert diagnostics == []
    assert plan is not None


@pytest.mark.parametrize("name", BROKEN)
def test_the_broken_plan_does_not_parse(name: str) -> None:
    plan, diagnostics = check_plan(decode_text(raw(name, "broken"), path=name).text)
    assert plan is None
    assert diagnostics


@pytest.mark.parametrize("name", CASES)
def test_idempotent(name: str) -> None:
    for step in (preprocess, answer_to_plan):
        once = step(load(name, "broken"))
        twice = step(once.text)
        assert twice.text == once.text
        assert twice.changes == ()
        expected = load(name, "expected")
        assert step(expected) == Preprocessed(expected, ())


@pytest.mark.parametrize("name", CASES)
def test_the_sanitizer_itself_leaves_expected_plans_alone(name: str) -> None:
    # Not only does rule 1 (the parse) keep a valid plan: the sanitizer finds nothing
    # to repair in a plan whose fences follow the rule.
    assert proposed_edits(load(name, "expected")) == []


def test_a_plan_that_parses_is_kept_even_when_the_sanitizer_proposes_a_repair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Rule 1 is a safety net under the structural rules: whatever the sanitizer would
    # change, a plan that parses without a problem comes back byte for byte.
    import plankit.teddy.format.preprocess as module

    original_run = module.Sanitizer.run

    def run_and_propose(self: module.Sanitizer) -> None:
        original_run(self)
        self.edits.append((0, 1, "X"))  # with a note: an edit that reports no change
        self.notes.append((0, "planted", ()))  # is dropped before rule 1 is reached

    monkeypatch.setattr(module.Sanitizer, "run", run_and_propose)
    text = load("18-clean-spec-comprehensive-example", "broken")
    assert proposed_edits(text) != []  # the (planted) proposal is there …
    assert preprocess(text) == Preprocessed(text, ())  # … but the plan parses: rule 1 wins


@pytest.mark.parametrize("name", FENCES_ONLY)
def test_changes_name_the_fences_that_changed(name: str) -> None:
    before, after = load(name, "broken"), load(name, "expected")
    lengthened, inserted = align(before, after)
    assert lengthened or inserted
    old = [line.removesuffix("\r") for line in before.split("\n")]
    changes = preprocess(before).changes
    assert [c.line for c in changes] == sorted(c.line for c in changes)
    for change in changes:
        line = old[change.line - 1]
        assert FENCE_LINE.fullmatch(line), f"line {change.line} is not a fence: {line!r}"
        if "inserted" in change.message:
            m = re.search(r"inserted the closing fence ([`~]+) after line (\d+)$", change.message)
            assert m is not None, change.message
            inserted.remove((int(m.group(2)), m.group(1)))
        pair = re.search(r"from (\d+) to (\d+)", change.message)
        if pair is not None:
            assert lengthened.pop(change.line) == (int(pair.group(1)), int(pair.group(2)))
    assert lengthened == {}, f"lengthened but not reported: {lengthened}"
    assert inserted == [], f"inserted but not reported: {inserted}"


def test_change_messages_read_well() -> None:
    changes = preprocess(load("01-create-markdown-with-python-blocks", "broken")).changes
    assert changes == (
        Change(27, "lengthened the opening fence from 3 to 4 (the block ends at line 45)"),
        Change(45, "lengthened the closing fence from 3 to 4 (the block opens at line 27)"),
    )
    changes = preprocess(load("14-unclosed-final-create-with-inner-blocks", "broken")).changes
    assert changes == (
        Change(
            26,
            "the block opened here never closed: lengthened its opening fence from 3 to 4 "
            "and inserted the closing fence ```` after line 41",
        ),
    )


def test_a_plan_invalid_for_other_reasons_keeps_its_good_fences() -> None:
    text = load("18-clean-spec-comprehensive-example", "expected").replace(
        "### `INVOKE`", "### `HANDOFF`"
    )
    assert check_plan(text)[0] is None
    assert preprocess(text) == Preprocessed(text, ())


def test_only_the_broken_block_of_an_invalid_plan_is_repaired() -> None:
    broken = load("01-create-markdown-with-python-blocks", "broken")
    expected = load("01-create-markdown-with-python-blocks", "expected")
    unknown = "### `DEPLOY`\n- **Description:** not an action.\n"
    result = preprocess(broken + "\n" + unknown)
    assert result.text == expected + "\n" + unknown
    assert check_plan(result.text)[0] is None  # still invalid: DEPLOY is for the parser


def test_a_leading_bom_is_kept_and_lines_are_counted_without_it() -> None:
    text = "\ufeff" + load("01-create-markdown-with-python-blocks", "broken")
    result = preprocess(text)
    assert result.text == "\ufeff" + load("01-create-markdown-with-python-blocks", "expected")
    assert [c.line for c in result.changes] == [27, 45]


# --- properties --------------------------------------------------------------------------

RATIONALE_TEXT = "\n".join(
    f"### {i}. {name}\nDone." for i, name in enumerate(RATIONALE_SECTIONS, 1)
)

_HEADINGS = [
    "# A plan",
    "## Rationale",
    "## Memos",
    "## Action Plan",
    "## Install",
    "### 1. Synthesis",
    "#### FIND:",
    *(
        f"### `{name}`"
        for name in (
            "CREATE",
            "READ",
            "EDIT",
            "EXECUTE",
            "RESEARCH",
            "CHAT_WITH_USER",
            "INVOKE",
            "CONCLUDE",
            "PRUNE",
        )
    ),
]
fence_line = st.builds(
    lambda indent, char, length, info: " " * indent + char * length + info,
    st.sampled_from([0, 0, 0, 1, 3, 4]),
    st.sampled_from("`~"),
    st.integers(3, 6),
    st.sampled_from(["", "", "python", "markdown", " text", "  ", "`x`", "~~"]),
)
plan_line = st.one_of(
    fence_line,
    fence_line,
    st.sampled_from(_HEADINGS),
    st.sampled_from(["`FIND:`", "`REPLACE:`", "**FIND:**", "REPLACE:"]),
    st.sampled_from(
        ["- **File Path:** [a.md](/a.md)", "- **Resource:** [b.md](/b.md)", "- **Agent:** Ann"]
    ),
    text_line,
    st.sampled_from(["", "", "   "]),
)


@st.composite
def plan_like(draw: st.DrawFn) -> str:
    lines = draw(st.lists(plan_line, max_size=40))
    if draw(st.booleans()):
        head = ["# T", "- **Status:** Green", "", "## Rationale", "```text"]
        head += [f"### {i}. {s}" for i, s in enumerate(["Synthesis", "Justification"], 1)]
        head += ["### 3. Expected Outcome", "### 4. State Dashboard", "```", "", "## Action Plan"]
        lines = head + lines
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    end = newline if draw(st.booleans()) else ""
    return newline.join(lines) + end


@SETTINGS
@given(st.text())
def test_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    once = preprocess(text)
    assert isinstance(once, Preprocessed)
    assert once.changed == (once.text != text)
    assert preprocess(once.text).text == once.text


@SETTINGS
@given(plan_like())
def test_idempotent_on_plan_like_text_and_changes_only_fences(text: str) -> None:
    once = preprocess(text)
    twice = preprocess(once.text)
    assert twice.text == once.text
    assert twice.changes == ()
    lengthened, inserted = align(text, once.text)
    assert set(lengthened) <= {c.line for c in once.changes}
    assert len(inserted) == sum("inserted" in c.message for c in once.changes)
    if check_plan(text)[0] is not None:
        assert once.text == text


@SETTINGS
@given(plans, st.booleans())
def test_rendered_plans_come_back_unchanged(plan: Plan, crlf: bool) -> None:
    text = render_plan(plan)
    if crlf:
        text = text.replace("\n", "\r\n")
    assert preprocess(text) == Preprocessed(text, ())
    assert proposed_edits(text) == []


_HEAD = "# T\n\n## Rationale\n```text\n" + RATIONALE_TEXT + "\n```\n\n## Action Plan\n\n"


@pytest.mark.parametrize(
    "body",
    [
        "### `CREATE`\n" + "```\n### `READ`\n" * 2000,
        "### `CREATE`\n" + "```python\nx\n" * 2000,
        "### `CREATE`\n```python\nx\n```\nstray\n" * 2000,
        "### `CREATE`\n```\n" + "`" * 100_000 + "\n```\nmore\n",
        "### `CREATE`\n```\n```\n### `EDIT`\n`FIND:`\n```python\n" * 1000,
        "### `CREATE`\n" + "```\n" * 3000,
        "### `EXECUTE`\n" + "```\nfoo\n\n" * 2000,
        "### `CREATE`\n" + "```\n~~~\n### `CREATE`\n" * 2000,
    ],
)
def test_pathological_plans_are_handled_and_stable(body: str) -> None:
    once = preprocess(_HEAD + body)
    assert preprocess(once.text) == Preprocessed(once.text, ())
    align(_HEAD + body, once.text)


# Markdown documents with code blocks of their own: the content models fence too short.
doc_line = text_line.filter(lambda s: not re.fullmatch(r"[`*_ ]*(?i:find|replace)[`*_: ]*", s))
code_block = st.builds(
    lambda char, info, lines: "\n".join([char * 3 + info, *lines, char * 3]),
    st.sampled_from("`~"),
    st.sampled_from(["python", "shell", "text", ""]),
    st.lists(doc_line, min_size=1, max_size=3),
)
markdown_doc = st.lists(
    st.one_of(doc_line, doc_line.map(lambda s: "## " + s), code_block), min_size=1, max_size=6
).map("\n\n".join)


@st.composite
def plan_with_docs(draw: st.DrawFn) -> Plan:
    actions: list[Create | Edit] = []
    for i in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            actions.append(Create(f"docs/page{i}.md", draw(markdown_doc), draw(text_line)))
        else:
            pairs = st.builds(EditPair, markdown_doc, markdown_doc)
            edits = tuple(draw(st.lists(pairs, min_size=1, max_size=2)))
            actions.append(Edit(f"docs/page{i}.md", edits, draw(text_line)))
    return Plan(draw(text_line), (("Status", "Green"),), RATIONALE_TEXT, (), tuple(actions))


@SETTINGS
@given(plan_with_docs(), st.booleans())
def test_outer_fences_written_too_short_are_repaired(plan: Plan, crlf: bool) -> None:
    good = render_plan(plan)
    # The model's version: the fences of four backticks (around content with fences of
    # its own) written with three.
    broken = re.sub(r"^````(?!`)", "```", good, flags=re.MULTILINE)
    if crlf:
        good, broken = good.replace("\n", "\r\n"), broken.replace("\n", "\r\n")
    result = preprocess(broken)
    assert result.text == good
    assert result.changed == (broken != good)


# --- the command line -----------------------------------------------------------------


def invoke(*args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(teddy_cli.cli, ["preprocess", *args], input=stdin)


def one_line_error(result: Result | subprocess.CompletedProcess[bytes]) -> str:
    if isinstance(result, Result):
        code, err = result.exit_code, result.stderr
    else:
        code, err = result.returncode, result.stderr.decode("utf-8")
    assert code == 1
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("teddy: ")
    return lines[0]


@pytest.fixture
def broken_file(tmp_path: Path) -> Path:
    path = tmp_path / "plan.md"
    path.write_bytes(raw("01-create-markdown-with-python-blocks", "broken"))
    return path


def test_rewrites_the_file_in_place(broken_file: Path) -> None:
    broken_file.chmod(0o640)
    result = invoke(str(broken_file))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert broken_file.read_bytes() == raw("01-create-markdown-with-python-blocks", "expected")
    assert stat.S_IMODE(broken_file.stat().st_mode) == 0o640
    assert result.stderr.splitlines() == [
        f"{broken_file}:27: lengthened the opening fence from 3 to 4 (the block ends at line 45)",
        f"{broken_file}:45: lengthened the closing fence from 3 to 4 (the block opens at line 27)",
        f"{broken_file}: repaired (2 changes)",
    ]
    again = invoke(str(broken_file))
    assert again.exit_code == 0
    assert again.stderr == f"{broken_file}: nothing to repair\n"


@pytest.mark.parametrize(
    "name", ["17-utf8-bom-create-with-inner-blocks", "10-crlf-create-markdown-with-code-blocks"]
)
def test_in_place_keeps_the_bom_and_crlf(tmp_path: Path, name: str) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(raw(name, "broken"))
    assert invoke(str(path)).exit_code == 0
    assert path.read_bytes() == raw(name, "expected")


def test_a_clean_file_is_not_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(raw("18-clean-spec-comprehensive-example", "broken"))
    os.utime(path, (1_000_000_000, 1_000_000_000))
    result = invoke(str(path))
    assert result.exit_code == 0
    assert result.stderr == f"{path}: nothing to repair\n"
    assert path.stat().st_mtime == 1_000_000_000


def test_dash_reads_stdin_and_writes_stdout() -> None:
    name = "10-crlf-create-markdown-with-code-blocks"
    result = invoke("-", stdin=raw(name, "broken"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == raw(name, "expected")
    assert "<stdin>:26: lengthened the opening fence from 3 to 4" in result.stderr


def test_check_exits_1_when_a_repair_is_needed_and_changes_nothing(broken_file: Path) -> None:
    before = broken_file.read_bytes()
    result = invoke("--check", str(broken_file))
    assert result.exit_code == 1
    assert broken_file.read_bytes() == before
    assert result.stdout == ""
    assert f"{broken_file}:27: lengthened the opening fence" in result.stderr
    assert result.stderr.endswith(f"{broken_file}: would change it (2 changes)\n")


def test_check_exits_0_on_a_clean_plan(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(raw("19-clean-fences-longer-than-needed", "broken"))
    result = invoke("--check", str(path))
    assert result.exit_code == 0
    assert result.stderr == ""
    assert invoke("--check", "-", stdin=path.read_bytes()).exit_code == 0
    assert (
        invoke(
            "--check", "-", stdin=raw("02-several-broken-blocks-in-one-plan", "broken")
        ).exit_code
        == 1
    )


@pytest.fixture
def fake_clipboard(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    board: dict[str, list[str]] = {"paste": [], "copied": []}

    def paste() -> str:
        return board["paste"][-1]

    monkeypatch.setattr(clipboard, "paste", paste)
    monkeypatch.setattr(clipboard, "copy", board["copied"].append)
    return board


def test_clipboard_mode_prints_and_copies_back(fake_clipboard: dict[str, list[str]]) -> None:
    fake_clipboard["paste"].append(load("22-chat-with-user-nested-fence", "broken"))
    result = invoke()
    assert result.exit_code == 0, result.stderr
    expected = load("22-chat-with-user-nested-fence", "expected")
    assert result.stdout == expected
    assert fake_clipboard["copied"] == [expected]
    assert "<clipboard>:26: lengthened the opening fence from 3 to 4" in result.stderr


def test_clipboard_mode_no_copy(fake_clipboard: dict[str, list[str]]) -> None:
    fake_clipboard["paste"].append(load("22-chat-with-user-nested-fence", "broken"))
    result = invoke("--no-copy")
    assert result.exit_code == 0
    assert result.stdout == load("22-chat-with-user-nested-fence", "expected")
    assert fake_clipboard["copied"] == []


def test_clipboard_mode_check_copies_nothing(fake_clipboard: dict[str, list[str]]) -> None:
    fake_clipboard["paste"].append(load("22-chat-with-user-nested-fence", "broken"))
    assert invoke("--check").exit_code == 1
    assert fake_clipboard["copied"] == []


def test_no_clipboard_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def paste() -> str:
        raise clipboard.ClipboardUnavailable("pyperclip could not find a copy/paste mechanism")

    monkeypatch.setattr(clipboard, "paste", paste)
    line = one_line_error(invoke())
    assert "no clipboard is available" in line
    assert "pass a plan file, or - to read standard input" in line


def test_copy_back_failing_ends_with_an_error_line(
    fake_clipboard: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_clipboard["paste"].append(load("22-chat-with-user-nested-fence", "broken"))

    def copy(text: str) -> None:
        raise clipboard.ClipboardUnavailable("no xclip")

    monkeypatch.setattr(clipboard, "copy", copy)
    result = CliRunner().invoke(teddy_cli.cli, ["preprocess"])
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("teddy: no clipboard is available")


def test_an_empty_clipboard_is_a_one_line_error(fake_clipboard: dict[str, list[str]]) -> None:
    fake_clipboard["paste"].append("  \n")
    assert "the clipboard is empty" in one_line_error(invoke())
    assert fake_clipboard["copied"] == []


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "latin1.md").write_bytes("# Plan\n\ncaf\xe9\n".encode("latin-1"))
    (tmp_path / "nul.md").write_bytes(b"# Plan\n\x00\n")
    with open(tmp_path / "huge.md", "wb") as handle:
        handle.write(b"# Plan\n")
        handle.truncate(50 * 1024 * 1024)
    (tmp_path / "folder.md").mkdir()
    return {
        "empty": (tmp_path / "empty.md", "is empty"),
        "not utf-8": (tmp_path / "latin1.md", "not UTF-8"),
        "nul": (tmp_path / "nul.md", "NUL byte"),
        "50 MB": (tmp_path / "huge.md", "MiB"),
        "missing": (tmp_path / "missing.md", "no such file"),
        "directory": (tmp_path / "folder.md", "is a directory"),
    }


@pytest.mark.parametrize("kind", ["empty", "not utf-8", "nul", "50 MB", "missing", "directory"])
@pytest.mark.parametrize("check", [False, True])
def test_bad_input_is_a_one_line_error(tmp_path: Path, kind: str, check: bool) -> None:
    path, words = _bad_inputs(tmp_path)[kind]
    before = path.read_bytes() if path.is_file() else None
    mtime = path.stat().st_mtime_ns if path.exists() else None
    line = one_line_error(invoke(*(["--check"] if check else []), str(path)))
    assert str(path) in line
    assert words in line
    if before is not None:
        assert path.read_bytes() == before
        assert path.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["empty.md", "latin1.md", "nul.md", "huge.md", "folder.md"]
    )  # no temporary file left behind


@pytest.mark.parametrize(
    ("data", "words"), [(b"", "is empty"), (b"\xff\xfe# Plan\n", "not UTF-8"), (b"#\x00", "NUL")]
)
def test_bad_stdin_is_a_one_line_error(data: bytes, words: str) -> None:
    result = invoke("-", stdin=data)
    assert words in one_line_error(result)
    assert result.stdout == ""


# --- the console script, in a real process ---------------------------------------------

needs_script = pytest.mark.skipif(not TEDDY.exists(), reason="the teddy script is not installed")


def teddy(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [str(TEDDY), "preprocess", *args], input=stdin, capture_output=True, timeout=60, env=env
    )


@needs_script
def test_script_rewrites_in_place(tmp_path: Path) -> None:
    name = "17-utf8-bom-create-with-inner-blocks"
    path = tmp_path / "plan.md"
    path.write_bytes(raw(name, "broken"))
    path.chmod(0o600)
    done = teddy(str(path))
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == raw(name, "expected")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"{path}: repaired (2 changes)" in done.stderr.decode()


@needs_script
def test_script_stdin_to_stdout_and_check() -> None:
    name = "16-content-documents-the-plan-format"
    done = teddy("-", stdin=raw(name, "broken"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == raw(name, "expected")
    assert b"<stdin>:27: lengthened the opening fence from 3 to 5" in done.stderr
    assert teddy("--check", "-", stdin=raw(name, "broken")).returncode == 1
    assert teddy("--check", "-", stdin=raw(name, "expected")).returncode == 0


@needs_script
def test_script_bad_input(tmp_path: Path) -> None:
    assert "is a directory" in one_line_error(teddy(str(tmp_path)))
    (tmp_path / "bin.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert "not UTF-8" in one_line_error(teddy(str(tmp_path / "bin.md")))
    assert (tmp_path / "bin.md").read_bytes() == b"\x89PNG\r\n\x1a\n\x00\x00"


# --- a model's answer on the command line ----------------------------------------------

CHAT_COPY = "34-chat-copy-preamble-wrapper-remarks"


def test_dash_makes_a_chat_copy_a_plan() -> None:
    result = invoke("-", stdin=raw(CHAT_COPY, "broken"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == raw(CHAT_COPY, "expected")
    assert result.stderr.splitlines() == [
        "<stdin>:1: dropped the text before the plan's title (line 1): 'Here is the plan:'",
        "<stdin>:3: dropped the ```markdown fence wrapped around the plan (closed at line 42)",
        "<stdin>:44: dropped the text after the plan's fence (line 44): 'Let me know if you "
        "want any changes!'",
    ]
    assert invoke("--check", "-", stdin=raw(CHAT_COPY, "broken")).exit_code == 1
    assert invoke("--check", "-", stdin=raw(CHAT_COPY, "expected")).exit_code == 0


def test_json_lists_each_change_with_its_kind() -> None:
    import json

    result = invoke("--json", "-", stdin=raw(CHAT_COPY, "broken"))
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["changed"] is True
    assert out["text"] == load(CHAT_COPY, "expected")
    assert [(c["line"], c["kind"]) for c in out["changes"]] == [
        (1, "preamble"),
        (3, "wrapper"),
        (44, "remarks"),
    ]


@pytest.mark.parametrize(
    "name", [CHAT_COPY, "36-unclosed-block-before-an-action-with-its-own-block"]
)
def test_parse_says_when_preprocess_makes_the_plan_valid(tmp_path: Path, name: str) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(raw(name, "broken"))
    result = CliRunner().invoke(teddy_cli.cli, ["parse", str(path)])
    assert result.exit_code == 1
    count = len(answer_to_plan(load(name, "broken")).changes)
    assert result.stderr.splitlines()[-1] == (
        f"{path}: `teddy preprocess {path}` makes it a valid plan "
        f"({count} change{'s' * (count != 1)})"
    )
    # a plan invalid for other reasons gets no such hint
    path.write_text(load(name, "expected").replace("### `CHAT_WITH_USER`", "### `DEPLOY`"))
    result = CliRunner().invoke(teddy_cli.cli, ["parse", str(path)])
    assert result.exit_code == 1
    assert "teddy preprocess" not in result.stderr
