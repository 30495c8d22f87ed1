"""Every public kernel, right-hand side and integration method has an asv benchmark.

Like NumPy's check that every ufunc is benchmarked: adding a public method without a benchmark
fails here.  (asv itself runs the suite in CI with ``asv run --python=same --quick``.)
"""
import importlib
import re
from pathlib import Path

import pytest

import rotode
from rotode import quaternion, rhs, so3, steps

ASV = Path(__file__).resolve().parents[1] / "asv_bench" / "benchmarks"

pytestmark = pytest.mark.skipif(not ASV.is_dir(), reason="asv_bench/ not in this checkout")


def _suite_source():
    return "\n".join(p.read_text() for p in sorted(ASV.glob("*.py")))


@pytest.fixture
def steppers(monkeypatch):
    """asv_bench/benchmarks/steppers.py, imported as asv imports it."""
    monkeypatch.syspath_prepend(str(ASV.parent))
    return importlib.import_module("benchmarks.steppers")


def test_every_single_step_is_benchmarked(steppers):
    functions = [name for name in steps.__all__ if callable(getattr(steps, name))]
    missing = [name for name in functions if name not in steppers.STEP_CALLS]
    assert not missing, f"no asv benchmark calls steps.{missing}"


@pytest.mark.parametrize("module", [so3, quaternion], ids=["so3", "quaternion"])
def test_every_kernel_facade_is_benchmarked(module):
    src = _suite_source()
    short = module.__name__.rsplit(".", 1)[1]
    functions = [name for name in module.__all__ if callable(getattr(module, name))]
    missing = [name for name in functions if not re.search(rf"\b{short}\.{name}\(", src)]
    assert not missing, f"no asv benchmark calls {short}.{missing}"


def test_every_right_hand_side_is_benchmarked():
    src = _suite_source()
    classes = [n for n in rhs.__all__ if n[0].isupper() and n != "RightHandSide"]
    missing = [n for n in classes if f'"{n}"' not in src]
    assert not missing, f"no asv benchmark for the right-hand sides {missing}"


def test_every_integration_method_is_benchmarked(steppers):
    benchmarked = set(steppers.KINEMATIC) | set(steppers.RIGID) | set(steppers.ADAPTIVE)
    missing = [m for m in rotode.integration.METHODS if m not in benchmarked]
    assert not missing, f"no asv benchmark for the methods {missing}"


def test_the_checks_above_can_fail():
    assert not re.search(r"\bso3\.no_such_kernel\(", _suite_source())
