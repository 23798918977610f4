"""The mutation table in docs/testing.md is what docs/mutation/*.json say, and every
survivor in them has a reason."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location(
        "mutation_table", ROOT / "tools" / "mutation_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_in_docs_is_the_records():
    tool = _tool()
    text = (ROOT / "docs" / "testing.md").read_text("utf-8")
    assert tool.render(text, tool.load()) == text, "run python3 tools/mutation_table.py"


def _write(folder: Path, **fields) -> None:
    data = {
        "module": "plankit.sample",
        "tests": ["tests/test_sample.py"],
        "mutants": 10,
        "killed": 8,
        "survivors": ["f__mutmut_1", "f__mutmut_2"],
        "why": [],
    }
    data.update(fields)
    (folder / "plankit.sample.json").write_text(json.dumps(data), encoding="utf-8")


def test_a_survivor_without_a_reason_is_refused(tmp_path):
    tool = _tool()
    _write(tmp_path, why=[{"mutants": ["f__mutmut_1"], "kind": "equivalent", "reason": "same"}])
    with pytest.raises(tool.RecordError, match="no reason given for f__mutmut_2"):
        tool.load(tmp_path)


def test_figures_that_do_not_add_up_are_refused(tmp_path):
    tool = _tool()
    _write(tmp_path, killed=9)
    with pytest.raises(tool.RecordError, match="number of survivors"):
        tool.load(tmp_path)


def test_a_record_renders_its_rate_and_reasons(tmp_path):
    tool = _tool()
    why = [
        {"mutants": ["f__mutmut_1"], "kind": "equivalent", "reason": "both are false"},
        {"mutants": ["f__mutmut_2"], "kind": "not killed", "reason": "needs a full disk"},
    ]
    _write(tmp_path, why=why)
    records = tool.load(tmp_path)
    # the score leaves the equivalent mutant out: 8 killed of 9
    assert "| `plankit.sample` | 10 | 8 | 80.0% | 1 | 1 | 88.9% | `test_sample.py` |" in tool.table(
        records
    )
    listed = tool.survivors(records)
    assert "- `f__mutmut_1`: both are false" in listed
    assert "- `f__mutmut_2` (not killed): needs a full disk" in listed


def test_a_module_whose_survivors_are_all_equivalent_scores_in_full(tmp_path):
    tool = _tool()
    why = [{"mutants": ["f__mutmut_1", "f__mutmut_2"], "kind": "equivalent", "reason": "same"}]
    _write(tmp_path, why=why)
    row = tool.table(tool.load(tmp_path)).splitlines()[-1]
    assert row.startswith("| `plankit.sample` | 10 | 8 | 80.0% | 2 | 0 | 100% |")
