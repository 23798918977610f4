"""No import cycles among plankit's modules.

The graph has one edge per module-level import of a plankit module: imports inside a
function (the lazy ones that keep start-up fast) and under ``if TYPE_CHECKING:`` never
run while a module is being imported, so they cannot break an import and are left
out.  A second, stricter check counts the lazy imports too: two modules that need each
other, however late, want the shared part moved to a third module they both import.
The strictest check counts the imports under ``TYPE_CHECKING`` as well: a module that
names another's class in its annotations depends on it as surely, and a pair that does
so both ways is one concept split in two (the lower one states what it needs of the
upper as a ``Protocol`` instead).
``from package import name`` is an edge to ``package.name`` when that is a module, else
to ``package``.  Importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``,
but a package that is already being initialised is found half-made in ``sys.modules``
rather than re-entered, so only the module named is an edge.

A cycle is reported as the path of module names that closes it, and fails.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "plankit"


def module_names(src: Path = SRC, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of ``package`` under ``src``: dotted name → file."""
    found: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(
    body: list[ast.stmt], *, lazy: bool, typing: bool = False
) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when a module with ``body`` is imported, and with
    ``lazy`` also those inside its functions, with ``typing`` those under
    ``TYPE_CHECKING``."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if lazy:
                yield from _imports(node.body, lazy=lazy, typing=typing)
        elif isinstance(node, ast.If):
            if typing or not _is_type_checking(node.test):
                yield from _imports(node.body, lazy=lazy, typing=typing)
            yield from _imports(node.orelse, lazy=lazy, typing=typing)
        elif isinstance(node, ast.Try | ast.TryStar):
            yield from _imports(node.body, lazy=lazy, typing=typing)
            for handler in node.handlers:
                yield from _imports(handler.body, lazy=lazy, typing=typing)
            yield from _imports(node.orelse, lazy=lazy, typing=typing)
            yield from _imports(node.finalbody, lazy=lazy, typing=typing)
        elif isinstance(node, ast.With | ast.AsyncWith | ast.ClassDef):
            yield from _imports(node.body, lazy=lazy, typing=typing)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While):
            yield from _imports(node.body, lazy=lazy, typing=typing)
            yield from _imports(node.orelse, lazy=lazy, typing=typing)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                yield from _imports(case.body, lazy=lazy, typing=typing)


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` in module ``name`` reads from."""
    if node.level == 0:
        return node.module or ""
    base = name.split(".")
    if not is_package:
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_graph(
    modules: Mapping[str, Path], *, lazy: bool = False, typing: bool = False
) -> dict[str, set[str]]:
    """Module → the plankit modules it imports at module level (``lazy``: or anywhere
    outside ``TYPE_CHECKING``, functions included; ``typing``: and under it too)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree.body, lazy=lazy, typing=typing):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in modules)
                continue
            source = _absolute(node, name, path.name == "__init__.py")
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    edges.add(submodule)
                elif source in modules:
                    edges.add(source)
        graph[name] = edges
    return graph


def _components(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative), in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _shortest_cycle(graph: Mapping[str, set[str]], members: list[str]) -> list[str]:
    """The shortest cycle through the first of ``members`` (a component), as a path."""
    start = members[0]
    inside = set(members)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node] & inside):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    return [start, start]  # pragma: no cover - a component always closes


def find_cycles(graph: Mapping[str, set[str]]) -> list[tuple[frozenset[str], list[str]]]:
    """Every import cycle: (the modules of its component, one closing path through them)."""
    cycles = []
    for members in _components(graph):
        if len(members) > 1 or members[0] in graph[members[0]]:
            cycles.append((frozenset(members), _shortest_cycle(graph, members)))
    return cycles


def _describe(members: frozenset[str], path: list[str]) -> str:
    text = " -> ".join(path)
    others = sorted(members - set(path))
    return text + (f" (with {', '.join(others)})" if others else "")


def _described(cycles: list[tuple[frozenset[str], list[str]]]) -> list[str]:
    return [_describe(members, path) for members, path in cycles]


def test_plankit_has_no_import_cycles() -> None:
    unexpected = _described(find_cycles(import_graph(module_names())))
    assert not unexpected, "import cycles (module-level imports):\n" + "\n".join(unexpected)


def test_lazy_imports_close_no_cycle_either() -> None:
    """A lazy import keeps start-up fast; it is not a way for two modules to need each
    other (what both need belongs in a third module they both import)."""
    unexpected = _described(find_cycles(import_graph(module_names(), lazy=True)))
    assert not unexpected, "import cycles (counting imports inside functions):\n" + "\n".join(
        unexpected
    )


def test_no_two_modules_name_each_other_even_in_annotations() -> None:
    unexpected = _described(find_cycles(import_graph(module_names(), lazy=True, typing=True)))
    assert not unexpected, "import cycles (counting TYPE_CHECKING imports):\n" + "\n".join(
        unexpected
    )


# --- the finder itself -------------------------------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for relative, text in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return module_names(root, "pkg")


def test_finder_names_a_cycle_through_module_level_imports(tmp_path: Path) -> None:
    modules = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg.b import thing\n",
            "b.py": "import pkg.c\n",
            "c.py": "from . import a\n",
            "d.py": "from pkg import a\n",
        },
    )
    cycles = find_cycles(import_graph(modules))
    assert [path for _members, path in cycles] == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    assert _describe(*cycles[0]) == "pkg.a -> pkg.b -> pkg.c -> pkg.a"


def test_finder_ignores_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    modules = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg import a\n"
                "def later():\n    from pkg import a\n"
                "class K:\n    def m(self):\n        import pkg.a\n"
            ),
        },
    )
    assert find_cycles(import_graph(modules)) == []
    lazy = find_cycles(import_graph(modules, lazy=True))
    assert [path for _members, path in lazy] == [["pkg.a", "pkg.b", "pkg.a"]]
    only_typing = _write(
        tmp_path / "typed",
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.a import A\n",
        },
    )
    assert find_cycles(import_graph(only_typing, lazy=True)) == []
    typed = find_cycles(import_graph(only_typing, lazy=True, typing=True))
    assert [path for _members, path in typed] == [["pkg.a", "pkg.b", "pkg.a"]]


def test_finder_sees_imports_in_branches_and_relative_parents(tmp_path: Path) -> None:
    modules = _write(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "from .x import X\n",
            "sub/x.py": "try:\n    from ..top import T\nexcept ImportError:\n    T = None\n",
            "top.py": "import typing\nif not typing.TYPE_CHECKING:\n    from pkg.sub import X\n",
        },
    )
    cycles = find_cycles(import_graph(modules))
    assert [path for _members, path in cycles] == [["pkg.sub", "pkg.sub.x", "pkg.top", "pkg.sub"]]


def test_finder_reports_a_module_importing_itself(tmp_path: Path) -> None:
    modules = _write(tmp_path, {"__init__.py": "", "a.py": "import pkg.a\n"})
    assert [path for _members, path in find_cycles(import_graph(modules))] == [["pkg.a", "pkg.a"]]
