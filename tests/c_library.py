"""A C source compiled into a shared library with the system's C compiler and loaded with
ctypes, its functions typed as ``int f(double, double*, ...)`` (the C signatures of a user's
equations and of a compiled torque); the tests that need it are skipped without a compiler."""
import ctypes
import shutil
import subprocess
import sysconfig

import pytest


def build(directory, source, names, pointers):
    """The library of ``source`` built in ``directory``: each function of ``names`` returns int
    and takes a double then ``pointers`` double pointers."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip("no C compiler")
    (directory / "lib.c").write_text(source)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(directory / "lib.so"),
                    str(directory / "lib.c"), "-lm"], check=True)
    lib = ctypes.CDLL(str(directory / "lib.so"))
    ptr = ctypes.POINTER(ctypes.c_double)
    for name in names:
        f = getattr(lib, name)
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_double] + [ptr] * pointers
    return lib
