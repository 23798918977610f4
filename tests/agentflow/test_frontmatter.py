"""Front matter: splitting, strict parsing, and the fast path agreeing with ruamel.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from plankit.agentflow import frontmatter as fm
from plankit.agentflow.fields import TaskFields, quick_task_fields, read_task_fields
from plankit.agentflow.frontmatter import FrontMatterError, Map, Scalar, Seq, parse, split


def test_split_finds_front_matter_body_and_lines() -> None:
    doc = split("---\nid: a\n---\n\nBody\n")
    assert (doc.front_matter, doc.yaml_line, doc.body, doc.body_line) == (
        "id: a\n",
        2,
        "\nBody\n",
        4,
    )
    empty = split("---\n---\nBody")
    assert (empty.front_matter, empty.body, empty.body_line) == ("", "Body", 3)
    assert split("# Just Markdown\n").front_matter is None
    assert split("----\nnot front matter\n").front_matter is None
    # an opening or closing line with blanks after its dashes, as editors leave them
    blanks = split("---  \nid: a\nagent: codex\n---\t\nB")
    assert (blanks.front_matter, blanks.yaml_line, blanks.body, blanks.body_line) == (
        "id: a\nagent: codex\n",
        2,
        "B",
        5,
    )


@pytest.mark.parametrize(
    ("text", "front_matter", "body", "body_line"),
    [
        # a horizontal rule in the body is no closing line of the front matter
        ("---\nid: a\n---\n\nIntro.\n\n---\n\nMore.\n", "id: a\n", "\nIntro.\n\n---\n\nMore.\n", 4),
        ("---\n---\nIntro.\n\n---\nMore.\n", "", "Intro.\n\n---\nMore.\n", 3),
        ("--- \nid: a\n---\nIntro.\n---\n", "id: a\n", "Intro.\n---\n", 4),
        ("---\nid: a\n----\nb: c\n---\nBody\n---\n", "id: a\n----\nb: c\n", "Body\n---\n", 6),
    ],
)
def test_the_front_matter_ends_at_its_first_closing_line(
    text: str, front_matter: str, body: str, body_line: int
) -> None:
    doc = split(text)
    assert (doc.front_matter, doc.yaml_line, doc.body, doc.body_line) == (
        front_matter,
        2,
        body,
        body_line,
    )


@pytest.mark.parametrize(
    "text",
    [
        "---",
        "---\n",
        "---\nid: a\n",
        "---\nid: a\n----\n",
        "---\nid: a\n----",  # a longer line of dashes, at the end of the file
        "---\nTip\n------\nUse the CLI.\n",  # a rule, then a heading underlined with dashes
    ],
)
def test_unclosed_front_matter_is_an_error(text: str) -> None:
    with pytest.raises(FrontMatterError, match="not closed"):
        split(text)


def test_crlf_is_normalized() -> None:
    assert fm.normalize_newlines("a\r\nb\rc\n") == "a\nb\nc\n"


@pytest.mark.parametrize(
    ("yaml", "message", "line"),
    [
        ("id: a\nid: b\n", "duplicate field 'id' (first on line 2)", 3),
        ("a: !!python/object/apply:os.system ['true']\n", "YAML tags such as !!python", 2),
        ("a: !custom x\n", "YAML tags such as !custom", 2),
        ("a: &x [1]\nb: *x\n", "anchors (&name) and aliases", 2),
        ("a: [b\n", "invalid YAML", 3),
        ("a: 1\n...\nb: 2\n", "more than one YAML document", 4),
        ("[a]: 1\n", "keys must be plain field names", 2),
        ("a: " + "[" * 40 + "]" * 40 + "\n", "nested more than 16 levels", 2),
    ],
)
def test_unsafe_or_invalid_yaml_is_refused_with_a_line(yaml: str, message: str, line: int) -> None:
    for fast in (True, False):
        with pytest.raises(FrontMatterError) as info:
            parse(yaml, 2, fast=fast)
        assert message in info.value.message
        assert info.value.line == line


def test_parse_keeps_lines_of_keys_and_items() -> None:
    node = parse("id: a\ndepends_on:\n  - b\n  - c\nagent:\n", 2)
    assert node == Map(
        (
            ("id", 2, Scalar("a", 2)),
            ("depends_on", 3, Seq((Scalar("b", 4), Scalar("c", 5)), 4)),
            ("agent", 6, Scalar(None, 6)),
        ),
        2,
    )


# --- the fast path agrees with the full parser ---------------------------------------------

# Pieces of text, chosen so that YAML's special sequences come up often.
_PIECES = [
    "a", "Zb", "09", " ", "  ", ":", ": ", " #", "#", ",", ", ", "'", "''", '"', "\\",
    "[", "]", "{", "}", "&x ", "*x", "!", "!!str ", "|", ">", "%", "@", "`", "?", "? ", "~",
    "-", "- ", "null", "é", "\t", "()", "/", "$", ".", "_", "yes", "1.5",
    # Unicode whitespace YAML does not trim (only spaces and tabs are), and characters
    # YAML treats as line breaks or refuses
    "\u00a0", "\u3000", "\u2003", "\u200b", "\u1680", "\u205f", "\u0085", "\u2028",
    "\u2029", "\ufeff", "\x0b", "\x0c", "null\u00a0", " \u00a0",
    "X",  # a letter at an item's edge: nothing but blanks is trimmed
]  # fmt: skip
_SAFE = ["", "a", "Zb", "09", "x y", "é", "(", "/", "."]
# Mostly plain words, with one special piece somewhere: the cases where readings differ.
_texts = st.one_of(
    st.tuples(st.sampled_from(_SAFE), st.sampled_from(_PIECES), st.sampled_from(_SAFE)).map(
        "".join
    ),
    st.lists(st.sampled_from(_PIECES), max_size=5).map("".join),
)
_keys = st.sampled_from(
    ["id", "depends_on", "agent", "subtasks", "title", "a-b", "Key", "x1", "null", "NULL", "~"]
)


@st.composite
def _value(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["plain", "dq", "sq", "flow", "block", "empty"]))
    text = draw(_texts)
    if kind == "plain":
        return " " + text
    if kind == "dq":
        return f' "{text}"'
    if kind == "sq":
        return f" '{text}'"
    if kind == "flow":
        items = draw(st.lists(_texts, max_size=4))
        return " [" + draw(st.sampled_from([", ", ",", " , "])).join(items) + "]"
    if kind == "block":
        indent = " " * draw(st.sampled_from([0, 2, 4]))
        items = draw(st.lists(_texts, min_size=1, max_size=3))
        jitter = draw(st.booleans())
        lines = [
            f"{indent}{' ' if jitter and i == 1 else ''}- {item}" for i, item in enumerate(items)
        ]
        return "\n" + "\n".join(lines)
    return draw(st.sampled_from(["", " ", "  "]))


@st.composite
def _documents(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        extra = draw(st.sampled_from(["", "", "", "# comment", "  # indented comment", " "]))
        if extra:
            lines.append(extra)
        lines.append(draw(_keys) + ":" + draw(_value()) + draw(st.sampled_from(["", " ", "  "])))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


def _full(yaml: str) -> object:
    from plankit.agentflow.yamlstrict import parse_events

    try:
        return parse_events(yaml, 2, fm.MAX_DEPTH)
    except FrontMatterError as exc:
        return ("error", exc.line)


def test_fast_path_gives_the_full_parsers_tree_whenever_it_answers() -> None:
    answered: list[str] = []

    @settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_documents())
    def agrees(yaml: str) -> None:
        fast = fm._fast(yaml, 2)
        if fast is not None:
            answered.append(yaml)
            assert fast == _full(yaml), yaml

    agrees()
    # A fast path that declined everything would pass the check above unexamined; it
    # answers about one generated document in five (110 of 600 in a typical run).
    assert len(answered) >= 50, f"the fast path answered only {len(answered)} of 600 documents"


def test_fast_path_answers_for_the_usual_front_matter() -> None:
    usual = [
        'title: "Add user authentication"\n',
        "id: create-schema\ndepends_on: []\n",
        "id: implement-service\ndepends_on: [create-schema]\nagent: claude-code\n"
        "subtasks:\n  - Define service interface\n  - Implement SQLite store\n",
        "id: a\ndepends_on:\n- b\n- c\n# a comment\n\nagent: codex\n",
        "title: 'Single quoted, with comma'\n",
        'subtasks: ["Write the code, then test it", "Ship it"]\n',
    ]
    for yaml in usual:
        fast = fm._fast(yaml, 2)
        assert fast is not None, yaml
        assert fast == _full(yaml)


_TEMPLATES = [
    "k: {p}", "k: a{p}", "k: {p}b", "k: a{p}b", "k: a {p} b", "k: '{p}'", 'k: "{p}"',
    "k: [{p}]", "k: [a{p}]", "k: [{p}b, c]", "k: [a, b{p}c]", "k: [a{p} b]",
    "k:\n  - {p}", "k:\n  - a{p}", "k:\n- {p}b\n- c", "k:\n  - a\n  -{p}",
    "k{p}: v", "{p}k: v", "k: v\n{p}", "k: v\n  {p}", "k:\n  - a\n{p}",
    "k: [a]{p}", "k: [a, 'b']{p}",
]  # fmt: skip


def test_fast_path_agrees_on_every_special_piece_in_every_position() -> None:
    checked = 0
    for piece in _PIECES:
        for template in _TEMPLATES:
            yaml = template.format(p=piece)
            fast = fm._fast(yaml, 2)
            if fast is not None:
                checked += 1
                assert fast == _full(yaml), repr(yaml)
    assert checked > 200  # the fast path answers often enough for this to mean something


@pytest.mark.parametrize(
    ("yaml", "tree"),
    [
        # a trailing no-break space is part of a plain scalar: not null, not trimmed
        ("id: null\u00a0\n", Map((("id", 2, Scalar("null\u00a0", 2)),), 2)),
        ("id: a\u3000\n", Map((("id", 2, Scalar("a\u3000", 2)),), 2)),
        ("id: a   \n", Map((("id", 2, Scalar("a", 2)),), 2)),
        ("k:\n  - b\u2003\n", Map((("k", 2, Seq((Scalar("b\u2003", 3),), 3)),), 2)),
        ("k: [c\u00a0, d]\n", Map((("k", 2, Seq((Scalar("c\u00a0", 2), Scalar("d", 2)), 2)),), 2)),
    ],
)
def test_only_spaces_and_tabs_are_trimmed_on_both_paths(yaml: str, tree: Map) -> None:
    assert _full(yaml) == tree
    assert parse(yaml, 2) == tree
    fast = fm._fast(yaml, 2)
    assert fast == tree


@pytest.mark.parametrize("key", ["null", "Null", "NULL"])
def test_a_null_key_is_read_as_yaml_reads_it(key: str) -> None:
    assert fm._fast(f"{key}: a\n", 2) is None  # left to the full parser
    with pytest.raises(FrontMatterError, match="keys must be plain field names"):
        parse(f"id: a\n{key}: b\n", 2)


def test_an_id_with_unicode_space_is_not_kebab_case(tmp_path: Path) -> None:
    from plankit.agentflow.validate import check_dir

    from .helpers import write_plan

    directory = write_plan(
        tmp_path / "p",
        tasks={
            "01-a.md": "---\nid: a\u3000\n---\n\nX\n",
            "02-b.md": "---\nid: null\u00a0\n---\n\nY\n",
        },
    )
    _, problems = check_dir(str(directory))
    assert [(p.code, Path(p.file).name) for p in problems] == [
        ("id-format", "01-a.md"),
        ("id-format", "02-b.md"),
    ]


def _closing_by_regex(text: str, pos: int, end: int) -> tuple[int, int] | None:
    """The closing line as a multiline regular expression finds it (the reference)."""
    import re

    while True:
        match = re.compile(r"^---", re.M).search(text, pos, end)
        if match is None:
            return None
        blanks = re.compile(r"[ \t]*").match(text, match.end())
        assert blanks is not None
        if blanks.end() == len(text) or text[blanks.end()] == "\n":
            return match.start(), blanks.end()
        pos = match.end()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["---", "-", "\n", " ", "\t", "a", "\n---", "--- "]), max_size=12),
    st.integers(0, 40),
    st.integers(0, 40),
)
@example(["\n---", "\n"], 2, 5)  # a line "---" that starts just before the search does not count
def test_the_closing_line_search_agrees_with_the_regular_expression(
    pieces: list[str], pos: int, end: int
) -> None:
    text = "".join(pieces)
    pos, end = min(pos, len(text)), min(end, len(text))
    assert fm._closing(text, pos, end) == _closing_by_regex(text, pos, end), (text, pos, end)


# --- a task's fields read straight from its lines agree with the tree's ----------------


def _tree_fields(yaml: str) -> TaskFields | None:
    """The fields ``read_task_fields`` finds in the parsed tree (``None``: unparsable)."""
    try:
        return read_task_fields(parse(yaml, 2), 2)
    except FrontMatterError:
        return None


# Front matter as models and people write it for a task: the quick reading answers.
_USUAL_TASKS = [
    "id: create-schema\n",
    "id: create-schema\ndepends_on: []\n",
    "id: api\ndepends_on: [create-schema, auth]\nagent: claude-code\n",
    "id: api\ndepends_on:\n  - create-schema\n  - auth\nagent: codex\n",
    "id: \"docs\"\nagent: 'gemini'\nsubtasks:\n- Write the README\n- Check the links\n",
    "# the task\nid: ui   \n\ndepends_on: [ api ,  auth ]   # not a comment: part of the list?\n",
    "id: ui\ndepends_on: [api, api, auth]\n",  # a repeated dependency is kept once
    "id: ui\ndepends_on:\n    - api\n    # waiting on the API\n    - auth\nagent:\n",
    "id: ui\nagent: null\nsubtasks: Null\ndepends_on:\n",
    "id: ui\nsubtasks: ['Build it, then test it', \"Ship: to staging\"]\n",
    "id: ui\nagent: claude-code\nsubtasks:\n  - Write the code   \n  - Test it\n",
    "id: ' ui'\nagent: \"codex \"\n",  # blanks inside quotes: trimmed from ids and agents
    "id: a\u00a0b\n",  # a no-break space is text: the id check reports it later
]


@pytest.mark.parametrize("yaml", _USUAL_TASKS)
def test_a_usual_task_is_read_straight_from_its_lines(yaml: str) -> None:
    quick = quick_task_fields(yaml, 2)
    tree = _tree_fields(yaml)
    assert tree is not None and tree.issues == ()
    if "not a comment" in yaml:  # '#' inside a flow list: only the full parser reads it
        assert quick is None
        return
    assert quick == tree


def test_the_quick_reading_reads_what_a_model_wrote() -> None:
    fields = quick_task_fields(
        "id: api\ndepends_on:\n  - create-schema\n  - auth\n  - auth\nagent: codex\n"
        "subtasks: [Write it, 'Test it, twice']\n",
        5,
    )
    assert fields == TaskFields(
        "api",
        5,
        (("create-schema", 7), ("auth", 8)),
        6,
        "codex",
        ("Write it", "Test it, twice"),
        (),
    )


# Front matter with something to report, or beyond the fast path's shapes (a list item
# indented deeper, which YAML reads as the text "b - c"): the quick reading leaves each
# to the parser and read_task_fields, which explain it.
_DECLINED = [
    "depends_on: [a]\n",  # no id
    "id:\n",
    "id: ''\n",
    "id: ~\n",
    "id: [a]\n",
    "id:\n  - a\n",
    "id: a\nid: b\n",
    "id: a\ndepends-on: [b]\n",
    "id: a\ntitle: A\n",
    "id: a\ndepends_on: b\n",
    "id: a\ndepends_on: [b, ~]\n",
    "id: a\ndepends_on:\n  - b\n  -  \n",
    "id: a\ndepends_on:\n  - b\n   - c\n",
    "id: a\nsubtasks: Write it\n",
    "id: a\nsubtasks:\n  - ''\n",
    "id: a\nagent: [claude-code]\n",
    "id: a\nagent: []\n",  # an empty list is still a list where text belongs
    "id: a\nagent: [ ]\n",
    "id: a\nagent:\n  - claude-code\n",
    "- a\nid: b\n",
    "id: a\n  - b\n",
    "id: a\ndepends_on: [b]\n  - c\n",
    "id: a\nagent: {name: codex}\n",
    "id: a\tb\n",
    "id: a\nsubtasks:\n  - step: one\n",
]


@pytest.mark.parametrize("yaml", _DECLINED)
def test_front_matter_with_an_issue_is_left_to_the_parser(yaml: str) -> None:
    assert quick_task_fields(yaml, 2) is None
    tree = _tree_fields(yaml)
    assert tree is None or tree.issues or fm._fast(yaml, 2) is None


@st.composite
def _task_documents(draw: st.DrawFn) -> str:
    """A task's front matter: an id, then fields known and unknown, some repeated."""
    lines = ["id:" + draw(_value())]
    for _ in range(draw(st.integers(0, 4))):
        extra = draw(st.sampled_from(["", "", "", "# comment", "  # indented comment", " "]))
        if extra:
            lines.append(extra)
        key = draw(st.sampled_from(["depends_on", "agent", "subtasks", "id", "agents"]))
        lines.append(key + ":" + draw(_value()) + draw(st.sampled_from(["", " ", "  "])))
    draw(st.randoms()).shuffle(lines)
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


