"""The modules of the ``depot`` package import each other without cycles: the graph of their imports, read with
``ast`` (imports inside functions too: a lazy import hides a cycle, it does not break it), is acyclic."""

import ast
import os

import depot

PACKAGE_DIR = os.path.dirname(os.path.abspath(depot.__file__))


def _modules():
    """Every module of the package: dotted name -> (path, is a package's ``__init__``)."""
    modules = {}
    root = os.path.dirname(PACKAGE_DIR)
    for folder, _, files in os.walk(PACKAGE_DIR):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, root)[:-len(".py")].replace(os.sep, ".")
                is_package = f == "__init__.py"
                modules[name[:-len(".__init__")] if is_package else name] = (path, is_package)
    return modules


#: modules of the package that are not Python source: the compiled extension, which imports nothing of it
COMPILED = {"depot._native"}


def _owner(name, modules):
    """The module ``name`` is, or is in (``depot.client.Client`` -> ``depot.client``)."""
    if name in COMPILED:
        return None
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph():
    """Module -> the set of the package's modules it imports."""
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        base = name if is_package else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                deps.update(_owner(a.name, modules) for a in node.names if a.name.split(".")[0] == "depot")
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    target = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                elif node.module.split(".")[0] == "depot":
                    target = node.module
                else:
                    continue
                for a in node.names:
                    sub = target + "." + a.name  # ``from . import _wire`` imports a module
                    if sub not in COMPILED:
                        deps.add(sub if sub in modules else _owner(target, modules))
        deps.discard(None)
        deps.discard(name)
        graph[name] = deps
    return graph


def find_cycle(graph):
    """A list of modules that import each other in a circle (the first one repeated at the end), or None."""
    state = {}  # absent: unvisited; 1: on the current path; 2: done
    path = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_sees_the_package_and_its_imports():
    graph = import_graph()
    assert "depot.client" in graph and "depot.daemon" in graph and "depot.dask.scheduler" in graph
    assert "depot.daemon" in graph["depot.client"]
    assert "depot._wire" in graph["depot.client"]  # ``from . import _wire as w``


def test_find_cycle_reports_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_depot_modules_import_each_other_without_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
