"""The scripts of benchmarks/ as modules, for the tests that check their problems (they are
scripts run by path, not a package); a checkout without benchmarks/ skips those tests."""
import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(*parts):
    """benchmarks/<parts...>.py, imported under a name of its own."""
    path = BENCHMARKS.joinpath(*parts[:-1], parts[-1] + ".py")
    spec = importlib.util.spec_from_file_location("rotode_bench_" + "_".join(parts), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def needs(name):
    """The mark that skips a test module when benchmarks/<name>.py is not in the checkout."""
    return pytest.mark.skipif(not (BENCHMARKS / f"{name}.py").exists(),
                              reason="benchmarks/ not in this checkout")
