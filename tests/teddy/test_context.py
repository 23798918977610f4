"""The context payload (``input.md``): layout, project tree, resources, URLs, determinism."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from plankit.markdown.fences import fenced
from plankit.markdown.tree import Fence, Heading, parse_document
from plankit.teddy.context import payload as context_module
from plankit.teddy.context import tree_listing
from plankit.teddy.context.network import NetworkPolicy
from plankit.teddy.context.payload import (
    build_payload,
    normalize_entry,
    project_tree,
    read_context_file,
    write_context_file,
)
from plankit.teddy.context.urls import FetchError, cache_path, fetch_url, html_to_text

SESSION = "20260124-add-user-auth"
LOOPBACK = NetworkPolicy.from_settings((), ("127.0.0.1/32",))


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


@dataclass
class Project:
    """A project root with one session and one turn."""

    root: Path
    session: Path
    turn: Path

    def context(self, *, turn: str = "", session: str = "", global_: str = "") -> None:
        (self.turn / "turn.context").write_text(turn, encoding="utf-8")
        (self.session / "session.context").write_text(session, encoding="utf-8")
        (self.root / ".teddy" / "global.context").write_text(global_, encoding="utf-8")

    def build(self, **kwargs: object) -> str:
        return build_payload(self.root, self.session, self.turn, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "proj"
    turn = root / ".teddy" / SESSION / "03"
    turn.mkdir(parents=True)
    return Project(root, turn.parent, turn)


@pytest.fixture(autouse=True)
def _fixed_system(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "TestOS")
    monkeypatch.setattr(platform, "release", lambda: "1.2.3")
    monkeypatch.setenv("SHELL", "/bin/testsh")


def _section(payload: str, title: str) -> str:
    """The text of one ``## `` section (up to the next one)."""
    start = payload.index(f"\n## {title}\n")
    end = payload.find("\n## ", start + 1)
    return payload[start + 1 : end if end >= 0 else len(payload)]


def _resources(payload: str) -> list[str]:
    """The resource blocks of section 5, each starting with its ``**Resource:**`` line."""
    body = _section(payload, "5. Resource Contents")
    return [block.strip("\n") for block in body.split("\n---\n")[1:]]


# --- the exact layout ------------------------------------------------------------------


def test_exact_layout_of_a_small_project(project: Project) -> None:
    _write(
        project.root,
        {
            ".gitignore": "*.pyc\n",
            "README.md": "# Demo\n",
            "docs/spec.md": "Spec with a fence:\n\n```sh\nmake\n```\n",
            "src/app.py": "print('hi')\n",
            "src/app.pyc": b"\x00\x01compiled",
            "src/Lib/util.py": "",
            ".teddy/memos.yaml": "- Use pnpm.\n",
        },
    )
    project.context(
        turn="src/app.py\nREADME.md\n",
        session="# session files\ndocs/spec.md\n\n",
        global_="README.md\n",
    )
    expected = f"""# Agent Invocation Payload

## 1. System Information
- **CWD:** {project.root}
- **OS:** TestOS 1.2.3
- **Shell:** /bin/testsh
- **Session:** 20260124-add-user-auth
- **Turn:** 03

## 2. Project Structure
```text
docs/
  spec.md
src/
  Lib/
    util.py
  app.py
.gitignore
README.md
```

## 3. Memos
```yaml
- Use pnpm.
```

## 4. Context Summary
### Turn
- [src/app.py](/src/app.py)
- [README.md](/README.md)
### Session
- [docs/spec.md](/docs/spec.md)
### Global
- [README.md](/README.md)

## 5. Resource Contents
---
**Resource:** `[src/app.py](/src/app.py)`
```python
print('hi')
```

---
**Resource:** `[README.md](/README.md)`
```markdown
# Demo
```

---
**Resource:** `[docs/spec.md](/docs/spec.md)`
````markdown
Spec with a fence:

```sh
make
```
````
"""
    assert project.build() == expected


