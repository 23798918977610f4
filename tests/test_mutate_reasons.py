"""tools/mutate.py carries a survivor's reason by what the mutant changes, not by its
number: an edit elsewhere in a function renumbers its mutants, and a reason kept by
name would land on another mutant."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("mutate", ROOT / "tools" / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutate", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# as `mutmut show` prints them: a header, the file, a hunk with its line numbers
STRIP_X = """\
# plankit.shapes.x__bare__mutmut_17: survived
--- src/plankit/shapes.py
+++ src/plankit/shapes.py
@@ -2,4 +2,4 @@
     text = text.replace("*", "").strip()
-    return text.rstrip(":").strip()
+    return text.rstrip("XX:XX").strip()
"""
STRIP_X_MOVED = STRIP_X.replace("@@ -2,4 +2,4 @@", "@@ -3,5 +3,5 @@").replace(
    '    text = text.replace("*", "").strip()', '    text = text.replace("`", "").strip()'
)
NONE_FOR_FALSE = """\
# plankit.shapes.x__bare__mutmut_3: survived
--- src/plankit/shapes.py
+++ src/plankit/shapes.py
@@ -2,4 +2,4 @@
-    seen = False
+    seen = None
"""


def test_a_fingerprint_is_the_function_and_the_lines_changed() -> None:
    tool = _tool()
    first = tool.fingerprint("x__bare__mutmut_17", STRIP_X)
    assert tool.fingerprint("x__bare__mutmut_21", STRIP_X_MOVED) == first  # renumbered
    assert tool.fingerprint("x__other__mutmut_17", STRIP_X) != first  # another function
    assert tool.fingerprint("x__bare__mutmut_3", NONE_FOR_FALSE) != first


def _record(*reasons: tuple[str, str, str, str]) -> dict:
    """A record whose survivors are ``(name, fingerprint, kind, reason)``, one reason each."""
    return {
        "fingerprints": {name: value for name, value, _, _ in reasons},
        "why": [{"mutants": [name], "kind": k, "reason": r} for name, _, k, r in reasons],
    }


def test_a_reason_follows_its_change_to_the_mutant_that_now_makes_it() -> None:
    tool = _tool()
    strip, none = (
        tool.fingerprint("x__bare__mutmut_17", STRIP_X),
        tool.fingerprint("x__bare__mutmut_3", NONE_FOR_FALSE),
    )
    old = _record(
        ("x__bare__mutmut_17", strip, "not killed", "X stripped"),
        ("x__bare__mutmut_3", none, "equivalent", "None or"),
    )
    # an edit above renumbered them: 17 is now 21, and 3 is now 17
    kept, said = tool.carried(old, {"x__bare__mutmut_21": strip, "x__bare__mutmut_17": none})
    assert kept == [
        {"mutants": ["x__bare__mutmut_21"], "kind": "not killed", "reason": "X stripped"},
        {"mutants": ["x__bare__mutmut_17"], "kind": "equivalent", "reason": "None or"},
    ]
    assert said == [
        "reason moved: x__bare__mutmut_17 -> x__bare__mutmut_21 (the same change)",
        "reason moved: x__bare__mutmut_3 -> x__bare__mutmut_17 (the same change)",
    ]


def test_a_reason_whose_change_is_gone_is_dropped_and_said() -> None:
    tool = _tool()
    old = {
        "fingerprints": {"x__bare__mutmut_17": tool.fingerprint("x__bare__mutmut_17", STRIP_X)},
        "why": [{"mutants": ["x__bare__mutmut_17"], "kind": "not killed", "reason": "X"}],
    }
    changed = tool.fingerprint("x__bare__mutmut_17", NONE_FOR_FALSE)
    kept, said = tool.carried(old, {"x__bare__mutmut_17": changed})
    assert kept == []
    assert said == ["reason dropped: x__bare__mutmut_17 changes something else now; re-read it"]
    assert tool.carried(old, {}) == ([], [])  # killed now: nothing to say


def test_a_record_without_fingerprints_keeps_reasons_by_name() -> None:
    tool = _tool()
    old = {"why": [{"mutants": ["x_a__mutmut_1", "x_a__mutmut_2"], "kind": "equivalent"}]}
    kept, said = tool.carried(old, {"x_a__mutmut_2": "f"})
    assert kept == [{"mutants": ["x_a__mutmut_2"], "kind": "equivalent"}] and said == []


def test_two_mutants_making_one_change_keep_their_own_reasons() -> None:
    # `return None` for `return False` on two lines of one function: one fingerprint
    tool = _tool()
    same = tool.fingerprint("x_a__mutmut_2", NONE_FOR_FALSE)
    old = _record(
        ("x_a__mutmut_2", same, "equivalent", "A"), ("x_a__mutmut_9", same, "not killed", "B")
    )
    kept, said = tool.carried(old, {"x_a__mutmut_2": same, "x_a__mutmut_9": same})
    assert kept == old["why"] and said == []
    # a test kills the first: its reason goes, and the second keeps its own
    kept, said = tool.carried(old, {"x_a__mutmut_9": same})
    assert kept == [old["why"][1]] and said == []
    # both renumbered by an edit above them: in order, one reason each
    kept, said = tool.carried(old, {"x_a__mutmut_4": same, "x_a__mutmut_11": same})
    assert [e["mutants"] for e in kept] == [["x_a__mutmut_4"], ["x_a__mutmut_11"]]
    assert len(said) == 2
