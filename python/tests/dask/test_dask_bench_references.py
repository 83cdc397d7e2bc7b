"""The references `depot bench dask` measures depot.dask against on case (a): the leaves-only ceiling and the
static schedule compute what they should, in processes of their own, and leave nothing in the store."""

import importlib
import os
import sys
import types

import pytest

pytest.importorskip("dask")
pytest.importorskip("numpy")

BENCH_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "depot-bench", "src", "main", "resources",
                         "dev", "depot", "bench")
#: the driver's modules beside it, by the name after ``dask_bench_``
MODULES = ("cases", "graphs", "measure", "parts", "references", "schedulers")


@pytest.fixture(scope="module")
def bench():
    """The driver's modules, imported from beside it: ``bench.graphs`` is dask_bench_graphs, and so on."""
    sys.path.insert(0, os.path.abspath(BENCH_DIR))
    try:
        import dask_bench  # noqa: F401 (the driver imports all its modules)
        yield types.SimpleNamespace(**{name: importlib.import_module("dask_bench_" + name) for name in MODULES})
    finally:
        sys.path.remove(os.path.abspath(BENCH_DIR))


def test_static_schedule_computes_the_pipeline_and_cleans_up(bench, client):
    import dask
    tasks, loops, n = 8, 200, 1024
    expected = dask.compute(bench.graphs.pipeline(tasks, loops, n), scheduler="sync")[0]
    static = bench.references.StaticSchedule(client.directory, tasks, loops, n)
    try:
        assert static._run(loops)[1] == expected
        assert "static" in static.round()
        figures = static.figures(threads_wall=2 * static.best, depot_speedup=1.0)
        assert figures["static_schedule_speedup_vs_threads"] == 2.0
        assert figures["fraction_of_static_schedule"] == 0.5
        pids = [p._pool[0].pid for p in static._pools]
        assert len(set(pids)) == 2 and os.getpid() not in pids
    finally:
        static.close()
    assert client.list() == []


def test_ceiling_measures_both_cpus(bench):
    ceiling = bench.references.TwoProcessCeiling(4, 200, 16)
    try:
        assert "limit" in ceiling.round()
        assert ceiling.best > 0 and ceiling.limit > 0 and len(ceiling.per_task) == 2
    finally:
        ceiling.close()


def test_the_bench_environment_scripts_name_the_final_directory(bench, tmp_path):
    import dask_bench_env
    tmp, final = tmp_path / ".bench-venv-abc", tmp_path / "bench-venv-final"
    (tmp / "bin").mkdir(parents=True)
    (tmp / "bin" / "pip").write_text("#!%s/bin/python\nimport pip\n" % tmp)
    (tmp / "bin" / "activate").write_text("VIRTUAL_ENV='%s'\n" % tmp)
    interpreter = b"\x7fELF\0" + str(tmp).encode()
    (tmp / "bin" / "python3.11").write_bytes(interpreter)
    (tmp / "bin" / "python").symlink_to("python3.11")
    dask_bench_env.rename_scripts(str(tmp), str(final))
    assert (tmp / "bin" / "pip").read_text() == "#!%s/bin/python\nimport pip\n" % final
    assert (tmp / "bin" / "activate").read_text() == "VIRTUAL_ENV='%s'\n" % final
    assert (tmp / "bin" / "python3.11").read_bytes() == interpreter  # binaries are left alone
    assert (tmp / "bin" / "python").is_symlink()


def test_a_memory_sample_taken_across_a_change_of_phase_counts_for_neither_phase(bench):
    import threading
    import time
    entered = threading.Event()
    release = threading.Event()
    reads = []

    class SlowMeasure(bench.measure.Measure):
        """Its first sample's read blocks until the test has begun the next phase; later reads are quick."""

        def _settled_pss(self, pids):
            reads.append(self._phase)
            if len(reads) == 1:
                entered.set()
                release.wait(10)
                return 10 << 30  # what the processes held while both phases' memory existed
            return 1 << 20

    with SlowMeasure([]) as m:
        m.phase("share")
        assert entered.wait(10)
        m.phase("tasks")  # while the sample begun in "share" is still reading
        release.set()
        deadline = time.monotonic() + 10
        while len(reads) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert m.peak == 10 << 30  # the whole run's peak still counts it
    assert m.phases["share"] == 0 and m.phases["tasks"] == 1 << 20


def test_a_memory_sample_is_not_kept_when_pages_changed_hands_while_it_was_read(bench, monkeypatch):
    import types
    mib = 1 << 20
    # the caller alone maps a 1 GiB object, then two workers map it while the sample reads them one by one: the
    # caller read first still holds all of it, the workers read later a third each
    reads = {1: [1024 * mib, 341 * mib], 2: [341 * mib, 341 * mib], 3: [341 * mib, 341 * mib]}
    fake = types.SimpleNamespace(pss_bytes=lambda pid: reads[pid].pop(0))
    monkeypatch.setattr(bench.measure, "procfs_module", lambda: fake)
    m = bench.measure.Measure([], sample=False)
    assert m._settled_pss([1, 2, 3]) is None
    # small drops (tasks freeing their results as they go) keep the sample
    reads = {1: [500 * mib, 492 * mib], 2: [100 * mib, 100 * mib]}
    assert m._settled_pss([1, 2]) == 600 * mib