def test_stateless_payload_has_no_session_or_turn(tmp_path: Path) -> None:
    _write(tmp_path, {"a.txt": "A\n", ".teddy/global.context": "a.txt\n"})
    payload = build_payload(tmp_path, None, None)
    system = _section(payload, "1. System Information")
    assert "**Session:**" not in system
    assert "**Turn:**" not in system
    assert "## 3. Memos" not in payload
    summary = _section(payload, "4. Context Summary")
    assert summary == "## 4. Context Summary\n### Global\n- [a.txt](/a.txt)\n"
    assert _resources(payload) == ["**Resource:** `[a.txt](/a.txt)`\n```text\nA\n```"]


def test_empty_scopes_and_no_resources_are_said_plainly(project: Project) -> None:
    project.context()
    payload = project.build()
    assert "### Turn\n(none)\n### Session\n(none)\n### Global\n(none)\n" in payload
    assert payload.endswith("## 5. Resource Contents\n(none)\n")


def test_memos_verbatim_when_present_and_section_left_out_when_absent(project: Project) -> None:
    project.context()
    without = project.build()
    assert "## 3. Memos" not in without
    assert "## 4. Context Summary" in without  # the numbering does not shift
    memos = "# long-term memory\n- 'Use pnpm'  # keep\n- ``` odd\n"
    _write(project.root, {".teddy/memos.yaml": memos})
    section = _section(project.build(), "3. Memos")
    assert section == "## 3. Memos\n````yaml\n" + memos + "````\n"


# --- the project tree ------------------------------------------------------------------


def _files(listing: str) -> set[str]:
    """Full paths of the files (not directories) in a listing."""
    stack: list[str] = []
    files: set[str] = set()
    for line in listing.splitlines():
        name = line.lstrip(" ")
        depth = (len(line) - len(name)) // 2
        del stack[depth:]
        if name.endswith("/"):
            stack.append(name[:-1])
        else:
            files.add("/".join([*stack, name]))
    return files


def test_tree_sorts_directories_first_then_names_case_insensitively(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "b.txt": "",
            "A.txt": "",
            "a.md": "",
            "C/x": "",
            "a/y": "",
            "B/z": "",
            "_u": "",
        },
    )
    (tmp_path / "empty").mkdir()
    assert project_tree(tmp_path) == "\n".join(
        ["a/", "  y", "B/", "  z", "C/", "  x", "empty/", "_u", "a.md", "A.txt", "b.txt"]
    )


def test_tree_leaves_out_git_and_teddy_and_does_not_follow_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside, {"secret.txt": ""})
    root = tmp_path / "root"
    _write(
        root,
        {
            ".git/config": "",
            ".teddy/memos.yaml": "",
            "vendor/lib/.git": "gitdir: ../../.git/modules/lib\n",
            "vendor/lib/code.c": "",
            "a.txt": "",
        },
    )
    (root / "link").symlink_to(outside, target_is_directory=True)
    assert project_tree(root) == "\n".join(["vendor/", "  lib/", "    code.c", "a.txt", "link"])


GITIGNORE_FIXTURE: dict[str, str | bytes] = {
    ".gitignore": (
        "# comment\n*.log\nbuild/\n!build/keep.txt\n/root_only.txt\ndocs/**/draft.md\n"
        "logs/*\n!logs/keep.log\n\\#hash.txt\nCache/\n"
    ),
    "sub/.gitignore": "!important.log\nlocal/\n*.tmp\n/anchored.txt\n",
    "sub/deep/.gitignore": "!x.tmp\n",
    "a.log": "",
    "important.log": "",
    "build/keep.txt": "",
    "build/a.txt": "",
    "root_only.txt": "",
    "sub/root_only.txt": "",
    "docs/draft.md": "",
    "docs/a/b/draft.md": "",
    "docs/a/b/final.md": "",
    "logs/a.log": "",
    "logs/keep.log": "",
    "#hash.txt": "",
    "cache/x": "",
    "Cache/y": "",
    "sub/important.log": "",
    "sub/local/x.txt": "",
    "sub/y.tmp": "",
    "sub/anchored.txt": "",
    "sub/deep/anchored.txt": "",
    "sub/deep/x.tmp": "",
    "sub/deep/z.tmp": "",
    "sub/deep/ok.py": "",
    "README.md": "",
}


