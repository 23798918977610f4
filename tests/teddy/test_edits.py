"""EDIT's FIND/REPLACE pairs applied to a file's text (``plankit.teddy.run.edits``).

What a user sees: the text that results, the notes on loose matches, and when a FIND
cannot be applied, the code and the message (with the lines it names) and the diff
against the closest region.
"""

from __future__ import annotations

import pytest

from plankit.teddy.format.model import EditPair
from plankit.teddy.run.edits import (
    EditFailed,
    Match,
    apply_pairs,
    edit_file_text,
    find_match,
    unified_diff,
)


def _failure(text: str, find: str, replace: str = "REPLACED") -> EditFailed:
    with pytest.raises(EditFailed) as caught:
        find_match(text, find, replace)
    return caught.value


def _apply(text: str, *pairs: tuple[str, str]) -> tuple[str, list[str]]:
    return apply_pairs(text, [EditPair(f, r) for f, r in pairs])


# --- an empty FIND ------------------------------------------------------------------------


@pytest.mark.parametrize("find", ["", " ", "\n", "  \n\t\n"])
def test_an_empty_find_is_refused_as_empty_not_as_ambiguous(find: str) -> None:
    failure = _failure("a = 1\n\nb = 2\n", find)
    assert (failure.code, failure.message, failure.detail) == (
        "find-empty",
        "the FIND block is empty",
        "",
    )


def test_edit_failed_defaults_to_find_no_match_and_str_is_the_message() -> None:
    failure = EditFailed("it went wrong")
    assert (str(failure), failure.message, failure.detail, failure.code) == (
        "it went wrong",
        "it went wrong",
        "",
        "find-no-match",
    )


# --- exact matches ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "find", "start", "end"),
    [
        ("a = 1\nb = 2\n", "b = 2", 6, 11),
        ("a = 1\nb = 2\n", "a = 1\nb", 0, 7),
        ("x = call(a, b)\n", "a, b", 9, 13),  # inside a line
        ("only", "only", 0, 4),
    ],
)
def test_an_exact_match_is_where_the_find_text_is(
    text: str, find: str, start: int, end: int
) -> None:
    assert find_match(text, find, "new") == Match(start, end, "new", "exact")


@pytest.mark.parametrize(
    ("text", "find", "count", "lines"),
    [
        ("x\ny\nx\n", "x", 2, "1, 3"),
        ("pass\n\n\npass\npass\n", "pass", 3, "1, 4, 5"),
        # a FIND twice on one line: both occurrences are on line 2
        ("head\nf(a) + f(a)\n", "f(a)", 2, "2, 2"),
    ],
)
def test_a_find_matching_several_times_is_refused_naming_the_lines(
    text: str, find: str, count: int, lines: str
) -> None:
    failure = _failure(text, find)
    assert failure.code == "find-ambiguous"
    assert failure.message == (
        f"the FIND block matches {count} times (at lines {lines}); "
        "include more surrounding lines so that it matches once"
    )


def test_every_line_of_an_ambiguous_find_is_named() -> None:
    text = "".join(f"line {n}\nhit\n" for n in range(1, 8))
    failure = _failure(text, "hit")
    assert failure.message.startswith(
        "the FIND block matches 7 times (at lines 2, 4, 6, 8, 10, 12, 14); "
    )


def test_overlapping_occurrences_make_a_find_ambiguous() -> None:
    # "}\n}" is at line 1 and at line 2 of "}\n}\n}": the edit cannot know which is meant
    failure = _failure("}\n}\n}\n", "}\n}")
    assert failure.code == "find-ambiguous"
    assert "matches 2 times (at lines 1, 2)" in failure.message


def test_an_exact_match_is_preferred_to_a_loose_one_elsewhere() -> None:
    # lines 1-2 match only loosely (trailing spaces), lines 4-5 exactly
    text = "a = 1   \nb = 2\n\na = 1\nb = 2\n"
    assert find_match(text, "a = 1\nb = 2", "c = 3") == Match(16, 27, "c = 3", "exact")
    assert _apply(text, ("a = 1\nb = 2", "c = 3")) == ("a = 1   \nb = 2\n\nc = 3\n", [])


