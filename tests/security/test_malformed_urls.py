"""A READ of a malformed URL is a one-line validation error in `teddy execute` and
`teddy run`, never a ValueError traceback; the URL parser's checks never raise, and a
fetch of such a URL (a context file, a redirect) fails with one line too."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plankit.teddy.context.network import NetworkPolicy
from plankit.teddy.context.urls import FetchError, fetch_url, url_problem
from tests.security.helpers import TEDDY, plan, start_session, teddy

MALFORMED = {
    "http://x[/": "not a valid URL (Invalid IPv6 URL)",
    "http://[::1%25lo]/": "an IPv6 address with a zone (%) is not fetched",
    "http://[fe80::1%eth0]:8080/": "an IPv6 address with a zone (%) is not fetched",
    "http://[::1/": "not a valid URL (Invalid IPv6 URL)",
    "http://x]/": "not a valid URL (Invalid IPv6 URL)",
    "https://[v1.x]/": "is not an IPv6 address",
    "http://[1.2.3.4]/": "not a valid URL",
    "http://example.com:99999/": "Port out of range",
    "http://example.com:0/": "port 0",
    "http://example.com:-1/": "not a valid URL",
    "http://example.com:٨٠/": "not a valid URL",
    "http:///etc/passwd": "the URL names no host",
    "http://user@:80/": "the URL names no host",
    "http://%41.example/": "a host name cannot contain %",
    "http://exa\u200bmple.com/": "host contains a space or a control character",
    "http://exa mple.com/x": "host contains a space or a control character",
}


def _read_url(url: str) -> str:
    return f"### `READ`\n- **Resource:** [the page]({url})"


@pytest.mark.parametrize("url", list(MALFORMED))
def test_url_problem_names_what_is_wrong_and_never_raises(url: str) -> None:
    problem = url_problem(url)
    assert problem is not None and MALFORMED[url] in problem
    with pytest.raises(FetchError, match="^" + "".join(f"[{c}]" for c in problem[:10])):
        fetch_url(url, None, policy=NetworkPolicy(), resolver=lambda host, port: ["8.8.8.8"])


@pytest.mark.parametrize("url", ["http://x[/", "http://[::1%25lo]/", "http://a:99999/"])
def test_teddy_execute_refuses_the_plan_in_one_line(tmp_path: Path, url: str) -> None:
    turn = start_session(tmp_path)
    (turn / "plan.md").write_text(plan(_read_url(url)))
    result = teddy(tmp_path, "execute", "-y", "--no-replan", check=1)
    assert "Traceback" not in result.stderr and "ValueError" not in result.stderr
    line = next(x for x in result.stderr.splitlines() if "url-invalid" in x)
    assert f"`READ` on `{url}`: " in line and line.endswith("; write a valid http(s) URL")
    assert "Validation Failed" in (turn / "report.md").read_text()


def test_teddy_run_refuses_the_plan_in_one_line(tmp_path: Path) -> None:
    import subprocess

    turn = start_session(tmp_path)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([plan(_read_url("http://x[/"))] * 6))
    env = {
        **os.environ,
        "TEDDY_MODEL": "teddy-scripted",
        "TEDDY_SCRIPTED_RESPONSES": str(answers),
    }
    result = subprocess.run(
        [TEDDY, "run", "-y", "-m", "read the page"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output and "ValueError" not in output
    assert "validation failed again after the re-plan attempts" in output
    report = (turn / "report.md").read_text()
    assert "`READ` on `http://x[/`: not a valid URL (Invalid IPv6 URL)" in report


@pytest.mark.parametrize("pasted", ["http://localhost[/?code=4/abc&state=s", "http://x]/?code=1"])
def test_a_malformed_sign_in_address_pasted_is_a_clear_error(pasted: str) -> None:
    from plankit.checklist.errors import StoreError
    from plankit.checklist.stores.gsheets_auth import code_from

    with pytest.raises(StoreError, match="the pasted address is not a valid URL"):
        code_from(pasted, "s")