def test_root_and_nested_gitignore_files(tmp_path: Path) -> None:
    _write(tmp_path, GITIGNORE_FIXTURE)
    assert _files(project_tree(tmp_path)) == {
        ".gitignore",
        "README.md",
        "cache/x",
        "docs/a/b/final.md",
        "logs/keep.log",
        "sub/.gitignore",
        "sub/deep/.gitignore",
        "sub/deep/anchored.txt",
        "sub/deep/ok.py",
        "sub/deep/x.tmp",
        "sub/important.log",
        "sub/root_only.txt",
    }


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gitignore_handling_agrees_with_git(tmp_path: Path) -> None:
    _write(tmp_path, GITIGNORE_FIXTURE)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=tmp_path,
        check=True,
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    assert _files(project_tree(tmp_path)) == set(filter(None, listed.split("\0")))


TEDDYIGNORE_FIXTURE: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.log\nsecret/\n",
    ".teddyignore": "!build/report.txt\n!debug.log\nnotes/\n!notes/keep.md\nlarge/\n",
    "build/report.txt": "",
    "build/other.o": "",
    "build/sub/deep.o": "",
    "debug.log": "",
    "x.log": "",
    "notes/a.md": "",
    "notes/keep.md": "",
    "large/blob.bin": "",
    "secret/key.txt": "",
    "src/a.py": "",
    "src/debug.log": "",
    "sub/.gitignore": "local.txt\n",
    "sub/.teddyignore": "!local.txt\n",
    "sub/local.txt": "",
}


def test_teddyignore_leaves_out_and_re_includes_what_gitignore_excluded(tmp_path: Path) -> None:
    _write(tmp_path, TEDDYIGNORE_FIXTURE)
    assert project_tree(tmp_path) == "\n".join(
        [
            "build/",
            "  report.txt",
            "notes/",
            "  keep.md",
            "src/",
            "  a.py",
            "  debug.log",
            "sub/",
            "  .gitignore",
            "  .teddyignore",
            "  local.txt",
            ".gitignore",
            ".teddyignore",
            "debug.log",
        ]
    )


@pytest.mark.parametrize("fixture", [GITIGNORE_FIXTURE, TEDDYIGNORE_FIXTURE])
def test_pruning_ignored_directories_changes_nothing(
    tmp_path: Path, fixture: dict[str, str | bytes]
) -> None:
    _write(tmp_path, fixture)
    assert tree_listing.tree_lines(tmp_path) == tree_listing.tree_lines(tmp_path, prune=False)


def test_ignored_directories_are_not_walked_unless_a_negation_may_reach_inside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        tmp_path,
        {
            ".gitignore": "node_modules/\nbuild/\n",
            ".teddyignore": "!build/keep.txt\n",
            "node_modules/pkg/index.js": "",
            "build/keep.txt": "",
            "build/other.txt": "",
        },
    )
    walked: list[str] = []
    scandir = os.scandir

    def recording(path: str) -> object:
        walked.append(os.path.relpath(path, tmp_path))
        return scandir(path)

    monkeypatch.setattr(tree_listing.os, "scandir", recording)
    assert project_tree(tmp_path) == "build/\n  keep.txt\n.gitignore\n.teddyignore"
    assert sorted(walked) == [".", "build"]


def test_unprintable_file_names_are_escaped(tmp_path: Path) -> None:
    (tmp_path / "new\nline.txt").write_text("")
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"bad\xff.txt"), os.O_CREAT, 0o644))
    assert project_tree(tmp_path) == "bad\\xff.txt\nnew\\x0aline.txt"


# --- context files ---------------------------------------------------------------------


