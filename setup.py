"""Build the Cython extensions; all metadata lives in pyproject.toml.

Set ROTODE_DEBUG=1 to build with bounds, wraparound and initialisation checks on (CI runs the
test suite against such a build too).
"""
import os
from glob import glob

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ROTODE_DEBUG", "0") not in ("", "0")

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
    "cpow": True,
}

# -fno-math-errno, -fno-trapping-math: no errno from sqrt and no FP traps, so that branch-free
# loops (rotode/_rodrigues.hpp) vectorise; neither changes a computed value.
COMPILE_ARGS = ["-std=c++17", "-fopenmp", "-ffp-contract=off", "-fno-math-errno",
                "-fno-trapping-math"]
COMPILE_ARGS += ["-O0", "-g"] if DEBUG else ["-O3"]

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

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES,
                            nthreads=os.cpu_count() or 1))