def test_the_quick_reading_agrees_with_the_tree_wherever_it_answers() -> None:
    answered: list[str] = []
    missed: list[str] = []

    @settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_task_documents())
    def agrees(yaml: str) -> None:
        quick = quick_task_fields(yaml, 2)
        tree = _tree_fields(yaml)
        if quick is not None:
            answered.append(yaml)
            assert quick == tree, yaml
        elif fm._fast(yaml, 2) is not None and tree is not None and not tree.issues:
            missed.append(yaml)  # the fast path's shapes, no issue: it should have answered

    agrees()
    assert missed == []
    # a reading that declined everything would pass unexamined
    assert len(answered) >= 20, f"the quick reading answered only {len(answered)} documents"


# A line or a flow list that does not match, after many that do and that end in blanks:
# the fast path must give up at once (it once tried every split of those blanks, which
# took time exponential in the lines). Run in a child process with a generous deadline,
# so that a regression fails instead of hanging the suite.
_SLOW_BEFORE = """
import sys
from plankit.agentflow.fields import quick_task_fields
from plankit.agentflow.frontmatter import parse
items = "".join(f"  - Write part {i} \\n" for i in range(60))
task = "id: api \\nsubtasks:\\n" + items + "  - Deploy: to staging\\n"
flow = "id: a\\ndepends_on: [" + "b  , " * 60 + "c  ,\\n"
lines = "id: a  \\n" + "".join(f"k{i}: v  \\n" for i in range(60)) + "bad line\\n"
assert quick_task_fields(task, 2) is None and quick_task_fields(flow, 2) is None
print(parse(task, 2).items[1][2].items[-1].items[0][0])
for text in (flow, lines):
    try:
        parse(text, 2)
    except Exception as exc:
        print(type(exc).__name__)
"""


def test_front_matter_that_almost_matches_is_given_up_at_once() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _SLOW_BEFORE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Deploy", "FrontMatterError", "FrontMatterError"]
