"""The examples of docs/PYTHON.md, taken from the guide itself.

The guide's blocks that work on objects run as written, each with an open ``client`` and an ``oid`` as the
guide's text supplies them. The others show how to start and address stores (they would start daemons on fixed
paths) or loop forever on a subscription: those are compiled, and the names they use are checked to exist.
"""

import ast
import importlib
import importlib.util
import os
import re

import pytest

import depot

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "PYTHON.md")

#: the guide's Python blocks, in order: True runs as written, False is compiled and its names checked
RUNS = [False, False, False, True, True, True, True, True, False]


def _blocks():
    if not os.path.isfile(DOC):
        pytest.skip("docs/PYTHON.md is not beside the tests (installed without the checkout)")
    with open(DOC) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def test_each_block_is_known_to_this_test():
    assert len(_blocks()) == len(RUNS), "a block was added to or removed from PYTHON.md: say whether it runs"


def test_the_guide_runs(daemon, monkeypatch):
    monkeypatch.setenv("DEPOT_DIR", daemon.dir)
    blocks = _blocks()
    for number, (code, runs) in enumerate(zip(blocks, RUNS), 1):
        if not runs:
            continue
        needs = [m for m in ("numpy", "pandas") if m in code or (m == "numpy" and "np." in code)]
        if any(importlib.util.find_spec(m) is None for m in needs):
            continue  # the environments that have them run it
        code = code.replace("10_000_000", "100_000")  # the same frame, small enough for the test's store
        np = importlib.import_module("numpy") if needs else None
        with depot.connect() as client:
            a, b, c = (depot.ObjectId.of(n) for n in "abc")
            client.put(a, b"a")
            client.put(c, b"c")  # b is missing: get_many's None
            scope = {"depot": depot, "client": client, "oid": depot.ObjectId.random(), "np": np,
                     "a": a, "b": b, "c": c}
            try:
                exec(compile(code, "PYTHON.md block %d" % number, "exec"), scope)
            finally:
                for name in ("view", "weights", "frame", "views"):
                    scope.pop(name, None)
            for oid in (a, c, depot.ObjectId.of("greeting"), depot.ObjectId.of("weights"),
                        depot.ObjectId.of("frame")):
                if client.contains(oid):
                    client.delete(oid)


class _Names(ast.NodeVisitor):
    """The ``depot.X`` and ``depot.X.Y`` names a block uses."""

    def __init__(self):
        self.found = set()

    def visit_Attribute(self, node):
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id == "depot":
            self.found.add(".".join(reversed(chain)))
        self.generic_visit(node)


def test_the_blocks_that_do_not_run_compile_and_name_real_api():
    blocks = _blocks()
    for number, (code, runs) in enumerate(zip(blocks, RUNS), 1):
        if runs:
            continue
        tree = ast.parse(code, "PYTHON.md block %d" % number)
        names = _Names()
        names.visit(tree)
        for dotted in names.found:
            target = depot
            for part in dotted.split("."):
                assert hasattr(target, part), "PYTHON.md block %d uses depot.%s, which does not exist" % (
                    number, dotted)
                target = getattr(target, part)
    assert callable(depot.Client.subscribe)  # the last block's subscription
