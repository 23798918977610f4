"""Eight real processes update one workbook at once and lose no update.

The workers are other interpreters, so mutation runs leave this file out (a mutant
never reaches them); the lock itself is tested in the test process by
``test_xlsx.py`` and ``test_markdown_file.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plankit.checklist import PhaseInput, PlanManager, XlsxWorkbook, parse_plan
from tests.checklist.test_xlsx import ROOT, calamine_cell


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "plan.xlsx"


WORKER = textwrap.dedent(
    """
    import sys
    from plankit.checklist import PlanManager, XlsxWorkbook
    path, phase, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    manager = PlanManager(XlsxWorkbook(path, lock_timeout=120))
    for step in range(1, count + 1):
        manager.complete_task(f"{phase}.{step}")
    """
)


def test_eight_processes_lose_no_update(path: Path) -> None:
    processes, steps = 8, 25
    manager = PlanManager(XlsxWorkbook(path))
    manager.create_plan(
        "Concurrent",
        "Every update survives",
        [
            PhaseInput(f"Worker {p}", [f"step {s}" for s in range(1, steps + 1)])
            for p in range(1, 9)
        ],
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), str(p), str(steps)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(1, processes + 1)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
    text = calamine_cell(path, "AGENT_BASE", 2, 3)
    assert isinstance(text, str)
    plan = parse_plan(text)
    assert len(plan.tasks) == processes * steps
    assert [t.step for t in plan.tasks if t.status != "done"] == []
    assert all(t.completed_date for t in plan.tasks)