# --- loose matches: trailing whitespace ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "find", "expected"),
    [
        # the file has trailing spaces the FIND lacks
        ("start\nif x:   \n    go()\nend\n", "if x:\n    go()", "start\nNEW\nend\n"),
        # the FIND has trailing spaces the file lacks
        ("start\nif x:\n    go()\nend\n", "if x:  \n    go()\t", "start\nNEW\nend\n"),
        # trailing whitespace on the file's last matched line goes with the match
        ("start\nif x:\t\n    go()  \nend\n", "if x:\n    go()", "start\nNEW\nend\n"),
    ],
)
def test_a_match_differing_only_in_trailing_whitespace_is_accepted_with_a_note(
    text: str, find: str, expected: str
) -> None:
    match = find_match(text, find, "NEW")
    assert (match.how, match.replacement) == ("trailing whitespace", "NEW")
    assert _apply(text, (find, "NEW")) == (
        expected,
        ["pair 1 matched at line 2 ignoring differences in trailing whitespace"],
    )


def test_a_loose_match_covers_whole_lines_from_the_start_of_the_first() -> None:
    text = "a\nbb  \ncc\nd\n"
    assert find_match(text, "bb\ncc", "X") == Match(2, 9, "X", "trailing whitespace")


def test_a_loose_match_at_the_last_line_of_a_file_without_final_newline() -> None:
    assert _apply("x\na  \nb  ", ("a\nb", "c")) == (
        "x\nc",
        ["pair 1 matched at line 2 ignoring differences in trailing whitespace"],
    )


def test_a_find_that_matches_loosely_in_two_places_is_refused_naming_every_line() -> None:
    text = "x = 1  \ny = 2\n\nx = 1\t\ny = 2 \n\nx = 1 \ny = 2\n"
    failure = _failure(text, "x = 1\ny = 2")
    assert failure.code == "find-ambiguous"
    assert failure.message == (
        "the FIND block matches nowhere exactly and loosely 3 times (at lines 1, 4, 7); "
        "copy the text exactly from the file"
    )


def test_an_ambiguous_loose_match_leaves_the_text_alone() -> None:
    text = "a  \nb\na \nb\n"
    with pytest.raises(EditFailed, match="loosely 2 times"):
        _apply(text, ("a\nb", "z"))


def test_loose_matches_name_every_line() -> None:
    text = "".join(f"v = 0{' ' * n}\nw\n" for n in range(1, 8))
    failure = _failure(text, "v = 0\nw")
    assert "loosely 7 times (at lines 1, 3, 5, 7, 9, 11, 13); " in failure.message


# --- loose matches: indentation -----------------------------------------------------------


def test_an_indentation_shifted_match_re_indents_the_replacement() -> None:
    text = "class A:\n    def f(self):\n        return 1\n"
    find = "def f(self):\n    return 1"
    replace = "def f(self):\n    x = 2\n    return x"
    match = find_match(text, find, replace)
    assert match == Match(
        9,
        len(text) - 1,
        "    def f(self):\n        x = 2\n        return x",
        "indentation",
    )
    assert _apply(text, (find, replace)) == (
        "class A:\n    def f(self):\n        x = 2\n        return x\n",
        ["pair 1 matched at line 2 ignoring differences in indentation"],
    )


def test_a_find_indented_more_than_the_file_is_shifted_back() -> None:
    text = "if a:\n  b()\nc()\n"
    find = "        if a:\n          b()"
    replace = "        if a:\n          d()\n    e()"
    # "    e()" is indented less than the FIND's first line: it is left as it is
    assert _apply(text, (find, replace)) == (
        "if a:\n  d()\n    e()\nc()\n",
        ["pair 1 matched at line 1 ignoring differences in indentation"],
    )


def test_a_find_without_indentation_matches_a_tab_indented_file() -> None:
    text = "def f():\n\tif x:\n\t\ty()\n"
    find = "if x:\n\ty()"
    assert _apply(text, (find, "if z:\n\ty()")) == (
        "def f():\n\tif z:\n\t\ty()\n",
        ["pair 1 matched at line 2 ignoring differences in indentation"],
    )


