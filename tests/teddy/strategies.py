"""Hypothesis strategies that build valid TeDDy plans (shared by the property tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from plankit.markdown.fences import fenced
from plankit.teddy.format.model import (
    Action,
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    EditPair,
    Execute,
    Invoke,
    Memo,
    Plan,
    Prune,
    Read,
    Research,
    Resource,
)
from plankit.teddy.format.parse import RATIONALE_SECTIONS

# Inline text that stays one paragraph line: it starts with a letter and never opens a
# block (no leading '-', '#', '>', digits + '.', …) or a comment (' #').
words = st.from_regex(
    r"[A-Za-z][A-Za-z0-9 ,.;:!?'()/é🟢_`-]{0,30}[A-Za-z0-9.!?)🟢]", fullmatch=True
)
text_line = words.filter(lambda s: " #" not in s and "  " not in s and s.count("`") % 2 == 0)

# File content: any text, rich in backtick and tilde runs, fence-like lines, unusual
# line separators and Markdown syntax.  Never \r or NUL (Markdown normalises them).
content_alphabet = st.sampled_from(
    ["`", "``", "```", "````", "~", "~~~", "~~~~", "\n", " ", "    ", "\t", "a", "Z", "0", "#",
     "-", "*", ">", "[", "]", "(", ")", "/", "é", "🟢", "\x0b", "\u2028", "\x85", "FIND:",
     "### `CREATE`", "## Action Plan", "<div>", "|"]
)  # fmt: skip
content = st.lists(content_alphabet, max_size=40).map("".join)

path = st.from_regex(r"[a-z][a-z0-9_]{0,6}(/[a-z0-9_][a-z0-9_.-]{0,6}){0,3}", fullmatch=True)
spaced_path = st.one_of(path, path.map(lambda p: p + "/my file (1).md"))
url = st.from_regex(r"https://example\.com/[a-z0-9/]{0,10}", fullmatch=True)
resource = st.one_of(
    spaced_path.map(lambda p: Resource("file", p)), url.map(lambda u: Resource("url", u))
)
description = st.one_of(st.none(), text_line)
env_name = st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True)
env_value = st.one_of(st.just(""), text_line)


@st.composite
def message(draw: st.DrawFn) -> str:
    """Free Markdown: paragraphs, a list, a #### heading, a fenced block."""
    parts = [draw(text_line)]
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["para", "list", "heading", "fence"]))
        if kind == "para":
            parts.append(draw(text_line))
        elif kind == "list":
            parts.append("\n".join(f"* {w}" for w in draw(st.lists(text_line, min_size=1))))
        elif kind == "heading":
            parts.append(f"#### {draw(text_line)}")
        else:
            parts.append(fenced(draw(content), "text"))
    return "\n\n".join(parts)


@st.composite
def env(draw: st.DrawFn) -> tuple[tuple[str, str], ...]:
    names = draw(st.lists(env_name, max_size=3, unique=True))
    return tuple((n, draw(env_value)) for n in names)


def _query(text: str) -> str:
    return text.strip() or "q"


action: st.SearchStrategy[Action] = st.one_of(
    st.builds(Create, path=path, content=content, description=description),
    st.builds(Read, resource=resource, description=description),
    st.builds(Prune, resource=resource, description=description),
    st.builds(
        Edit,
        path=spaced_path,
        edits=st.lists(st.builds(EditPair, content, content), min_size=1, max_size=3).map(tuple),
        description=description,
    ),
    st.builds(
        Execute,
        command=content.map(lambda c: c if c.strip() else c + "ls"),
        expected_outcome=description,
        cwd=st.one_of(st.none(), path),
        env=env(),
        description=description,
    ),
    st.builds(
        Research,
        queries=st.lists(content.map(_query), min_size=1, max_size=3).map(tuple),
        description=description,
    ),
    st.builds(ChatWithUser, message=message()),
    st.builds(
        Invoke,
        agent=st.from_regex(r"[A-Z][a-z]{2,10}", fullmatch=True),
        handoff_resources=st.lists(st.one_of(path, url), max_size=3).map(tuple),
        message=st.one_of(st.just(""), message()),
        description=description,
    ),
    st.builds(
        Conclude,
        handoff_resources=st.lists(path, max_size=3).map(tuple),
        message=st.one_of(st.just(""), message()),
        description=description,
    ),
)

memo_text = text_line.filter(lambda s: not s.startswith("["))
memo = st.builds(Memo, st.sampled_from(["+", "-"]), memo_text, st.one_of(st.none(), text_line))


@st.composite
def rationale(draw: st.DrawFn) -> str:
    return "\n\n".join(
        f"### {i}. {name}\n{draw(content)}" for i, name in enumerate(RATIONALE_SECTIONS, 1)
    )


@st.composite
def metadata(draw: st.DrawFn) -> tuple[tuple[str, str], ...]:
    keys = draw(
        st.lists(
            st.from_regex(r"[A-Z][a-z]{1,8}( [A-Z][a-z]{1,8})?", fullmatch=True),
            max_size=4,
            unique_by=str.casefold,
        )
    )
    return tuple((k, draw(text_line)) for k in keys)


plans = st.builds(
    Plan,
    title=text_line,
    metadata=metadata(),
    rationale=rationale(),
    memos=st.lists(memo, max_size=3).map(tuple),
    actions=st.lists(action, min_size=1, max_size=6).map(tuple),
)
