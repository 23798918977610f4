"""Fixtures for the run tests: a user's git repository, the environment that finds
``agentctl`` and the test agents, and helpers to run ``agentctl`` as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TOY = f"{sys.executable} -m tests.orchestrate.toy_agent"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def snapshot(repo: Path) -> dict[str, str]:
    """What the user sees of their repository: HEAD, branch, index, status, files."""
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "index": git(repo, "ls-files", "--stage"),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "files": " ".join(sorted(p.name for p in repo.iterdir())),
    }


@dataclass
class Project:
    repo: Path
    env: dict[str, str]
    tmp: Path

    def plan(self, title: str, tasks: list[dict[str, Any]], name: str = "plan.json") -> Path:
        path = self.tmp / name
        path.write_text(json.dumps({"title": title, "narrative": f"{title}: narrative.",
                                    "tasks": tasks}))  # fmt: skip
        return path

    def agentctl(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "agentctl"), *args],
            cwd=cwd or self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=240,
        )

    def start(self, *args: str, cwd: Path | None = None, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(BIN / "agentctl"), *args],
            cwd=cwd or self.repo,
            env={**self.env, **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def show(self, session: str) -> dict[str, Any]:
        done = self.agentctl("plan", "show", "--session", session, "--json")
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    def tasks(self, session: str) -> dict[str, dict[str, Any]]:
        doc = self.show(session)
        return {t["id"]: t for th in doc["threads"] for t in th["plan"]["tasks"]}


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Dev")
    git(path, "config", "user.email", "dev@example.org")
    (path / "README.md").write_text("# the project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "start")
    (path / "notes.txt").write_text("uncommitted work of the user\n")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Project:
    env = {
        **os.environ,
        "AGENTFLOW_HOME": str(tmp_path / "agentflow-home"),
        "PLANKIT_HOME": str(tmp_path / "plankit-home"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("AGENTFLOW_SESSION_ID", None)
    env.pop("AGENTFLOW_DATABASE_URL", None)
    return Project(make_repo(tmp_path / "repo"), env, tmp_path)
