"""Rewrite the mutation table and survivor list of docs/testing.md from docs/mutation/*.json.

Usage (from the project root)::

    python3 tools/mutation_table.py           # rewrite docs/testing.md
    python3 tools/mutation_table.py --check   # exit 1 if it is not what the records say
    python3 tools/mutation_table.py --stale   # list records whose module changed since

Each record is written by ``tools/mutate.py --record``: the module, the tests run, the
number of mutants and of killed ones, and the survivors by name.  Its ``why`` list is
written by hand: entries ``{"mutants": [...], "kind": "equivalent" | "not killed",
"reason": "..."}`` that say, for every survivor, why no test kills it.  A survivor
without a reason is an error: the table is not rewritten until each has one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "docs" / "mutation"
DOC = ROOT / "docs" / "testing.md"
KINDS = ("equivalent", "not killed")
TABLE = ("<!-- mutation-table: start -->", "<!-- mutation-table: end -->")
SURVIVORS = ("<!-- mutation-survivors: start -->", "<!-- mutation-survivors: end -->")


class RecordError(Exception):
    """A record that cannot be rendered; the message names the file and the fix."""


def load(folder: Path = RECORDS) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as error:
            raise RecordError(f"{path.name}: not readable JSON ({error})") from None
        for key in ("module", "tests", "mutants", "killed", "survivors", "why"):
            if key not in data:
                raise RecordError(f"{path.name}: no {key!r}; run tools/mutate.py --record again")
        if data["mutants"] - data["killed"] != len(data["survivors"]):
            raise RecordError(f"{path.name}: mutants - killed is not the number of survivors")
        explained: dict[str, str] = {}
        for entry in data["why"]:
            if entry.get("kind") not in KINDS or not str(entry.get("reason", "")).strip():
                raise RecordError(
                    f"{path.name}: a 'why' entry needs a kind ({' or '.join(KINDS)}) and a reason"
                )
            for name in entry.get("mutants", []):
                if name not in data["survivors"]:
                    raise RecordError(f"{path.name}: {name} in 'why' is not a survivor")
                explained[name] = entry["kind"]
        missing = [s for s in data["survivors"] if s not in explained]
        if missing:
            raise RecordError(
                f"{path.name}: no reason given for {', '.join(missing)}; add them to 'why'"
            )
        data["_kinds"] = explained
        records.append(data)
    return records


def _rate(data: dict) -> str:
    if not data["mutants"]:
        return "100%"
    rate = 100.0 * data["killed"] / data["mutants"]
    return "100%" if data["killed"] == data["mutants"] else f"{rate:.1f}%"


def _score(data: dict, equivalent: int) -> str:
    """The mutation score: killed mutants over those that are not equivalent."""
    counted = data["mutants"] - equivalent
    if data["killed"] >= counted:
        return "100%"
    return f"{100.0 * data['killed'] / counted:.1f}%"


def table(records: list[dict]) -> str:
    lines = [
        "| module | mutants | killed | kill rate | equivalent | not killed | score | tests |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data in records:
        kinds = list(data["_kinds"].values())
        equivalent = kinds.count("equivalent")
        tests = ", ".join(f"`{t.removeprefix('tests/')}`" for t in data["tests"])
        lines.append(
            f"| `{data['module']}` | {data['mutants']} | {data['killed']} | {_rate(data)} "
            f"| {equivalent} | {kinds.count('not killed')} | {_score(data, equivalent)} | {tests} |"
        )
    return "\n".join(lines)


def survivors(records: list[dict]) -> str:
    blocks = []
    for data in records:
        if not data["why"]:
            continue
        lines = [f"`{data['module']}`", ""]
        for entry in data["why"]:
            names = ", ".join(f"`{m}`" for m in entry["mutants"])
            note = " (not killed)" if entry["kind"] == "not killed" else ""
            lines.append(f"- {names}{note}: {entry['reason'].strip()}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "No survivors."


def _between(text: str, marks: tuple[str, str], body: str) -> str:
    start, end = marks
    if start not in text or end not in text:
        raise RecordError(f"{DOC.name}: the markers {start} and {end} are missing")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def render(text: str, records: list[dict]) -> str:
    text = _between(text, TABLE, table(records))
    return _between(text, SURVIVORS, survivors(records))


def stale(records: list[dict]) -> list[str]:
    out = []
    for data in records:
        source = ROOT / "src" / Path(*data["module"].split(".")).with_suffix(".py")
        digest = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else None
        if digest != data.get("source_sha256"):
            out.append(data["module"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/mutation_table.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/testing.md is stale")
    parser.add_argument("--stale", action="store_true", help="list modules changed since measured")
    args = parser.parse_args(argv)
    try:
        records = load()
        text = DOC.read_text("utf-8")
        new = render(text, records)
    except RecordError as error:
        print(f"tools/mutation_table.py: {error}", file=sys.stderr)
        return 1
    if args.stale:
        for name in stale(records):
            print(f"{name}: changed since its mutation run; run tools/mutate.py {name} --record")
        return 0
    if args.check:
        if new != text:
            print(
                "tools/mutation_table.py: docs/testing.md does not match docs/mutation/; "
                "run python3 tools/mutation_table.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if new != text:
        DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