def test_measure_interleaved_alternates_the_order_and_pairs_each_rounds_walls(bench, monkeypatch):
    import dask
    ran = []
    monkeypatch.setattr(bench.measure, "_warm_up", lambda graph, scheduler, warm_graph: None)

    def scheduler_named(name):
        def get(dsk, keys, **kwargs):
            ran.append(name)
            return dask.get(dsk, keys)
        return get

    graph = dask.delayed(sum)([1, 2])
    runs, walls = bench.measure.measure_interleaved(graph, {"a": scheduler_named("a"), "b": scheduler_named("b")},
                                                 [], 3)
    assert ran[:6] == ["a", "b", "b", "a", "a", "b"]  # then one sampled run of each, for the peak memory
    assert [len(walls[name]) for name in "ab"] == [3, 3]
    assert runs["a"][0].wall == min(walls["a"])
    assert bench.measure.median_of_rounds([2.0, 3.0, 9.0], [1.0, 2.0, 3.0]) == 2.0  # 2, 1.5, 3


def _fake_python(path, body):
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_the_bench_environment_is_built_on_the_system_python_of_the_same_version(bench, tmp_path,
                                                                                  monkeypatch):
    import dask_bench_env
    monkeypatch.delenv(dask_bench_env.BASE_PYTHON_NAME, raising=False)
    same = _fake_python(tmp_path / "same", 'exec "%s" "$@"' % sys.executable)
    monkeypatch.setattr(dask_bench_env, "SYSTEM_PYTHON", same)
    assert dask_bench_env.base_python() == same

    other = _fake_python(tmp_path / "other", "echo 2.7")
    monkeypatch.setattr(dask_bench_env, "SYSTEM_PYTHON", other)
    assert dask_bench_env.base_python() == sys.executable

    monkeypatch.setattr(dask_bench_env, "SYSTEM_PYTHON", str(tmp_path / "missing"))
    assert dask_bench_env.base_python() == sys.executable

    monkeypatch.setattr(dask_bench_env, "SYSTEM_PYTHON", same)
    monkeypatch.setenv(dask_bench_env.BASE_PYTHON_NAME, "/opt/python/bin/python3")
    assert dask_bench_env.base_python() == "/opt/python/bin/python3"
    assert dask_bench_env.install_command(same).startswith(same + " -m venv ")


def test_the_figures_name_the_interpreter_build(bench):
    import dask
    described = bench.cases.interpreter_description()
    assert described.startswith(sys.executable)
    assert os.path.realpath(sys.executable) in described and dask.__version__ in described


def test_the_local_cluster_baseline_forgets_each_compute_before_the_next(bench):
    """A LocalCluster releases a compute's results a moment after returning them: the next timed compute of the
    same keys must not find them still held."""
    pytest.importorskip("distributed")
    import dask
    g = bench.graphs.pipeline(4, 100, 16)
    expected = dask.compute(g, scheduler="sync")[0]
    with bench.schedulers.local_cluster() as get:
        for _ in range(2):
            assert dask.compute(g, scheduler=get)[0] == expected
            get.settle()
            assert get._client.run_on_scheduler(bench.schedulers._scheduler_task_count) == 0


def test_rounds_in_blocks_merge_into_one_measurement(bench):
    import types
    assert bench.parts._blocks(7, 3) == [3, 2, 2]
    assert bench.parts._blocks(2, 3) == [1, 1]
    assert bench.parts._blocks(1, 3) == [1]

    def m(wall, peak):
        return types.SimpleNamespace(wall=wall, peak=peak)

    first = ({"depot": (m(0.7, 0), m(0.8, 10))}, {"depot": [0.7, 0.9]})
    second = ({"depot": (m(0.6, 0), m(0.8, 5)), "local_cluster": (m(1.0, 0), m(1.1, 3))},
              {"depot": [0.6], "local_cluster": [1.0]})
    runs, walls = bench.parts.merge_blocks([first, second])
    assert runs["depot"][0].wall == 0.6 and runs["depot"][1].peak == 10
    assert runs["local_cluster"][0].wall == 1.0
    assert walls == {"depot": [0.7, 0.9, 0.6], "local_cluster": [1.0]}


def _imported_beside(path):
    """The modules ``path`` imports (anywhere in it) that are files beside it."""
    import ast
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return {n for n in names if os.path.isfile(os.path.join(os.path.dirname(path), n + ".py"))}


def test_the_benchmark_copies_every_module_the_driver_imports_beside_it():
    """`depot bench dask` copies a fixed list of resources beside the driver (``DaskBench.RESOURCES``): every
    module the driver imports from beside it, and those they import, is on it."""
    java = os.path.join(BENCH_DIR, "..", "..", "..", "..", "java", "dev", "depot", "bench", "DaskBench.java")
    with open(java, encoding="utf-8") as f:
        source = f.read()
    seen, todo = set(), ["dask_bench"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_imported_beside(os.path.join(BENCH_DIR, name + ".py")))
    assert {"dask_bench_cases", "dask_bench_measure", "procfs"} <= seen
    missing = sorted(n + ".py" for n in seen if '"%s.py"' % n not in source)
    assert not missing, "DaskBench.RESOURCES lacks " + ", ".join(missing)
