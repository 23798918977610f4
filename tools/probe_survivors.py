"""Look for answers that tell a surviving mutant from the code: corpus answers read
the ways a chat gives them.

Usage (from the project root, after ``tools/mutate.py MODULE`` has left its mutants
under ``.mutation/``)::

    .venv/bin/python tools/probe_survivors.py plankit.teddy.format.answer [MUTANT ...]

Without MUTANT names, the module's survivors marked *not killed* in
``docs/mutation/MODULE.json`` are probed.  Each hand-written answer of
``tests/data/answers`` is read through :func:`plankit.teddy.format.answer.answer_to_plan`
as it is, wrapped in four kinds of fence, cut off at every line of its second half (a
model stopped by its length limit) and followed by the remarks models add; the same
inputs are then read under each mutant (mutmut's own copy of ``src/``, one process per
mutant).  For every mutant the script prints how many inputs it reads differently and
how the first few were made, so that one of them can become a test a user would
recognise, or show that the mutant reads it better.

Only modules on the road from an answer to a plan (``plankit.teddy.format``) can be
told apart this way.  Exit status: 0 when it ran, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "answers"
WRAPPERS = (("```markdown\n", "```\n"), ("````markdown\n", "````\n"), ("```\n", "```\n"))
WRAPPERS += (("~~~markdown\n", "~~~\n"),)
AFTER = (
    "",
    "\nLet me know if you want changes.\n",
    "Let me know if you want changes.\n",
    "\n```\n",
    "```\n",
    "  \n\nDone.\n",
    "\n```shell\npytest -q\n```\n",
)
_FENCED = re.compile(r"(`{3,}|~{3,})")


def inputs(name: str, answer: str) -> dict[str, str]:
    """The ways a chat gives ``answer`` (the corpus file ``name``), by how each was made."""
    answer = answer if answer.endswith("\n") else answer + "\n"
    bodies = {name: answer} if _FENCED.match(answer.lstrip()) else {}
    for opener, closer in WRAPPERS if not bodies else ():
        bodies[f"{name} in {opener.strip()}"] = opener + answer + closer
    made: dict[str, str] = {}
    for label, body in bodies.items():
        for after in AFTER:
            made[f"{label}, then {after!r}"] = body + after
        lines = body.splitlines(keepends=True)
        for cut in range(len(lines) // 2, len(lines)):
            made[f"{label}, cut after line {cut}"] = "".join(lines[:cut])
    return made


_READ = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from plankit.teddy.format.answer import answer_to_plan
out = []
for text in json.load(open(sys.argv[2], encoding="utf-8")):
    try:
        seen = repr(answer_to_plan(text))
    except Exception as exc:  # a mutant may crash: that is a difference too
        seen = f"raised {type(exc).__name__}: {exc}"
    out.append(hashlib.sha256(seen.encode()).hexdigest())
json.dump(out, sys.stdout)
"""


def _read(src: Path, texts: Path, mutant: str) -> list[str]:
    env = {**os.environ, "MUTANT_UNDER_TEST": mutant}
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(src), str(texts)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(done.stdout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="a dotted module name, e.g. plankit.teddy.format.answer")
    parser.add_argument("mutants", nargs="*", help="mutant names (default: not killed ones)")
    parser.add_argument("--show", type=int, default=3, help="inputs shown per mutant")
    args = parser.parse_args(argv)
    short = args.module.removeprefix("plankit.")
    src = ROOT / ".mutation" / short / "mutants" / "src"
    if not src.is_dir():
        parser.error(f"no mutants for {args.module}: run tools/mutate.py {args.module} first")
    names = args.mutants
    if not names:
        record = json.loads((ROOT / "docs" / "mutation" / f"{args.module}.json").read_text())
        names = [m for w in record["why"] if w["kind"] == "not killed" for m in w["mutants"]]
    made: dict[str, str] = {}
    for path in sorted(CORPUS.glob("*.md")):
        made.update(inputs(path.name, path.read_text(encoding="utf-8")))
    labels, texts = list(made), list(made.values())
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(texts, handle)
    try:
        plain = _read(src, Path(handle.name), "")
        print(f"{len(texts)} inputs from {CORPUS.relative_to(ROOT)}")
        for name in names:
            seen = _read(src, Path(handle.name), f"{args.module}.{name}")
            differ = [i for i, (a, b) in enumerate(zip(plain, seen, strict=True)) if a != b]
            print(f"{name}: {len(differ)} read differently")
            for i in differ[: args.show]:
                print(f"    {labels[i]}")
    finally:
        os.unlink(handle.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
