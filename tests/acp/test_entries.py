"""The plan → v1 entries mapping: golden cases per plan kind, each update valid under the
official v1 schema, and the rules a reader relies on.

Cases live in ``tests/data/acp/entries/*.case.json`` with the expected update next to
them (``*.expected.json``); ``PLANKIT_UPDATE_GOLDEN=1`` rewrites the expected files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from plankit.acp.entries import (
    STATUSES,
    Entry,
    agentflow_entries,
    checklist_entries,
    commit_entries,
    critical_path,
    entry_of,
    plan_update,
    report_entries,
    teddy_entries,
)
from plankit.errors import InputError
from tests.acp.kit import ROOT, SchemaCheck

CASES = ROOT / "tests" / "data" / "acp" / "entries"


def build(case: dict[str, Any], name: str) -> dict[str, Any]:
    source = ROOT / case["plan"]
    if name.startswith("teddy-"):
        from plankit.teddy.format.parse import parse_plan

        plan = parse_plan(source.read_text(encoding="utf-8"))
        entries = teddy_entries(plan, case["statuses"], case["reasons"])
        return plan_update(entries, kind="teddy", title=plan.title)
    if name.startswith("checklist-"):
        from plankit.checklist import parse_plan as parse_checklist

        checklist = parse_checklist(source.read_text(encoding="utf-8"))
        return plan_update(checklist_entries(checklist), kind="checklist", title=checklist.title)
    from plankit.agentflow import load_plan

    flow = load_plan(str(source))
    return plan_update(
        agentflow_entries(flow, case["statuses"]), kind="agentflow", title=flow.title
    )


@pytest.mark.parametrize("case_file", sorted(CASES.glob("*.case.json")), ids=lambda p: p.name[:-10])
def test_golden(case_file: Path, check: SchemaCheck) -> None:
    name = case_file.name[: -len(".case.json")]
    update = build(json.loads(case_file.read_text(encoding="utf-8")), name)
    expected_file = case_file.with_name(f"{name}.expected.json")
    if os.environ.get("PLANKIT_UPDATE_GOLDEN"):
        expected_file.write_text(
            json.dumps(update, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    assert update == json.loads(expected_file.read_text(encoding="utf-8"))
    check.check(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        }
    )


def test_every_kind_has_a_golden_case() -> None:
    names = [p.name for p in CASES.glob("*.case.json")]
    for kind in ("teddy-", "checklist-", "flow-"):
        assert any(n.startswith(kind) for n in names), kind


def test_wire_status_and_priority_are_only_v1_values(check: SchemaCheck) -> None:
    entries = [Entry(str(i), f"task {i}", status) for i, status in enumerate(STATUSES)]
    update = plan_update(entries)
    assert {e["status"] for e in update["entries"]} == {"pending", "in_progress", "completed"}
    check.check(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        }
    )
    # the rich status survives in _meta and reads back
    assert [entry_of(e) for e in update["entries"]] == [(str(i), s) for i, s in enumerate(STATUSES)]


def test_statuses_v1_cannot_say_go_to_meta_and_content_stays_the_same() -> None:
    failed = Entry("1", "Build", "failed", reason="exit code 2").to_wire()
    assert failed["content"] == "Build"
    assert failed["_meta"]["plankit"]["note"] == "failed: exit code 2"
    rejected = Entry("1", "Build", "rejected", reason="rejected by the user").to_wire()
    assert rejected["_meta"]["plankit"]["note"] == "rejected by the user"
    assert Entry("1", "Build", "blocked").to_wire()["_meta"]["plankit"]["note"] == "blocked"
    assert "note" not in Entry("1", "Build", "completed", reason="x").to_wire()["_meta"]["plankit"]
    # a client keying entries by content follows one entry through every status
    assert {Entry("1", "Build", s, reason="why").to_wire()["content"] for s in STATUSES} == {
        "Build"
    }


def test_entries_that_did_not_run_are_never_completed_on_the_wire() -> None:
    for status in ("failed", "skipped", "rejected", "cancelled"):
        wire = Entry("1", "Build", status, reason="why").to_wire()
        assert wire["status"] == "pending", status
        assert wire["_meta"]["plankit"]["reason"] == "why"


def test_unknown_status_or_priority_is_refused() -> None:
    with pytest.raises(InputError, match="unknown plan entry status 'done'"):
        Entry("1", "x", "done")
    with pytest.raises(InputError, match="unknown plan entry priority 'urgent'"):
        Entry("1", "x", "pending", priority="urgent")  # type: ignore[arg-type]


def test_entries_of_any_agent_read_back_with_their_v1_status() -> None:
    assert entry_of({"content": "x", "priority": "low", "status": "in_progress"}) == (
        None,
        "in_progress",
    )
    assert entry_of({"content": "x", "status": "pending", "_meta": {"other": 1}}) == (
        None,
        "pending",
    )


def test_teddy_entries_from_a_report(tmp_path: Path) -> None:
    from plankit.teddy.format.parse import parse_plan
    from plankit.teddy.run.report import ActionResult

    plan = parse_plan((ROOT / "examples" / "add-health-endpoint.md").read_text(encoding="utf-8"))
    results = [
        ActionResult(plan.actions[0], True, None, True),
        ActionResult(plan.actions[1], True, None, False, notes=("FIND matched nothing",)),
        ActionResult(plan.actions[2], True, "skipped after the failure of `EDIT` above"),
        ActionResult(plan.actions[3], False, "not selected"),
        ActionResult(plan.actions[4], True, None, True),
    ]
    entries = report_entries(plan, results)
    assert [e.status for e in entries] == ["completed", "failed", "skipped", "skipped", "completed"]
    assert entries[1].note == "failed: FIND matched nothing"
    assert [e.priority for e in entries] == ["medium", "high", "high", "high", "low"]
    assert [e.id for e in entries] == ["1", "2", "3", "4", "5"]


def test_checklist_priority_follows_the_current_phase() -> None:
    from plankit.checklist import parse_plan as parse_checklist

    text = (ROOT / "tests/data/checklist/plans/inventory-reconciliation.md").read_text(
        encoding="utf-8"
    )
    entries = {e.id: e for e in checklist_entries(parse_checklist(text))}
    assert entries["1.1"].priority == "low"  # phase 1 is done
    assert entries["2.2"].priority == "high"  # phase 2 has an unfinished task
    assert entries["3.1"].priority == "medium"
    assert (entries["2.2"].status, entries["2.2"].wire_status) == ("review", "in_progress")
    assert (entries["3.3"].status, entries["3.3"].wire_status) == ("blocked", "pending")
    assert entries["3.3"].reason == "waiting for Phase 2 review approval"


def test_agentflow_critical_path_is_high() -> None:
    from plankit.agentflow import load_plan

    flow = load_plan(str(CASES / "flow-diamond"))
    assert critical_path(flow.tasks) == {"schema", "exporter", "docs", "release"}
    priorities = {e.id: e.priority for e in agentflow_entries(flow)}
    assert priorities == {
        "schema": "high",
        "exporter": "high",
        "docs": "high",
        "release": "high",
        "dashboard": "low",
    }


def test_agentflow_status_for_an_unknown_task_is_refused() -> None:
    from plankit.agentflow import load_plan

    flow = load_plan(str(CASES / "flow-diamond"))
    with pytest.raises(InputError, match="unknown task"):
        agentflow_entries(flow, {"nope": "completed"})


def test_commit_entries_prefix_additional_threads() -> None:
    from plankit.agentflow import load_plan
    from plankit.agentflow.records import CommitRecord, CommittedThread

    flow = load_plan(str(CASES / "flow-diamond"))
    spec = load_plan(str(ROOT / "tests/data/agentflow/valid/spec-example"))
    record = CommitRecord(
        "s1",
        1,
        "2026-01-01T00:00:00Z",
        (CommittedThread("t1", True, flow), CommittedThread("t2", False, spec)),
    )
    entries = commit_entries(record, {"schema": "completed", "t2/create-schema": "in_progress"})
    ids = [e.id for e in entries]
    assert ids[:5] == ["schema", "exporter", "docs", "release", "dashboard"]
    assert ids[5:] == ["t2/create-schema", "t2/implement-service", "t2/wire-handler"]
    assert entries[0].status == "completed"
    assert entries[5].status == "in_progress"


def test_a_large_plan_maps_every_entry_in_order(check: SchemaCheck) -> None:
    # how fast: benchmarks/bench_acp.py (plan_update of 100 entries against json.dumps)
    statuses = list(STATUSES)
    entries = [Entry(str(i), f"task {i}", statuses[i % len(statuses)]) for i in range(1000)]
    update = plan_update(entries, kind="checklist")
    assert [entry_of(e) for e in update["entries"]] == [(e.id, e.status) for e in entries]
    assert [e["content"] for e in update["entries"][:2]] == ["task 0", "task 1"]
    assert update["_meta"] == {"plankit": {"kind": "checklist"}}
    assert plan_update(entries, kind="checklist") == update  # the same plan, the same update
    check.check(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        }
    )
