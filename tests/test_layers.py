"""The layers of rotode point one way: its import graph has no cycle, and no module imports a
module of a higher layer (docs/architecture.md).

The graph is read from the sources, not from ``sys.modules``: every ``import`` and
``from ... import`` of a ``.py`` file wherever it stands (inside a function, under
``if TYPE_CHECKING:``: an import that runs late, or only for the type checker, still makes the
module know the other), and every ``import``, ``from ... import`` and ``cimport`` line of a
``.pyx`` or ``.pxd`` file.  A ``.pyx`` and its ``.pxd`` are one module.  ``from rotode import
quaternion`` is an edge to ``rotode.quaternion``; the import of the package ``rotode`` that
every ``import rotode.x`` implies is not an edge.
"""
import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rotode"

#: The layers, lowest first, by module name under ``rotode.`` ("" is the package itself).  A
#: module may import modules of its own layer or of lower ones, never of a higher one; every
#: module of rotode is in exactly one layer.  (The step kernels kinematic.pxd, dynamic.pxd and
#: implicit.pxd are their runners' modules, in engine/runners.)
LAYERS = [
    ("kernels", {
        # nogil cores (.pxd, cimported by downstream Cython) and their Python wrappers
        "dual", "_rodrigues", "_rows", "_loops", "quaternion", "so3", "equations", "erk", "rkmk",
        # what the wrappers use: input checks, and mapping a kernel over dask blocks
        "_validation", "_lazy",
        # a user's compiled function as a C address (rotode.ODE, rotode.torque.Compiled);
        # a user's Python function for a 3-vector, called from nogil code (_callback.pxd)
        "_cfunc", "_callback",
        # docstring blocks that several docstrings share
        "_docfill",
    }),
    ("sources/models", {
        "omega", "torque", "rhs", "events", "inertia", "frames", "_signature", "_typing",
    }),
    ("engine/runners", {
        # the registry, the driver, the runners; the plan of a run (its typed pieces and
        # outputs, _runplan; model kind, runner, time grid, events, _plan) and the dense output
        # of a compiled step, which the facades share
        "methods", "_pairs", "_driver", "kinematic", "dynamic", "implicit", "ode", "_runplan",
        "_plan",
        "_dense",
        # the specialised engine (C++ templates declared in _engine.pxd) and the code generator
        # of its tableaux (from the registry); the lane kernels of rk3/rk4 batches and their
        # run-time choice of instruction set; the error-controlled pairs in lanes
        "_engine", "_codegen", "_lanes", "_lanes_erk", "_lanes_erk_kin", "_lanes_erk_entries",
        # the forward-mode derivative of a computed solution (issue 30)
        "_tangent", "_tangent_engine", "_ode_sensitivity",
    }),
    ("facades", {
        "integration", "_dask", "_results", "ivp", "solvers", "steps", "solve", "exact",
        "_sensitivity",
        "", "__main__", "studies", "studies.demo", "studies.thandle",
    }),
]

#: The kernels know nothing of integration: none of `ABOVE_KERNELS` is reachable from them.
KERNELS = sorted(LAYERS[0][1])
ABOVE_KERNELS = {"_dask", "integration", "rhs", "ivp", "solvers"}

_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(?P<base>[\w.]+)[ \t]+c?import[ \t]+(?P<names>.*)"
                     r"|c?import[ \t]+(?P<modules>.*))$", re.M)
_STRINGS = re.compile(r"(\"\"\"|''')[\s\S]*?\1")


