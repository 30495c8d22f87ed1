"""Smoke test of an installed rotode (run from outside the clone, in a fresh environment).

Checks that every compiled module imports from the installation, that the headers and .pxd
files a downstream ``cimport`` needs are installed, and that a short run gives the exact answer.
"""
import os
from pathlib import Path

import numpy as np

import rotode

root = Path(rotode.get_include())
assert "site-packages" in str(root), root
compiled = sorted(p.stem for p in root.glob("*.pyx"))   # shipped beside the modules
assert len(compiled) >= 10, compiled
for pyx in compiled:
    module = __import__(f"rotode.{pyx}", fromlist=["_"])
    assert Path(module.__file__).parent == root, module.__file__
    # (steps: Python-level functions; _tangent: the sensitivity replay, nothing to cimport)
    assert (root / f"{pyx}.pxd").is_file() or pyx in ("steps", "_tangent"), pyx
for header in ["_dual.hpp", "_rodrigues.hpp", "_rows.hpp", "dual.pxd", "_rodrigues.pxd",
               "_rows.pxd", "py.typed"]:
    assert (root / header).is_file(), header
assert list(root.glob("*.pyi")), "no .pyi stubs installed"

# a constant rate about z for 1 s is a rotation by 1 rad about z, exactly
res = rotode.integrate(rotode.omega.Constant([0.0, 0.0, 1.0]), (0.0, 1.0), [1.0, 0, 0, 0],
                       method="magnus4", dt=0.01)
np.testing.assert_allclose(res.q[-1], [np.cos(0.5), 0, 0, np.sin(0.5)], atol=1e-14)
print(f"smoke test passed: rotode {rotode.__version__} from {root} ({os.cpu_count()} cores)")
