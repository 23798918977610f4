"""Tests of plankit.agentflow (a package, so test module names cannot clash)."""