def _name(path):
    """``rotode.x`` (``rotode`` for the package, ``rotode.studies.demo`` ...) of a source."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources():
    return sorted(p for pattern in ("*.py", "*.pyx", "*.pxd") for p in PACKAGE.rglob(pattern)
                  if "build" not in p.parts)


MODULES = {_name(p) for p in _sources()}


def _targets(base, names):
    """The rotode modules that ``from base import names`` names: ``base.name`` for each name
    that is a module of rotode, else ``base`` itself."""
    found = {f"{base}.{n}" for n in names if f"{base}.{n}" in MODULES}
    if any(f"{base}.{n}" not in MODULES for n in names):       # (a name in it, or `*`)
        found.add(base)
    return found


def _python_imports(path):
    """Every rotode module that ``path`` (.py) imports, at any depth of its syntax tree."""
    found = set()
    package = _name(path) if path.name == "__init__.py" else _name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                      # relative: from the package of this module
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.update(_targets(base, [alias.name for alias in node.names]))
    return found


def _cython_imports(path):
    """Every rotode module that ``path`` (.pyx or .pxd) imports or cimports (comments and
    triple-quoted strings, where docstrings show examples, left out)."""
    text = _STRINGS.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text())
    text = re.sub(r"#[^\n]*", "", text)
    text = re.sub(r"\([^)]*\)", lambda m: m.group(0).replace("\n", " "), text)  # (a,\n b)
    found = set()
    for m in _IMPORT.finditer(text):
        if m.group("base"):
            names = m.group("names").strip().strip("()")
            found.update(_targets(m.group("base"), [
                n.split()[0] for n in names.split(",") if n.strip()]))
        else:
            found.update(n.split()[0] for n in m.group("modules").split(",") if n.strip())
    return found


def _graph():
    """``{module: set of the rotode modules it imports}`` (short names, "" for the package)."""
    def short(name):
        return name[len("rotode."):] if name.startswith("rotode.") else ""

    graph = {short(name): set() for name in MODULES}
    for path in _sources():
        imports = _python_imports(path) if path.suffix == ".py" else _cython_imports(path)
        node = short(_name(path))
        graph[node].update(short(m) for m in imports
                           if (m == "rotode" or m.startswith("rotode.")) and short(m) != node)
    return graph


GRAPH = _graph()


def _cycle(graph):
    """One cycle of `graph` as a list of modules (first == last), or None."""
    state = {}                                  # 1: on the current path, 2: done
    path = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
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


def _reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _show(name):
    return f"rotode.{name}" if name else "rotode"


def test_the_reader_sees_the_imports():
    """The graph holds edges of every kind (else the tests below would pass on nothing)."""
    assert "rhs" in GRAPH["dynamic"]                 # a .pyx cimport
    assert "torque" in GRAPH["dynamic"]              # a .pxd cimport
    assert "_loops" in GRAPH["quaternion"]           # a multi-line .pyx cimport
    assert "inertia" in GRAPH["frames"]              # an import inside a function
    assert "quaternion" in GRAPH["exact"]            # `from rotode import quaternion as _quat`
    assert {"integration", "solvers", "ivp"} <= GRAPH[""]
    assert "" in GRAPH["studies"] and "studies" in GRAPH["studies.demo"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle():
    cycle = _cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(map(_show, cycle))


def test_every_module_has_a_layer():
    placed = [m for _, layer in LAYERS for m in layer]
    assert len(placed) == len(set(placed)), "a module is in two layers"
    assert set(placed) == set(GRAPH), (
        f"not in a layer: {sorted(map(_show, set(GRAPH) - set(placed)))}; "
        f"no such module: {sorted(map(_show, set(placed) - set(GRAPH)))}")


def test_no_import_points_up():
    level = {m: i for i, (_, layer) in enumerate(LAYERS) for m in layer}
    up = [f"{_show(a)} ({LAYERS[level[a]][0]}) imports {_show(b)} ({LAYERS[level[b]][0]})"
          for a in sorted(GRAPH) for b in sorted(GRAPH[a])
          if a in level and b in level and level[b] > level[a]]
    assert not up, "\n".join(up)


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernels_know_nothing_of_integration(kernel):
    known = _reachable(GRAPH, kernel) & ABOVE_KERNELS
    assert not known, f"{_show(kernel)} imports (directly or through others) " + ", ".join(
        map(_show, sorted(known)))


def test_the_dask_ensembles_are_integrates_alone():
    """`_dask` (integrate on dask arrays) is imported by `integration` (and by the package, for
    the name `LazyIntegrationResult`) and imports no facade: `integrate` hands itself in."""
    importers = {m for m, imports in GRAPH.items() if "_dask" in imports}
    assert importers == {"integration", ""}, sorted(map(_show, importers))
    assert not GRAPH["_dask"] & {"integration", "ivp", "solvers"}
