"""Metadata keys with or without bold: the parser reads a list of them in any order.

docs/teddy-plan-format.md says keys are accepted with or without bold; a list whose
first item had a plain key was once read as stray content.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plankit.teddy.format.parse import check_plan
from tests.profiles import examples

HEAD = """# Add the version module

## Rationale
```text
### 1. Synthesis
The version is hard-coded.
### 2. Justification
One source of truth.
### 3. Expected Outcome
The module exists.
### 4. State Dashboard
- Version: in progress
```

## Action Plan

### `CREATE`
"""
BODY = """```python
VERSION = "1.2.0"
```
"""
PATH = "[src/app/version.py](/src/app/version.py)"
SPELLINGS = {
    "bold": "- **{key}:** {value}",
    "plain": "- {key}: {value}",
    "backticks": "- `{key}`: {value}",
}


def _plan(items: list[tuple[str, str, str]]) -> str:
    lines = [SPELLINGS[style].format(key=key, value=value) for key, value, style in items]
    return HEAD + "\n".join(lines) + "\n" + BODY


@settings(max_examples=examples(100), deadline=None)
@given(
    st.permutations(
        [("File Path", PATH, "bold"), ("Description", "The version, in one place.", "plain")]
    ),
    st.sampled_from(sorted(SPELLINGS)),
    st.sampled_from(sorted(SPELLINGS)),
)
def test_the_order_of_bold_and_plain_keys_does_not_matter(
    items: list[tuple[str, str, str]], first: str, second: str
) -> None:
    items = [(items[0][0], items[0][1], first), (items[1][0], items[1][1], second)]
    plan, diagnostics = check_plan(_plan(items))
    assert plan is not None, diagnostics
    (create,) = plan.actions
    assert create.path == "src/app/version.py"  # type: ignore[attr-defined]
    assert create.description == "The version, in one place."


def test_a_plain_first_key_opens_the_metadata_list() -> None:
    text = _plan([("File Path", PATH, "plain"), ("Description", "The version.", "bold")])
    plan, diagnostics = check_plan(text)
    assert plan is not None, diagnostics


def test_a_message_list_with_a_plain_word_before_a_colon_stays_the_message() -> None:
    text = HEAD.replace("### `CREATE`", "### `CONCLUDE`") + "- Note: the version moved.\n"
    plan, diagnostics = check_plan(text)
    assert plan is not None, diagnostics
    assert plan.actions[0].message == "- Note: the version moved."  # type: ignore[attr-defined]