def test_blank_lines_inside_an_indented_find_match_blank_lines_and_stay_blank() -> None:
    text = "def f():\n    a = 1\n\n    b = 2\n"
    find = "a = 1\n\nb = 2"
    replace = "a = 1\n\n\nb = 3"
    assert _apply(text, (find, replace)) == (
        "def f():\n    a = 1\n\n\n    b = 3\n",
        ["pair 1 matched at line 2 ignoring differences in indentation"],
    )


def test_a_leading_blank_find_line_takes_the_indentation_from_the_first_text_line() -> None:
    text = "top\n\n    x = 1\n    y = 2\n"
    assert find_match(text, "\nx = 1\ny = 2", "\nz = 3") == Match(
        4, len(text) - 1, "\n    z = 3", "indentation"
    )


def test_an_indented_find_needs_a_blank_file_line_where_it_has_a_blank_line() -> None:
    text = "def f():\n    a = 1\n    c = 0\n    b = 2\n"
    failure = _failure(text, "a = 1\n\nb = 2")
    assert failure.code == "find-no-match"


@pytest.mark.parametrize(
    "text",
    [
        # the second line is not indented relative to the first in the file
        "def f():\n    if x:\n    y()\n",
        # it is indented by 2 more, not by 4
        "def f():\n    if x:\n      y()\n",
        # a blank file line where the FIND has text
        "def f():\n    if x:\n\n",
    ],
)
def test_a_shift_must_be_the_same_for_every_line(text: str) -> None:
    assert _failure(text, "if x:\n        y()").code == "find-no-match"


def test_a_find_whose_line_is_indented_less_than_its_first_does_not_shift() -> None:
    # the FIND's second line does not start with the first line's indentation
    text = "        a\n      b\n"
    assert _failure(text, "    a\n  b").code == "find-no-match"


def test_a_shift_compares_the_rest_of_each_line_exactly() -> None:
    text = "    alpha(1)\n    beta(2)\n"
    assert _failure(text, "alpha(1)\nbeta(3)").code == "find-no-match"


def test_an_indentation_match_ignores_trailing_whitespace_too() -> None:
    text = "    a = 1   \n    b = 2\n"
    match = find_match(text, "a = 1\nb = 2  ", "c = 3")
    assert match == Match(0, len(text) - 1, "    c = 3", "indentation")


def test_two_indentation_matches_are_ambiguous() -> None:
    text = "def f():\n    x()\n    y()\n\ndef g():\n        x()\n        y()\n"
    failure = _failure(text, "x()\ny()")
    assert failure.code == "find-ambiguous"
    assert "loosely 2 times (at lines 2, 6)" in failure.message


# --- nothing matches: the closest region --------------------------------------------------


def test_a_find_unrelated_to_the_file_says_nothing_is_close() -> None:
    failure = _failure("one\ntwo\nthree\n", "zzzz qqqq")
    assert (failure.code, failure.message, failure.detail) == (
        "find-no-match",
        "the FIND block matches nowhere in the file (nothing is close)",
        "",
    )


def test_a_near_find_names_the_closest_region_its_similarity_and_a_diff() -> None:
    text = "alpha\nbeta\ngamma\ndelta\n"
    failure = _failure(text, "beta\ngamma2")
    assert failure.code == "find-no-match"
    assert failure.message == (
        "the FIND block matches nowhere; the closest region is lines 2-3 (95% similar)"
    )
    assert failure.detail == (
        "--- file, lines 2-3\n+++ FIND\n@@ -1,2 +1,2 @@\n beta\n-gamma\n+gamma2"
    )


def test_the_closest_region_is_the_most_similar_window_not_the_first() -> None:
    text = "def a():\n    return 10\n\ndef b():\n    return 20\n"
    failure = _failure(text, "def b():\n    return 21")
    assert "closest region is lines 4-5 (" in failure.message
    assert failure.detail.startswith("--- file, lines 4-5\n+++ FIND\n")


def test_the_first_of_equally_close_regions_is_named() -> None:
    failure = _failure("abcd\nabcd\n", "abce")
    assert "closest region is lines 1-1 (75% similar)" in failure.message


