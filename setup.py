"""Build the Cython extensions; all metadata lives in pyproject.toml.

Set ROTODE_DEBUG=1 to build with bounds, wraparound and initialisation checks on (CI runs the
test suite against such a build too).

Build time: the extensions compile in parallel (one compiler per core), and a rebuild from the
same clone compiles only what changed. ``pip install .`` builds in a fresh isolated environment
each time, whose Cython headers are always newer than the generated C++; Cython's own check
would then regenerate and recompile every module (about 7 minutes on 2 quiet cores). Here a
module is regenerated only when one of rotode's own sources it depends on is newer than its
``.cpp``, or when the build configuration (debug switch, directives, flags, Cython or NumPy
version) differs from the one recorded in ``build/rotode-build-config.json`` by the last build.
"""
import json
import os
import re
from glob import glob

import Cython
import numpy
from Cython.Build import cythonize
from Cython.Build.Dependencies import create_dependency_tree
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("ROTODE_DEBUG", "0") not in ("", "0")

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    # binding: def functions and methods are Python-like function objects that inspect.signature
    # reads (Cython 3's default, stated here; its cost, docs/architecture.md "Signatures");
    # embedsignature: the first docstring line names the signature, which also gives the
    # cdef classes' constructors and __call__ theirs (rotode/_signature.py)
    "binding": True,
    "embedsignature": True,
    "cpow": True,
}

# -fno-math-errno, -fno-trapping-math: no errno from sqrt and no FP traps, so that branch-free
# loops (rotode/_rodrigues.hpp) vectorise; neither changes a computed value.
COMPILE_ARGS = ["-std=c++17", "-fopenmp", "-ffp-contract=off", "-fno-math-errno",
                "-fno-trapping-math"]
# -g0 in the release build: Python's own CFLAGS carry -g, and the debug information of the lane
# and tangent templates was a third of the build's compile time (docs/architecture.md "Build
# time"); it changes no instruction.
COMPILE_ARGS += ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]

HERE = os.path.dirname(os.path.abspath(__file__))
STAMP = os.path.join("build", "rotode-build-config.json")
CONFIG = {"debug": DEBUG, "directives": DIRECTIVES, "compile_args": COMPILE_ARGS,
          "cython": Cython.__version__, "numpy": numpy.__version__}


def _headers(sources):
    """The C++ headers of rotode that ``sources`` (.pyx/.pxd/.pxi files) reach: those named by
    a ``cdef extern from`` and, transitively, those they ``#include``."""
    todo = []
    for path in sources:
        with open(path) as f:
            todo += re.findall(r'cdef\s+extern\s+from\s+"([\w.]+\.hpp)"', f.read())
    seen = set()
    while todo:
        header = os.path.join("rotode", todo.pop())
        if header in seen or not os.path.exists(header):
            continue
        seen.add(header)
        with open(header) as f:
            todo += re.findall(r'#include\s+"([\w.]+\.hpp)"', f.read())
    return sorted(seen)


def _own_dependencies(tree, pyx):
    """rotode's own files that ``pyx`` depends on (Cython's headers left out): its .pyx, .pxd
    and .pxi files and the headers they reach (`_headers`)."""
    own = os.path.join(HERE, "rotode")
    files = [d for d in tree.all_dependencies(pyx)
             if os.path.abspath(d).startswith(own + os.sep)]
    return files + _headers(files)


def _needs_cython(tree, pyx):
    cpp = pyx[:-4] + ".cpp"
    if not os.path.exists(cpp):
        return True
    built = os.path.getmtime(cpp)
    return any(os.path.getmtime(d) > built for d in _own_dependencies(tree, pyx))


class BuildExt(build_ext):
    """Parallel compile; Cython and the compiler run only on what changed (see the docstring)."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self):
        try:
            with open(STAMP) as f:
                same_config = json.load(f) == json.loads(json.dumps(CONFIG))
        except (OSError, ValueError):
            same_config = False
        self.force = self.force or not same_config
        tree = create_dependency_tree()
        stale = [e for e in self.extensions if self.force or _needs_cython(tree, e.sources[0])]
        if stale:
            cythonize(stale, compiler_directives=DIRECTIVES, force=True,
                      nthreads=os.cpu_count() or 1)
        for ext in self.extensions:
            ext.depends = _own_dependencies(tree, ext.sources[0])
            ext.sources = [ext.sources[0][:-4] + ".cpp"]
        super().run()
        os.makedirs(os.path.dirname(STAMP), exist_ok=True)
        with open(STAMP, "w") as f:
            json.dump(CONFIG, f)


extensions = [
    Extension(
        path[:-4].replace(os.sep, "."),
        [path],
        language="c++",
        include_dirs=["rotode", numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
        extra_compile_args=COMPILE_ARGS,
        extra_link_args=["-fopenmp"],
    )
    for path in sorted(glob(os.path.join("rotode", "*.pyx")))
]

setup(ext_modules=extensions, cmdclass={"build_ext": BuildExt})
