"""The block tree: line spans, fences, and agreement with markdown-it-py's own parse."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from plankit.markdown.tree import (
    Block,
    Fence,
    Heading,
    ListBlock,
    OtherBlock,
    Paragraph,
    _Builder,
    _markdown_it,
    normalize,
    parse_document,
    walk,
)


def markdown_it_blocks(text: str) -> tuple[Block, ...]:
    """The tree built straight from markdown-it-py's tokens of the whole text."""
    return tuple(_Builder({}).build(_markdown_it().parse(normalize(text))))


LINES = st.sampled_from(
    [
        "# Title", "## Section", "### `CREATE`", "#### h ##", "#", "####### seven", "#5 no",
        "", "   ", "\t", "- **File Path:** [a](/a)", "- item", "  - nested", "    - deeper",
        "   - odd", "      - six", "- ", "-", "* star", "+ plus", "1. one", "2) two",
        "text line", "more *text*", "`FIND:`", "``a``", "~~b", "```", "````", "```python",
        "```x`y", "~~~", "~~~~ info", "  ```", "    code", "> quote", ">", "<div>", "</div>",
        "<!-- c -->", "---", "===", "- - -", "***", "___", "[ref]: /x", "[a](/b) text",
        "  continuation", "\tx", "- # h", "- > q", "- 1. x", "- ```", "a\\", "|a|b|",
    ]
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(LINES, max_size=25), st.booleans(), st.sampled_from(["\n", "\r\n"]))
@example(["<div>", "```", "x", "", "```", "y", "```"], True, "\n")
@example(["- a", "```", "b", "```", "  ```"], False, "\n")
@example(["x", "```", "", "```", "~~~~", "~~~", "~~~~~", "z"], False, "\n")
def test_same_tree_as_markdown_it(lines: list[str], final_newline: bool, eol: str) -> None:
    text = eol.join(lines) + (eol if final_newline else "")
    assert parse_document(text).blocks == markdown_it_blocks(text)


REGION_LINES = st.one_of(
    LINES,
    st.sampled_from(
        ["<script>", "</script>", "<!--", "-->", "<?x", "?>", "  <div>", "> ```", "- <div>",
         "`````", "  ~~~", "   ````"]
    ),
)  # fmt: skip
HEADINGS = st.sampled_from(["# T", "## S", "### `EDIT`", "#### x"])


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.tuples(HEADINGS, st.lists(REGION_LINES, max_size=6)), min_size=1, max_size=6),
    st.booleans(),
)
@example([("# T", ["<div>"]), ("## S", ["````", "x", "````"])], True)
@example([("# T", ["  ```"]), ("## S", ["````", "x", "````", "```"])], False)
@example([("# T", ["- a", "  ```"]), ("## S", ["x"])], True)
@example([("## S", ["- # h", ">", "> ```", ">", ">"])], False)
def test_regions_read_alone_or_the_rest_whole_as_markdown_it(
    regions: list[tuple[str, list[str]]], final_newline: bool
) -> None:
    """Regions between headings, some holding blocks that may run on into the next."""
    text = "\n".join(line for head, body in regions for line in (head, *body))
    text += "\n" if final_newline else ""
    assert parse_document(text).blocks == markdown_it_blocks(text)


SIMPLE_LINES = st.sampled_from(
    ["# Title", "## Section", "### `EDIT`", "", "- **File Path:** [a](/a)", "- item",
     "  - nested", "text line", "`FIND:`", "````", "````python", "x", "````"]
)  # fmt: skip
OPENERS = st.sampled_from(["```", "````", "`````text", "~~~", "~~~~ info", "```python"])
TAIL_LINES = st.one_of(LINES, st.sampled_from(["  ", " \t", "``", "````` ", "   ~~~", "x ```"]))


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(SIMPLE_LINES, max_size=20),
    OPENERS,
    st.lists(TAIL_LINES, max_size=12),
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
)
@example(["# T", "```", "a", "```"], "`````", ["", "  "], False, "\n")
@example(["# T"], "````", ["x", "```", "", ""], True, "\n")
@example(["- a"], "```", [], False, "\n")
@example(["<div>"], "```", ["# h", "- b"], True, "\n")
def test_an_unclosed_fence_after_simple_regions_reads_as_markdown_it(
    head: list[str], opener: str, tail: list[str], final_newline: bool, eol: str
) -> None:
    """Simple regions, then a fence that may never close: whatever follows it."""
    text = eol.join([*head, opener, *tail]) + (eol if final_newline else "")
    assert parse_document(text).blocks == markdown_it_blocks(text)


