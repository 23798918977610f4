"""YAML files written to hurt: nesting ten thousand levels deep, or too large.

Every YAML reader (TeDDy's ``config.yaml``, ``memos.yaml`` and ``meta.yaml``,
agentflow's front matter) refuses them with a one-line error naming the file, the
line and the limit (:mod:`plankit.yamllimits`), instead of a ``RecursionError``
after many seconds; ordinary files, brackets in their text included, still load.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.agentflow.frontmatter import FrontMatterError
from plankit.agentflow.frontmatter import parse as parse_front_matter
from plankit.errors import InputError
from plankit.teddy.session.config import load_config
from plankit.teddy.session.layout import Turn, create_session
from plankit.teddy.session.memos import load_memos
from plankit.teddy.session.yamlio import load_yaml
from plankit.yamllimits import MAX_YAML_BYTES, MAX_YAML_DEPTH, YamlLimitError, check_nesting

N = 10_000
DEEP = {
    "flow sequences": "a: " + "[" * N + "]" * N + "\n",
    "flow mappings": "a: " + "{a: " * N + "}" * N + "\n",
    "sequences on one line": "- " * N + "x\n",
    "explicit keys": "? " * N + "x\n",
    "indented mappings": "".join(" " * i + "k:\n" for i in range(1_200)) + " " * 1_200 + "v\n",
    "behind a tag and an anchor": "a: !t &b " + "[" * N + "]" * N + "\n",
    "behind a quote inside a flow scalar": "a: [x 'y, " + "[" * N + "]" * N + ", z']\n",
}


def nested(depth: int, flow: bool) -> str:
    """A document nesting exactly ``depth`` levels."""
    if flow:
        return "[" * depth + "1" + "]" * depth + "\n"
    return "".join(" " * i + "k:\n" for i in range(depth - 1)) + " " * (depth - 1) + "k: 1\n"


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_deep_yaml_is_a_one_line_error_naming_the_file_and_the_limit(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_yaml(path, default={})
    message = str(info.value)
    assert message.startswith(f"{path}:")
    assert f"nested more than {MAX_YAML_DEPTH} levels" in message
    assert "\n" not in message
    assert info.value.code == "yaml-limit"


@pytest.mark.parametrize("flow", [True, False], ids=["flow", "block"])
def test_the_limit_is_exact(flow: bool) -> None:
    check_nesting(nested(MAX_YAML_DEPTH, flow))
    with pytest.raises(YamlLimitError):
        check_nesting(nested(MAX_YAML_DEPTH + 1, flow))


def test_ordinary_files_with_brackets_in_their_text_still_load(tmp_path: Path) -> None:
    memos = "".join(
        f"- 'memo {i}: see [the docs] and {{braces}}, or [unclosed'\n"
        f"- plain {i} [not a flow collection # and [ no comment\n"
        f"- |\n  literal [[[[ text\n  {{{{ more\n"
        for i in range(200)
    )
    path = tmp_path / "memos.yaml"
    path.write_text(memos, encoding="utf-8")
    data = load_yaml(path, default=[])
    assert len(data) == 600
    assert data[0] == "memo 0: see [the docs] and {braces}, or [unclosed"
    assert data[2] == "literal [[[[ text\n{{ more\n"


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memos.yaml"
    path.write_text("- x\n" * (MAX_YAML_BYTES // 4 + 1), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_yaml(path, default=[])
    assert str(info.value).startswith(str(path)) and "MiB" in str(info.value)


def test_teddy_refuses_a_deep_config_yaml_in_one_line(tmp_path: Path) -> None:
    (tmp_path / ".teddy").mkdir()
    (tmp_path / ".teddy" / "config.yaml").write_text(DEEP["flow sequences"], encoding="utf-8")
    env = {**os.environ, "PLANKIT_HOME": str(tmp_path / "home")}
    env.pop("TEDDY_SESSION", None)
    result = subprocess.run(
        [sys.executable, "-c", "from plankit.teddy.cli import main; main()", "new", "demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert ".teddy/config.yaml:1:" in lines[0] and f"{MAX_YAML_DEPTH} levels" in lines[0]
    assert not list((tmp_path / ".teddy").glob("*-demo"))


def test_config_memos_and_meta_all_refuse_deep_yaml(tmp_path: Path) -> None:
    session = create_session(tmp_path, "demo", "<prompt/>", "developer")
    turn = Turn(session, "01")
    files = {
        "config.yaml": (tmp_path / ".teddy" / "config.yaml", lambda: load_config(tmp_path)),
        "memos.yaml": (tmp_path / ".teddy" / "memos.yaml", lambda: load_memos(tmp_path)),
        "meta.yaml": (turn.file("meta.yaml"), turn.meta),
    }
    for name, (path, read) in files.items():
        kept = path.read_bytes() if path.exists() else None
        path.write_text(DEEP["sequences on one line"], encoding="utf-8")
        with pytest.raises(InputError) as info:
            read()
        assert str(info.value).startswith(f"{path}:1: nested more than"), name
        if kept is None:
            path.unlink()
        else:
            path.write_bytes(kept)


def test_agentflow_front_matter_shares_the_limits() -> None:
    for text in DEEP.values():
        if len(text) > 60_000:
            continue  # front matter has its own, smaller size limit
        with pytest.raises(FrontMatterError) as info:
            parse_front_matter("id: a\nsubtasks:\n  " + text.replace("\n", "\n  "), 2)
        assert "nested more than" in str(info.value)
