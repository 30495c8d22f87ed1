"""Build, at run time, the compiled peers of benchmarks/bench_engine.py and bench_batch.py.

- `loop`: the hand-written C++17 DOP853 of dop853.hpp / models.hpp / engine.cpp, compiled with
  rotode's own flags (setup.py's ``COMPILE_ARGS``, the release set), optionally plus
  ``-march=native``, into a shared library with a C ABI, loaded with ctypes;
- `batch_loop`: batch_avx2.cpp, rk4 on struct-of-arrays blocks of Lagrange tops, with rotode's
  flags plus ``-mavx2`` (benchmarks/bench_batch.py);
- `cyrk`: cyrk_rhs.pyx, CyRK's ``cysolve_ivp`` with Cython right-hand sides, built with
  setuptools and Cython (as CyRK's documentation builds such a module: its headers from
  ``CyRK.get_include()``); ``cyrk("cyrk_spacecraft")`` builds cyrk_spacecraft.pyx, the
  spacecraft of benchmarks/bench_ode.py, the same way.

Nothing is downloaded; the products are cached under the temporary directory, keyed by the
sources, the flags and the compiler, so a second run starts at once.  asv_bench/benchmarks/
engine.py uses `loop` too, benchmarks/bench_ode.py `cyrk("cyrk_spacecraft")`.
"""
import ast
import ctypes
import hashlib
import importlib.util
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LOOP_SOURCES = ("engine.cpp", "dop853.hpp", "models.hpp")

#: the models of engine.cpp and cyrk_rhs.pyx
TOP, FREE_BODY, KINEMATICS = 0, 1, 2


class BuildError(RuntimeError):
    """A compiler or a build dependency is missing, or the build failed."""


def rotode_flags(setup_py=ROOT / "setup.py"):
    """The release compile flags of rotode's extensions: setup.py's ``COMPILE_ARGS`` with its
    debug switch off (its assignments evaluated, the rest of setup.py not run)."""
    tree = ast.parse(Path(setup_py).read_text())
    scope = {"DEBUG": False}
    for node in tree.body:
        target = getattr(node, "target", None) or (getattr(node, "targets", None) or [None])[0]
        if isinstance(target, ast.Name) and target.id == "COMPILE_ARGS":
            exec(compile(ast.Module([node], []), str(setup_py), "exec"), {}, scope)
    if "COMPILE_ARGS" not in scope:
        raise BuildError(f"no COMPILE_ARGS in {setup_py}")
    return list(scope["COMPILE_ARGS"])


def _compiler():
    cxx = shlex.split(sysconfig.get_config_var("CXX") or "") or ["c++"]
    if shutil.which(cxx[0]) is None:
        cxx = [shutil.which("c++") or shutil.which("g++") or ""]
    if not cxx[0]:
        raise BuildError("no C++ compiler found (c++, g++)")
    return cxx


def _cache(tag, parts):
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else str(part).encode())
        digest.update(b"\0")
    path = Path(tempfile.gettempdir()) / "rotode-bench-engine" / f"{tag}-{digest.hexdigest()[:16]}"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Loop:
    """The C++ loop as a Python object: ``run`` integrates ``repeat`` times in C++ (ctypes'
    own cost of about a microsecond falls once per batch, outside the per-run time)."""

    def __init__(self, path, flags):
        self.path, self.flags = path, flags
        lib = self._lib = ctypes.CDLL(str(path))
        P = ctypes.POINTER(ctypes.c_double)
        lib.engine_dop853.argtypes = [ctypes.c_int, P, ctypes.c_double, ctypes.c_double, P,
                                      ctypes.c_double, ctypes.c_double, ctypes.c_longlong, P,
                                      ctypes.POINTER(ctypes.c_longlong)]
        lib.engine_dop853.restype = ctypes.c_int
        lib.engine_rhs.argtypes = [ctypes.c_int, P, ctypes.c_double, P, P]
        lib.engine_table.argtypes = [P]
        self._P = P

    def _ptr(self, a):
        return a.ctypes.data_as(self._P)

    def prepare(self, model, params, t_span, y0, rtol, atol):
        """A function ``run(repeat) -> (y_final, [accepted, rejected, nfev], status)`` with
        its arguments converted once (what the timings call)."""
        params = np.ascontiguousarray(params, dtype=float)
        y0 = np.ascontiguousarray(y0, dtype=float)
        out = np.zeros_like(y0)
        counts = np.zeros(3, dtype=np.longlong)
        args = (int(model), self._ptr(params), float(t_span[0]), float(t_span[1]),
                self._ptr(y0), float(rtol), float(atol))
        tail = (self._ptr(out), counts.ctypes.data_as(ctypes.POINTER(ctypes.c_longlong)))
        call = self._lib.engine_dop853

        def run(repeat=1):
            status = call(*args, repeat, *tail)
            return out.copy(), counts.tolist(), status

        return run

    def rhs(self, model, params, t, y):
        params = np.ascontiguousarray(params, dtype=float)
        y = np.ascontiguousarray(y, dtype=float)
        dy = np.zeros_like(y)
        self._lib.engine_rhs(model, self._ptr(params), t, self._ptr(y), self._ptr(dy))
        return dy

    def table(self):
        """The coefficients as compiled: a (12, 12), b, c, e5, e3 (12 each)."""
        out = np.zeros(192)
        self._lib.engine_table(self._ptr(out))
        return out[:144].reshape(12, 12), out[144:156], out[156:168], out[168:180], out[180:]