def test_a_region_exactly_thirty_percent_similar_is_still_shown() -> None:
    # 3 characters of 10 + 10 in common: similarity 2*3/20 = 0.3, the threshold
    failure = _failure("abcXXXXXXX", "abcYYYYYYY")
    assert failure.message == (
        "the FIND block matches nowhere; the closest region is lines 1-1 (30% similar)"
    )
    assert failure.detail == (
        "--- file, lines 1-1\n+++ FIND\n@@ -1 +1 @@\n-abcXXXXXXX\n+abcYYYYYYY"
    )


def test_a_region_just_under_thirty_percent_is_not_close() -> None:
    # 3 of 11 + 10 in common: 6/21 < 0.3
    failure = _failure("abcXXXXXXXX", "abcYYYYYYY")
    assert failure.message.endswith("(nothing is close)")


def test_a_find_longer_than_the_file_is_compared_with_the_whole_file() -> None:
    failure = _failure("x\nabc", "abc\nd\ne")
    assert failure.message == (
        "the FIND block matches nowhere; the closest region is lines 1-2 (50% similar)"
    )
    assert failure.detail == ("--- file, lines 1-2\n+++ FIND\n@@ -1,2 +1,3 @@\n-x\n abc\n+d\n+e")


def test_a_find_in_an_empty_file_matches_nowhere() -> None:
    assert _failure("", "something").message.endswith("(nothing is close)")


# --- pairs --------------------------------------------------------------------------------


def test_a_replace_equal_to_its_find_is_refused() -> None:
    with pytest.raises(EditFailed) as caught:
        _apply("a\nb\n", ("a", "z"), ("b", "b"))
    assert (caught.value.code, caught.value.message) == (
        "replace-unchanged",
        "pair 2: the REPLACE block is the same as the FIND block",
    )


def test_a_replace_equal_to_a_find_that_is_not_in_the_file_is_still_unchanged() -> None:
    with pytest.raises(EditFailed) as caught:
        _apply("a\n", ("missing", "missing"))
    assert caught.value.code == "replace-unchanged"
    assert caught.value.message.startswith("pair 1: ")


def test_pairs_apply_in_order_each_seeing_the_text_the_earlier_left() -> None:
    text = "name = 'old'\nprint(name)\n"
    # pair 2 finds what pair 1 wrote; pair 3 finds what pair 2 wrote
    assert _apply(
        text,
        ("'old'", "'new'"),
        ("name = 'new'", "title = 'new'"),
        ("title = 'new'\nprint(name)", "title = 'new'\nprint(title)"),
    ) == ("title = 'new'\nprint(title)\n", [])


def test_a_pair_cannot_find_what_an_earlier_pair_replaced() -> None:
    with pytest.raises(EditFailed) as caught:
        _apply("alpha = 1\nbeta = 2\n", ("alpha = 1", "gamma = 1"), ("alpha = 1", "x"))
    assert caught.value.code == "find-no-match"
    assert caught.value.message.startswith("pair 2: the FIND block matches nowhere; ")
    assert "-gamma = 1\n+alpha = 1" in caught.value.detail


def test_a_failing_pair_keeps_its_code_and_detail_behind_its_number() -> None:
    with pytest.raises(EditFailed) as caught:
        _apply("a\nb\na\n", ("b", "c"), ("a", "z"))
    assert (caught.value.code, caught.value.detail) == ("find-ambiguous", "")
    assert caught.value.message.startswith("pair 2: the FIND block matches 2 times")


def test_notes_name_each_loose_pair_and_the_line_in_the_text_it_was_applied_to() -> None:
    text = "a\nb  \nc\n    d\n    e\n"
    new, notes = _apply(text, ("a", "A"), ("b\nc", "B\nB2\nc"), ("d\ne", "D"))
    assert new == "A\nB\nB2\nc\n    D\n"
    assert notes == [
        "pair 2 matched at line 2 ignoring differences in trailing whitespace",
        "pair 3 matched at line 5 ignoring differences in indentation",
    ]


def test_no_pairs_leave_the_text_as_it_is() -> None:
    assert _apply("a\n") == ("a\n", [])