def test_read_context_file_skips_blanks_and_comments_and_repeats(tmp_path: Path) -> None:
    path = tmp_path / "turn.context"
    assert read_context_file(path) == []  # missing
    path.write_text(
        "# a comment\n\nsrc/app.py\n  ./src//app.py  \r\n  # indented comment\n"
        "https://example.com/a#frag\ndocs/\n",
        encoding="utf-8",
    )
    assert read_context_file(path) == ["src/app.py", "https://example.com/a#frag", "docs"]


def test_write_context_file_dedups_keeping_first_position(tmp_path: Path) -> None:
    path = tmp_path / "turn.context"
    write_context_file(path, ["b.md", "a.md", "./b.md", "https://x.test/", "a.md"])
    assert path.read_text(encoding="utf-8") == "b.md\na.md\nhttps://x.test/\n"
    assert read_context_file(path) == ["b.md", "a.md", "https://x.test/"]
    assert [p.name for p in tmp_path.iterdir()] == ["turn.context"]  # no temporary left
    write_context_file(path, [])
    assert path.read_text(encoding="utf-8") == ""
    with pytest.raises(ValueError, match="line break"):
        write_context_file(path, ["a\nb"])
    with pytest.raises(ValueError, match="comment"):
        write_context_file(path, ["#notes.md"])
    assert path.read_text(encoding="utf-8") == ""  # untouched by the refused writes


def test_normalize_entry() -> None:
    assert normalize_entry("./docs//a.md/") == "docs/a.md"
    assert normalize_entry(" https://x.test/a ") == "https://x.test/a"
    assert normalize_entry("../up.txt") == "../up.txt"  # refused ones stay as written


# --- resources -------------------------------------------------------------------------


def test_resources_in_turn_session_global_order_each_once(project: Project) -> None:
    _write(project.root, {"a.md": "A\n", "b.md": "B\n", "c.md": "C\n", "d.md": "D\n"})
    project.context(
        turn="b.md\n",
        session="c.md\n./b.md\na.md\n",
        global_="a.md\nd.md\nc.md\n",
    )
    payload = project.build()
    headers = [block.splitlines()[0] for block in _resources(payload)]
    assert headers == [
        "**Resource:** `[b.md](/b.md)`",
        "**Resource:** `[c.md](/c.md)`",
        "**Resource:** `[a.md](/a.md)`",
        "**Resource:** `[d.md](/d.md)`",
    ]
    summary = _section(payload, "4. Context Summary")
    assert "### Session\n- [c.md](/c.md)\n- [b.md](/b.md)\n- [a.md](/a.md)\n" in summary
    assert "### Global\n- [a.md](/a.md)\n- [d.md](/d.md)\n- [c.md](/c.md)\n" in summary