def loop(native=False, verbose=False):
    """Compile (or reuse) the C++ loop with rotode's flags, plus ``-march=native`` when asked."""
    flags = rotode_flags() + (["-march=native"] if native else [])
    cxx = _compiler()
    version = subprocess.run(cxx + ["--version"], capture_output=True, text=True).stdout
    sources = [(HERE / s).read_bytes() for s in LOOP_SOURCES]
    cache = _cache("loop", [*sources, *flags, *cxx, version])
    lib = cache / "libengine.so"
    if not lib.exists():
        cmd = cxx + flags + ["-fPIC", "-shared", str(HERE / "engine.cpp"), "-o", str(lib)]
        if verbose:
            print("  building the C++ loop:", " ".join(cmd))
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            lib.unlink(missing_ok=True)
            raise BuildError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return Loop(lib, flags)


class BatchLoop:
    """The struct-of-arrays AVX2 loop of batch_avx2.cpp: ``run(y0, params, t)`` returns the
    final rows of the tops over the grid t (params: I (3), m g, h)."""

    def __init__(self, path, flags):
        self.path, self.flags = path, flags
        lib = self._lib = ctypes.CDLL(str(path))
        P = ctypes.POINTER(ctypes.c_double)
        lib.batch_rk4_top.argtypes = [ctypes.c_long, P, P, P, ctypes.c_long, P]
        lib.batch_rk4_top.restype = None
        self._P = P

    def run(self, y0, params, t):
        y0 = np.ascontiguousarray(y0, dtype=float)
        params = np.ascontiguousarray(params, dtype=float)
        t = np.ascontiguousarray(t, dtype=float)
        out = np.empty_like(y0)
        self._lib.batch_rk4_top(y0.shape[0], y0.ctypes.data_as(self._P),
                                params.ctypes.data_as(self._P), t.ctypes.data_as(self._P),
                                t.shape[0] - 1, out.ctypes.data_as(self._P))
        return out


def batch_loop(verbose=False):
    """Compile (or reuse) batch_avx2.cpp with rotode's flags plus ``-mavx2``."""
    flags = rotode_flags() + ["-mavx2"]
    cxx = _compiler()
    version = subprocess.run(cxx + ["--version"], capture_output=True, text=True).stdout
    source = HERE / "batch_avx2.cpp"
    cache = _cache("batch", [source.read_bytes(), *flags, *cxx, version])
    lib = cache / "libbatch.so"
    if not lib.exists():
        cmd = cxx + flags + ["-fPIC", "-shared", str(source), "-o", str(lib)]
        if verbose:
            print("  building the AVX2 batch loop:", " ".join(cmd))
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            lib.unlink(missing_ok=True)
            raise BuildError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return BatchLoop(lib, flags)


#: the Cython modules `cyrk` builds (their .pyx files next to this one)
CYRK_MODULES = ("cyrk_rhs", "cyrk_spacecraft")


def cyrk(name="cyrk_rhs", verbose=False):
    """Build (or reuse) benchmarks/engine/<name>.pyx against the installed CyRK and import it
    (``name``: one of `CYRK_MODULES`)."""
    if name not in CYRK_MODULES:
        raise ValueError(f"unknown module {name!r}; one of {CYRK_MODULES}")
    try:
        import CyRK
        import Cython
    except ImportError as exc:
        raise BuildError(f"{exc.name} is not installed (python -m pip install '.[bench]')") \
            from None
    flags = rotode_flags()
    source = (HERE / f"{name}.pyx").read_bytes()
    cache = _cache(name, [source, *flags, CyRK.__version__, Cython.__version__,
                          sys.version, np.__version__])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = cache / f"{name}{suffix}"
    if not built.exists():
        (cache / f"{name}.pyx").write_bytes(source)
        (cache / "setup.py").write_text(textwrap.dedent(f"""
            import CyRK, numpy
            from Cython.Build import cythonize
            from setuptools import Extension, setup
            ext = Extension("{name}", ["{name}.pyx"], language="c++",
                            include_dirs=CyRK.get_include() + [numpy.get_include()],
                            extra_compile_args={flags!r}, extra_link_args=["-fopenmp"])
            setup(ext_modules=cythonize([ext], quiet=True))
        """))
        if verbose:
            print(f"  building the CyRK module {name} in {cache} (about 15 s)")
        done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
                              cwd=cache, capture_output=True, text=True)
        if done.returncode != 0 or not built.exists():
            raise BuildError(f"building {name} failed:\n{done.stderr[-3000:]}")
    spec = importlib.util.spec_from_file_location(name, built)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