def test_an_unclosed_fence_keeps_the_text_before_it_on_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "# T\n- **K:** v\n\n## S\n````\nx\n````\ntext\n\n`````text\n# not a heading\n````\n\n"
    expected = markdown_it_blocks(text)
    from markdown_it import MarkdownIt

    def forbidden(self: MarkdownIt, text: str, env: object = None) -> None:
        raise AssertionError("markdown-it-py was used")

    monkeypatch.setattr(MarkdownIt, "parse", forbidden)
    doc = parse_document(text)
    assert doc.blocks == expected
    fence = doc.blocks[-1]
    assert isinstance(fence, Fence)
    assert (fence.start, fence.end, fence.closed) == (10, 13, False)
    assert fence.content == "# not a heading\n````\n"


def test_line_spans_are_one_based_and_inclusive() -> None:
    text = "# T\n\n- a\n- b\n  - c\n\npara\nmore\n\n```py\nx\n\ny\n```\n"
    blocks = parse_document(text).blocks
    heading, lst, para, fence = blocks
    assert isinstance(heading, Heading) and (heading.start, heading.end) == (1, 1)
    assert isinstance(lst, ListBlock) and (lst.start, lst.end) == (3, 5)
    assert [(i.start, i.end) for i in lst.items] == [(3, 3), (4, 5)]
    assert isinstance(para, Paragraph) and (para.start, para.end, para.text) == (7, 8, "para\nmore")
    assert isinstance(fence, Fence) and (fence.start, fence.end) == (10, 14)
    assert (fence.char, fence.length, fence.info, fence.content, fence.closed) == (
        "`", 3, "py", "x\n\ny", True,
    )  # fmt: skip


def test_unclosed_fence_runs_to_the_end() -> None:
    (fence,) = parse_document("~~~~\na\n~~~\n").blocks
    assert isinstance(fence, Fence)
    assert (fence.closed, fence.content, fence.start, fence.end) == (False, "a\n~~~", 1, 3)


def test_document_lines_slice_the_source() -> None:
    doc = parse_document("a\r\nb\nc")
    assert doc.source == "a\nb\nc"
    assert doc.lines(2, 3) == "b\nc"
    assert doc.line(1) == "a"
    assert doc.line_count == 3


def test_walk_visits_nested_blocks() -> None:
    doc = parse_document("- a\n  > q\n  ```\n  code\n  ```\n")
    kinds = [type(b).__name__ for b in walk(doc.blocks)]
    assert kinds == ["ListBlock", "Paragraph", "OtherBlock", "Paragraph", "Fence"]
    quote = next(b for b in walk(doc.blocks) if isinstance(b, OtherBlock))
    assert quote.kind == "blockquote"


def test_simple_documents_do_not_need_markdown_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_it import MarkdownIt

    def forbidden(self: MarkdownIt, text: str, env: object = None) -> None:
        raise AssertionError("markdown-it-py was used")

    monkeypatch.setattr(MarkdownIt, "parse", forbidden)
    doc = parse_document("# T\n- **K:** v\n\n## S\n```\nx\n```\ntext\n")
    assert [type(b).__name__ for b in doc.blocks] == [
        "Heading", "ListBlock", "Heading", "Fence", "Paragraph",
    ]  # fmt: skip
    with pytest.raises(AssertionError, match="markdown-it-py was used"):
        parse_document("> a quote needs markdown-it-py\n")
