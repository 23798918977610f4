"""Approval front ends: the console (tier 1) and the Textual checklist (tier 2).

Both implement :class:`plankit.teddy.run.approval.Approver`.
"""
