"""PLAN.md checklists for sheet-grounded agents.

A plan is Markdown kept in one spreadsheet cell (``AGENT_BASE!C2``) or a file::

    from plankit.checklist import PlanManager, parse_plan, update_task_status
    from plankit.checklist.stores import XlsxWorkbook

    manager = PlanManager(XlsxWorkbook("plan.xlsx"))
    manager.init_plan()
    manager.complete_task("1.1")

The names below are imported on first use, so ``import plankit.checklist`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plankit.lazy import lazy_exports

if TYPE_CHECKING:
    from plankit.checklist.analysis import PlanAnalysis
    from plankit.checklist.edit import add_note, update_task_status
    from plankit.checklist.errors import (
        CellTooLargeError,
        NoPlanError,
        NotAPlanError,
        PlanExistsError,
        StoreError,
        UnknownStepError,
    )
    from plankit.checklist.manager import DEFAULT_CELL, PlanManager
    from plankit.checklist.model import (
        Phase,
        PhaseInput,
        Plan,
        PlanTask,
        Progress,
        TaskStatus,
    )
    from plankit.checklist.plan import parse_plan
    from plankit.checklist.render import PLAN_MARKER, STARTER_PLAN, render_new_plan
    from plankit.checklist.stores import (
        GoogleSheets,
        MarkdownFile,
        MemorySheets,
        SheetsClient,
        XlsxWorkbook,
        open_store,
    )

_WHERE = {
    "add_note": "edit",
    "update_task_status": "edit",
    "CellTooLargeError": "errors",
    "NoPlanError": "errors",
    "NotAPlanError": "errors",
    "PlanExistsError": "errors",
    "StoreError": "errors",
    "UnknownStepError": "errors",
    "DEFAULT_CELL": "manager",
    "PlanManager": "manager",
    "Phase": "model",
    "PhaseInput": "model",
    "Plan": "model",
    "PlanAnalysis": "analysis",
    "PlanTask": "model",
    "Progress": "model",
    "TaskStatus": "model",
    "parse_plan": "plan",
    "PLAN_MARKER": "render",
    "STARTER_PLAN": "render",
    "render_new_plan": "render",
    "GoogleSheets": "stores",
    "MarkdownFile": "stores",
    "MemorySheets": "stores",
    "SheetsClient": "stores",
    "XlsxWorkbook": "stores",
    "open_store": "stores",
}

__all__ = [
    "DEFAULT_CELL",
    "PLAN_MARKER",
    "STARTER_PLAN",
    "CellTooLargeError",
    "GoogleSheets",
    "MarkdownFile",
    "MemorySheets",
    "NoPlanError",
    "NotAPlanError",
    "Phase",
    "PhaseInput",
    "Plan",
    "PlanAnalysis",
    "PlanExistsError",
    "PlanManager",
    "PlanTask",
    "Progress",
    "SheetsClient",
    "StoreError",
    "TaskStatus",
    "UnknownStepError",
    "XlsxWorkbook",
    "add_note",
    "open_store",
    "parse_plan",
    "render_new_plan",
    "update_task_status",
]


__getattr__ = lazy_exports(__name__, _WHERE)
