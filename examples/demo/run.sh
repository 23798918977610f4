#!/usr/bin/env bash
# The TeDDy demo: a two-turn session on a scratch copy of examples/demo/project.
# Turn 01 READs the module; turn 02 EDITs it, CREATEs a module and a test, and
# EXECUTEs the tests. Prints each report and the files that changed.
# Uses `teddy` from PATH (or $TEDDY); the scratch copy goes to $DEMO_DIR (build/demo).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
teddy="${TEDDY:-teddy}"
demo="${DEMO_DIR:-$here/../../build/demo}"

rm -rf "$demo"
mkdir -p "$(dirname "$demo")"
cp -R "$here/project" "$demo"
cd "$demo"

session="$("$teddy" new greetings-demo)"
echo "== session: ${session#"$PWD"/}"

cp "$here/turn-01.md" "$session/01/plan.md"
"$teddy" execute -y
"$teddy" context >/dev/null
echo "== turn 02 context:" && sed 's/^/   /' "$session/02/turn.context"

cp "$here/turn-02.md" "$session/02/plan.md"
"$teddy" execute -y

echo
echo "== files changed in the project"
diff -ru --exclude=.teddy --exclude=__pycache__ "$here/project" . || true
echo
echo "== $session/02/report.md" | sed "s|$PWD/||"
cat "$session/02/report.md"