def test_missing_directory_and_unreadable_resources_keep_their_header(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(project.root, {"src/a.py": "x = 1\n", "locked.txt": "hidden\n"})
    project.context(turn="gone.md\nsrc\nsrc/a.py/nested\nlocked.txt\nsrc/a.py\n")
    real_open = os.open

    def failing_open(path: str, *args: object, **kwargs: object) -> int:
        if str(path).endswith("locked.txt"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", failing_open)
    assert _resources(project.build()) == [
        "**Resource:** `[gone.md](/gone.md)`\nNot found: no such file in the project.",
        "**Resource:** `[src](/src)`\nA directory, not a file: name the files to read instead.",
        "**Resource:** `[src/a.py/nested](/src/a.py/nested)`\n"
        "Not found: no such file in the project.",
        "**Resource:** `[locked.txt](/locked.txt)`\nCannot be read: Permission denied.",
        "**Resource:** `[src/a.py](/src/a.py)`\n```python\nx = 1\n```",
    ]


def test_paths_leading_out_of_the_root_are_refused_and_never_read(
    project: Project, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    _write(outside, {"secret.txt": "SECRET\n"})
    _write(project.root, {"inside.txt": "fine\n"})
    (project.root / "link_out").symlink_to(outside / "secret.txt")
    (project.root / "dir_out").symlink_to(outside, target_is_directory=True)
    (project.root / "link_in").symlink_to(project.root / "inside.txt")
    project.context(
        turn=(
            "../outside/secret.txt\nsub/../../outside/secret.txt\n"
            f"{outside / 'secret.txt'}\n~/secret.txt\nlink_out\ndir_out/secret.txt\n"
            "file:///etc/passwd\nlink_in\n"
        )
    )
    payload = project.build()
    assert "SECRET" not in payload
    blocks = _resources(payload)
    assert len(blocks) == 8
    for block in blocks[:7]:
        assert block.splitlines()[1].startswith("Refused: "), block
    assert "symbolic link" in blocks[4]
    assert "symbolic link" in blocks[5]
    assert blocks[0].splitlines()[0] == "**Resource:** `../outside/secret.txt`"
    assert blocks[7] == "**Resource:** `[link\\_in](/link_in)`\n```text\nfine\n```"
    assert "- `../outside/secret.txt` (refused)" in _section(payload, "4. Context Summary")


def test_binary_files_are_named_with_their_size_not_inlined(project: Project) -> None:
    _write(
        project.root,
        {
            "img.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x01" * 100,
            "latin1.txt": b"caf\xe9\n",
            "late_nul.txt": b"a" * 9000 + b"\x00",
        },
    )
    project.context(turn="img.png\nlatin1.txt\nlate_nul.txt\n")
    blocks = _resources(project.build())
    assert blocks[0] == "**Resource:** `[img.png](/img.png)`\nBinary file, 116 bytes; not shown."
    assert blocks[1] == (
        "**Resource:** `[latin1.txt](/latin1.txt)`\n"
        "Binary file (not UTF-8 text), 5 bytes; not shown."
    )
    # a NUL byte after the first 8 KiB does not make a file binary
    assert blocks[2] == (
        "**Resource:** `[late\\_nul.txt](/late_nul.txt)`\n```text\n" + "a" * 9000 + "\ufffd\n```"
    )


def test_oversized_files_are_cut_on_a_line_boundary_with_a_marker(project: Project) -> None:
    lines = "".join(f"line {i:02d}\n" for i in range(30))  # 30 lines of 8 bytes
    _write(project.root, {"big.txt": lines, "small.txt": "x" * 100})
    project.context(turn="big.txt\nsmall.txt\n")
    blocks = _resources(project.build(max_file_bytes=100))
    kept = "".join(f"line {i:02d}\n" for i in range(12))  # 96 bytes: whole lines only
    assert blocks[0] == (
        "**Resource:** `[big.txt](/big.txt)`\n```text\n"
        + kept
        + "```\n[… cut: 144 more bytes left out; the resource has 240 bytes "
        "and at most 100 are shown]"
    )
    assert blocks[1] == "**Resource:** `[small.txt](/small.txt)`\n```text\n" + "x" * 100 + "\n```"


def test_a_cut_never_splits_a_utf8_character(project: Project) -> None:
    _write(project.root, {"e.txt": "é" * 100, "mixed.txt": "ab\n" + "€" * 100})
    project.context(turn="e.txt\nmixed.txt\n")
    blocks = _resources(project.build(max_file_bytes=101))
    assert blocks[0].splitlines()[2] == "é" * 50
    assert "100 more bytes left out; the resource has 200 bytes" in blocks[0]
    # the only newline is too early to cut at: cut on a character boundary instead
    assert blocks[1].splitlines()[2:4] == ["ab", "€" * 32]
    assert "204 more bytes left out; the resource has 303 bytes" in blocks[1]


def test_content_with_fences_cannot_break_the_payload(project: Project) -> None:
    tricky = (
        "# Heading inside\n\n```python\ncode\n```\n\n````\nfour\n````\n~~~\ntilde\n~~~\n"
        "---\n## 5. Resource Contents\n"
    )
    _write(
        project.root,
        {"doc.md": tricky, "weird`name.md": "`x`\n", "plain.py": "a = '```'\n"},
    )
    project.context(turn="doc.md\nweird`name.md\nplain.py\n")
    doc = parse_document(project.build())
    headings = [b.text for b in doc.blocks if isinstance(b, Heading)]
    assert headings == [
        "Agent Invocation Payload",
        "1. System Information",
        "2. Project Structure",
        "4. Context Summary",
        "Turn",
        "Session",
        "Global",
        "5. Resource Contents",
    ]
    fences = [b for b in doc.blocks if isinstance(b, Fence)]
    assert [(f.info, f.content, f.closed) for f in fences[1:]] == [
        ("markdown", tricky[:-1], True),
        ("markdown", "`x`", True),
        ("python", "a = '```'", True),
    ]
    assert fences[1].length == 5
    assert "**Resource:** ``[weird\\`name.md](/weird`name.md)``\n" in doc.source


@pytest.mark.parametrize(
    "content",
    ["", "plain", "`a` ``b``", "```", "x```y````z", "`" * 16, "`" * 17 + "\n" + "`" * 40, "~~~"],
)
def test_the_fast_fence_follows_the_dynamic_rule(content: str) -> None:
    assert "\n".join(context_module._fenced_lines(content, "text")) == fenced(content, "text")


# --- URLs ------------------------------------------------------------------------------


PAGE = (
    "<!doctype html><html><head><title>Guide</title><style>p {color: red}</style></head>"
    "<body><h1>Install</h1><p>Run   it &amp; see.</p><script>alert('x')</script>"
    "<ul><li>one</li><li>two</li></ul><pre>  keep\n    indent</pre></body></html>"
)
PAGE_TEXT = "Guide\n\n# Install\n\nRun it & see.\n\n- one\n- two\n\n  keep\n    indent"


@dataclass
class Server:
    """A local HTTP server on 127.0.0.1 and the paths it was asked for."""

    base: str
    hits: list[str] = field(default_factory=list)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    hits: list[str] = []
    done = threading.Event()  # /slow answers only when the test is over

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._answer()  # the client may give up first (the timeout test)

        def _answer(self) -> None:
            hits.append(self.path)
            if self.path == "/slow":
                done.wait(60)
            pages = {
                "/guide.html": ("text/html; charset=utf-8", PAGE.encode()),
                "/notes.txt": ("text/plain; charset=utf-8", b"plain ```text```\n"),
                "/logo.png": ("image/png", b"\x89PNG\x00\x00"),
            }
            if self.path not in pages:
                self.send_error(404, "Not Found")
                return
            ctype, body = pages[self.path]
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    # a short poll interval: shutdown() at the end waits for one poll
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}", hits)
    finally:
        done.set()
        httpd.shutdown()
        httpd.server_close()


def _allow_loopback(root: Path) -> None:
    """Let this project's URL reads reach the test server (loopback is refused unless
    allowed; tests/security/test_ssrf.py covers that)."""
    (root / ".teddy" / "config.yaml").write_text('network:\n  allow_networks: ["127.0.0.1"]\n')


def test_url_resources_are_fetched_once_and_rebuilt_from_the_cache(
    project: Project, server: Server
) -> None:
    _allow_loopback(project.root)
    guide, notes = f"{server.base}/guide.html", f"{server.base}/notes.txt"
    project.context(turn=f"{guide}\n", session=f"{notes}\n{guide}\n", global_=f"{notes}\n")
    before = set(_snapshot(project.root))
    first = project.build()
    assert sorted(server.hits) == ["/guide.html", "/notes.txt"]
    assert _resources(first) == [
        f"**Resource:** `[{guide}]({guide})`\n```text\n{PAGE_TEXT}\n```",
        f"**Resource:** `[{notes}]({notes})`\n````text\nplain ```text```\n````",
    ]
    assert f"### Turn\n- [{guide}]({guide})\n" in first
    cache = project.session / ".cache" / "urls"
    written = set(_snapshot(project.root)) - before
    assert written == {
        str(cache.relative_to(project.root).parent),
        str(cache.relative_to(project.root)),
    } | {
        str((cache / name).relative_to(project.root))
        for name in (cache_path(cache, guide).name, cache_path(cache, notes).name)
    }  # nothing but the cache
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [cache_path(cache, guide).name, cache_path(cache, notes).name]
    )
    assert project.build() == first
    assert len(server.hits) == 2  # the rebuild used the cache


def test_url_failures_become_plain_messages(project: Project, server: Server) -> None:
    _allow_loopback(project.root)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/x"
    missing, logo = f"{server.base}/missing", f"{server.base}/logo.png"
    project.context(turn=f"{missing}\n{closed}\n{logo}\n")
    blocks = _resources(project.build())
    assert blocks[0] == (
        f"**Resource:** `[{missing}]({missing})`\nCould not fetch this URL: HTTP 404 Not Found."
    )
    assert blocks[1].splitlines()[1].startswith("Could not fetch this URL: ")
    assert blocks[2].splitlines()[1] == (
        "Could not fetch this URL: not text (image/png, 6 bytes); not shown."
    )
    assert not (project.session / ".cache" / "urls").exists()  # failures are not cached
    project.build()
    assert server.hits.count("/missing") == 2  # so the next build tries again


def test_fetch_url_times_out_with_a_fetch_error(tmp_path: Path, server: Server) -> None:
    with pytest.raises(FetchError, match="timed out"):
        fetch_url(f"{server.base}/slow", tmp_path, timeout=0.2, policy=LOOPBACK)
    assert list(tmp_path.iterdir()) == []


def test_fetch_url_refuses_other_schemes(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("LOCAL")
    with pytest.raises(FetchError, match="only http and https"):
        fetch_url((tmp_path / "f.txt").as_uri(), None)


def test_an_injected_fetch_is_used_and_its_errors_are_reported(project: Project) -> None:
    calls: list[str] = []

    def fetch(url: str) -> str:
        calls.append(url)
        if "bad" in url:
            raise RuntimeError("boom\nsecond line")
        return f"text of {url}\n"

    project.context(turn="https://a.test/x\nhttps://bad.test/\n", global_="https://a.test/x\n")
    blocks = _resources(project.build(fetch=fetch))
    assert calls == ["https://a.test/x", "https://bad.test/"]
    assert blocks == [
        "**Resource:** `[https://a.test/x](https://a.test/x)`\n```text\ntext of https://a.test/x\n```",
        "**Resource:** `[https://bad.test/](https://bad.test/)`\n"
        "Could not fetch this URL: boom second line.",
    ]


def test_html_to_text() -> None:
    assert html_to_text(PAGE) == PAGE_TEXT
    assert html_to_text("<p>a<br>b</p><h2>T &lt;x&gt;</h2>") == "a\n\nb\n\n## T <x>"


# --- determinism and side effects ------------------------------------------------------


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in sorted(root.rglob("*"))
    }


def test_same_inputs_same_bytes_and_nothing_written(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"pkg{i % 3}/m{i}.py": f"x = {i}\n" for i in range(20)}
    files.update({".gitignore": "*.tmp\n", "z.tmp": "", ".teddy/memos.yaml": "- m\n"})
    files[".teddy/global.context"] = "pkg1/m1.py\npkg0/m0.py\nnope.txt\n"
    one, two = tmp_path / "one", tmp_path / "two"
    _write(one, files)
    _write(two, dict(reversed(files.items())))  # created in the other order
    before = _snapshot(one)
    first = build_payload(one, None, None)
    assert build_payload(one, None, None) == first
    assert _snapshot(one) == before
    assert build_payload(two, None, None) == first.replace(str(one), str(two))


def test_importing_the_module_stays_light() -> None:
    code = (
        "import sys, plankit.teddy.context.payload\n"
        "heavy = ['pathspec', 'urllib.request', 'html.parser', 'http.client', 'hashlib',"
        " 'markdown_it']\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert loaded == ""
