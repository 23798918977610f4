"""The dynamic fencing rule, links, and the repair of double-encoded text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plankit.markdown.encoding import repair_double_encoding
from plankit.markdown.fences import fence_for, fenced, longest_run
from plankit.markdown.links import Link, find_links, is_url, root_link, root_path
from plankit.markdown.tree import Fence, parse_document


@pytest.mark.parametrize(
    ("content", "char", "fence"),
    [
        ("", "`", "```"),
        ("plain", "`", "```"),
        ("a `` b", "`", "```"),
        ("```", "`", "````"),
        ("x ````` y\n```", "`", "``````"),
        ("~~~~", "~", "~~~~~"),
        ("```` only backticks", "~", "~~~"),
    ],
)
def test_fence_for(content: str, char: str, fence: str) -> None:
    assert fence_for(content, char) == fence


def test_fence_for_rejects_other_characters() -> None:
    with pytest.raises(ValueError, match="made of"):
        fence_for("x", "*")


@given(st.text(alphabet="`~ \nab#>-", max_size=80), st.sampled_from(["`", "~"]))
def test_fenced_content_always_parses_back(content: str, char: str) -> None:
    (block,) = parse_document(fenced(content, "", char) + "\n").blocks
    assert isinstance(block, Fence)
    assert block.content == content
    assert block.length == max(3, longest_run(content, char) + 1)


def test_find_links_uses_the_destination() -> None:
    assert find_links("**File Path:** [src/__init__.py](/src/__init__.py)") == (
        Link("src/__init__.py", "/src/__init__.py"),
    )
    # emphasis-mangled text goes through the inline parser; the destination survives
    (link,) = find_links("[src/**init**.py](/src/__init__.py) `code`")
    assert link.destination == "/src/__init__.py"
    assert find_links("[a](</my file.md>) and [b](/b%20c.md)") == (
        Link("a", "/my file.md"),
        Link("b", "/b c.md"),
    )
    assert find_links("no links [here] or here") == ()


def test_root_links_round_trip() -> None:
    for path in ("docs/a.md", "my dir/a_b (1).md", "weird[1]/x*y.md", "/already/slashed"):
        (link,) = find_links(root_link(path))
        assert root_path(link.destination) == root_path(path)
    assert root_link("docs/a.md") == "[docs/a.md](/docs/a.md)"
    assert is_url("https://x") and is_url("mailto:a@b") and not is_url("/docs/a.md")


@pytest.mark.parametrize(
    ("damaged", "repaired"),
    [
        ("Green ðŸŸ¢", "Green 🟢"),
        ("done âœ…", "done ✅"),
        ("a â€” b", "a — b"),
        ("cafÃ©", "café"),
        ("â€œquotedâ€\x9d", "“quoted”"),
        ("plain ascii", "plain ascii"),
        ("real 🟢 ✅ — é stay", "real 🟢 ✅ — é stay"),
        ("Ã alone", "Ã alone"),
    ],
)
def test_repair_double_encoding(damaged: str, repaired: str) -> None:
    assert repair_double_encoding(damaged) == repaired


@given(st.text())
def test_repair_is_identity_on_text_that_was_never_damaged(text: str) -> None:
    # text made only of characters outside Latin-1's upper half cannot look damaged
    clean = "".join(c for c in text if not "\u0080" <= c <= "\u00ff")
    assert repair_double_encoding(clean) == clean


@given(st.text())
def test_repair_undoes_the_damage(text: str) -> None:
    damaged = text.encode("utf-8").decode("cp1252", errors="ignore")
    try:
        original = damaged.encode("cp1252").decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return
    if any("\u0080" <= c <= "\u00ff" for c in original):
        return  # Latin-1 text can itself look damaged; only clear cases are checked
    assert repair_double_encoding(damaged) == original
