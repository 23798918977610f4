"""Both MCP servers driven by a client plankit did not write: the MCP Inspector's command
line (``@modelcontextprotocol/inspector``, pinned, installed into build/mcp-inspector by
tools/test-deps).  Each call spawns the server, initializes, calls one method and prints
the result as JSON, as a user trying a server by hand would.  Skipped, with the reason,
when node or the Inspector is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plankit.agentflow.control import ControlPlane
from plankit.mcp import catalog
from tests.acp.kit import ROOT
from tests.waiting import DEADLINE

INSPECTOR_VERSION = "2.12.0"  # tools/test-deps installs the same version
INSPECTOR_DIR = ROOT / "build" / "mcp-inspector"
LAUNCHER = (
    INSPECTOR_DIR
    / "node_modules"
    / "@modelcontextprotocol"
    / "inspector"
    / "clients"
    / "launcher"
    / "build"
    / "index.js"
)


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the MCP Inspector runs on Node.js)")
    if not LAUNCHER.exists():
        pytest.skip(
            f"the MCP Inspector is not installed in {INSPECTOR_DIR} (tools/test-deps "
            f"installs @modelcontextprotocol/inspector@{INSPECTOR_VERSION})"
        )
    package = json.loads((LAUNCHER.parents[3] / "package.json").read_text(encoding="utf-8"))
    if package.get("version") != INSPECTOR_VERSION:
        pytest.skip(f"the MCP Inspector in {INSPECTOR_DIR} is not {INSPECTOR_VERSION}")
    return [node, str(LAUNCHER), "--cli"]


def _script(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"no {name} console script next to {sys.executable}")
    return found


class Inspector:
    """The Inspector CLI against one server command, in a scratch directory."""

    def __init__(self, base: list[str], server: list[str], tmp_path: Path, env: dict[str, str]):
        self.base = base
        self.server = server
        self.cwd = tmp_path
        self.server_env = env
        home = tmp_path / "inspector-home"
        home.mkdir(exist_ok=True)
        self.env = {  # the Inspector keeps a catalogue file: kept inside the test's folder
            **os.environ,
            "HOME": str(home),
            "MCP_CATALOG_PATH": str(home / "mcp.json"),
        }

    def run(self, method: str, *args: str) -> tuple[int, dict[str, Any]]:
        extra: list[str] = []
        for key, value in self.server_env.items():
            extra += ["-e", f"{key}={value}"]
        command = [
            *self.base,
            *extra,
            "--cwd",
            str(self.cwd),
            "--method",
            method,
            *args,
            "--",
            *self.server,
        ]
        done = subprocess.run(
            command,
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=DEADLINE * 2,
            check=False,
        )
        output = done.stdout.strip()
        assert output, f"the Inspector printed nothing:\n{done.stderr}"
        result, _ = json.JSONDecoder().raw_decode(output)
        return done.returncode, result

    def call(self, tool: str, **arguments: str) -> dict[str, Any]:
        args = ["--tool-name", tool]
        for key, value in arguments.items():
            args += ["--tool-arg", f"{key}={value}"]
        _, result = self.run("tools/call", *args)
        return result


def _env(tmp_path: Path, session: str = "no-session") -> dict[str, str]:
    return {
        "PYTHONPATH": str(ROOT / "src"),
        "AGENTFLOW_HOME": str(tmp_path / "agentflow"),
        "AGENTFLOW_SESSION_ID": session,
    }


def test_the_inspector_lists_the_default_and_the_full_tool_sets(
    inspector: list[str], tmp_path: Path
) -> None:
    plankit = [_script("plankit"), "mcp", "--store", "PLAN.md"]
    code, core = Inspector(inspector, plankit, tmp_path, _env(tmp_path)).run("tools/list")
    assert code == 0
    assert [t["name"] for t in core["tools"]] == [t.name for t in catalog.selected("core")]
    full = Inspector(inspector, [*plankit, "--tools", "all"], tmp_path, _env(tmp_path))
    code, everything = full.run("tools/list")
    assert code == 0 and len(everything["tools"]) == len(catalog.ALL)
    for tool in everything["tools"]:
        for name, spec in tool["inputSchema"].get("properties", {}).items():
            assert spec.get("description"), (tool["name"], name)
    assert len(json.dumps(core, separators=(",", ":")).encode()) / 4 <= 2000


def test_a_checklist_through_the_inspector(inspector: list[str], tmp_path: Path) -> None:
    plankit = [_script("plankit"), "mcp", "--store", "PLAN.md"]
    client = Inspector(inspector, plankit, tmp_path, _env(tmp_path))
    created = client.call(
        "create_plan",
        title="Release notes",
        goal="Users read what changed",
        phases='[{"name": "Write", "steps": ["Collect the merged changes", "Draft the notes"]}]',
    )
    assert not created["isError"], created
    step = json.loads(client.call("get_next_task")["content"][0]["text"])
    assert step["step"] == "1.1"
    assert not client.call("start_task", step='"1.1"')["isError"]
    assert not client.call("complete_task", step='"1.1"')["isError"]
    refused = client.call("complete_task", step='"9.9"')
    assert refused["isError"]
    (error,) = refused["structuredContent"]["errors"]
    assert error["code"] == "unknown-step"
    assert refused["content"][0]["text"].startswith("unknown-step no task '9.9'")
    text = (tmp_path / "PLAN.md").read_text(encoding="utf-8")
    assert "- [x] 1.1 Collect the merged changes" in text
    assert "- [ ] 1.2 Draft the notes" in text


def test_an_agentflow_task_cycle_through_the_inspector(
    inspector: list[str], tmp_path: Path
) -> None:
    context = ControlPlane(tmp_path / "agentflow").start_session()
    agentctl = [_script("agentctl"), "mcp"]
    client = Inspector(inspector, agentctl, tmp_path, _env(tmp_path, context.session.session_id))
    where = client.call("plan_dir")["structuredContent"]
    directory = Path(where["plan_dir"])
    (directory / "plan.md").write_text(
        '---\ntitle: "Rotate the keys"\n---\n\nRotate the signing keys before they expire.\n',
        encoding="utf-8",
    )
    (directory / "tasks").mkdir(exist_ok=True)
    (directory / "tasks" / "01-rotate.md").write_text(
        "---\nid: rotate\n---\n\nGenerate the new key pair and publish the public key.\n",
        encoding="utf-8",
    )
    committed = client.call("plan_commit")
    assert not committed["isError"], committed
    task = client.call("task_claim", agent="inspector")["structuredContent"]["task"]
    assert task["ref"].endswith("/rotate")
    done = client.call("task_done", ref=json.dumps(task["ref"]), claim=json.dumps(task["claim"]))
    assert done["structuredContent"]["state"] == "done"
    refused = client.call("task_done", ref=json.dumps(task["ref"]))
    assert refused["isError"] and "agentctl" not in refused["content"][0]["text"]
    code, tools = client.run("tools/list")
    assert code == 0 and {t["name"] for t in tools["tools"]} == {t.name for t in catalog.AGENTFLOW}