# --- whole files: line endings ------------------------------------------------------------


def test_a_crlf_file_keeps_its_line_endings_and_says_so() -> None:
    result = edit_file_text("a\r\nb\r\nc\r\n", [EditPair("a\nb", "x\ny")])
    assert (result.before, result.after, result.output) == (
        "a\nb\nc\n",
        "x\ny\nc\n",
        "x\r\ny\r\nc\r\n",
    )
    assert result.notes == ("the file's CRLF line endings were kept",)


def test_the_crlf_note_comes_before_the_notes_on_loose_matches() -> None:
    result = edit_file_text("a  \r\nb\r\n", [EditPair("a\nb", "z\nb")])
    assert result.output == "z\r\nb\r\n"
    assert result.notes == (
        "the file's CRLF line endings were kept",
        "pair 1 matched at line 1 ignoring differences in trailing whitespace",
    )


def test_an_lf_file_stays_lf() -> None:
    result = edit_file_text("a\nb\n", [EditPair("a", "z")])
    assert (result.before, result.after, result.output, result.notes) == (
        "a\nb\n",
        "z\nb\n",
        "z\nb\n",
        (),
    )


def test_a_file_with_mixed_line_endings_is_left_with_them() -> None:
    result = edit_file_text("a\r\nb\nc\r\n", [EditPair("c", "z")])
    assert (result.before, result.output, result.notes) == ("a\r\nb\nc\r\n", "a\r\nb\nz\r\n", ())


def test_the_final_newline_of_a_crlf_file_is_kept_or_left_out_as_it_was() -> None:
    assert edit_file_text("a\r\nb", [EditPair("b", "c")]).output == "a\r\nc"


def test_edit_file_text_reports_a_failing_pair() -> None:
    with pytest.raises(EditFailed, match=r"^pair 1: the FIND block is empty$"):
        edit_file_text("a\r\n", [EditPair("", "x")])


# --- the report's diff --------------------------------------------------------------------


def test_unified_diff_names_the_file_and_shows_changed_lines() -> None:
    assert unified_diff("src/a.py", "a\nb\nc\n", "a\nB\nc\n") == (
        "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    )


def test_unified_diff_of_identical_texts_is_empty() -> None:
    assert unified_diff("a.py", "x\n", "x\n") == ""


# --- edges that mutation testing showed no test was holding -------------------------------


def test_a_long_find_of_repeated_words_still_finds_its_close_region() -> None:
    # past 200 characters difflib would treat frequent characters as junk unless told not
    # to, and such a FIND would seem unrelated to the line it nearly matches
    failure = _failure("head\n" + "abc " * 60 + "\ntail\n", "abd " * 60)
    assert "the closest region is lines 2-2 (75% similar)" in failure.message


def test_the_closest_region_never_runs_past_the_end_of_the_file() -> None:
    # the last line alone ("abc") is more similar to the FIND than lines 1-2, but a
    # region has as many lines as the FIND
    failure = _failure("zzz\nabc", "abc\nq")
    assert "closest region is lines 1-2 (50% similar)" in failure.message


def test_of_two_regions_as_similar_the_first_is_named_even_when_jumbled_later() -> None:
    # both lines are 50% similar; the second shares more characters out of order
    failure = _failure("abcxyz\nfabcxy", "abcdef")
    assert "closest region is lines 1-1 (50% similar)" in failure.message


def test_line_numbers_count_a_leading_empty_line() -> None:
    assert "(at lines 2, 3)" in _failure("\nx\nx\n", "x").message
    assert _apply("\na\nb  \nc\n", ("b\nc", "z")) == (
        "\na\nz\n",
        ["pair 1 matched at line 3 ignoring differences in trailing whitespace"],
    )


def test_occurrences_one_character_apart_are_both_counted() -> None:
    assert "matches 2 times (at lines 1, 1)" in _failure("a ---- b", "---").message


def test_lines_after_a_blank_find_line_must_match_too() -> None:
    text = "def f():\n    a = 1\n\n    c = 9\n"
    assert _failure(text, "a = 1\n\nb = 2").message == (
        "the FIND block matches nowhere; the closest region is lines 2-4 (62% similar)"
    )
