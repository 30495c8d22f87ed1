import numpy as np
import pytest
from hypothesis import settings

# tests/reference.py (the independent NumPy implementations the tests compare against) is
# importable through `pythonpath = ["tests"]` in pyproject.toml.
settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci")


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


@pytest.fixture(scope="module")
def client():
    """A 2-process dask LocalCluster (tests/test_dask.py, tests/test_ode_dask.py)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture
def isa(request):
    """The lane kernels' instruction set `request.param` for one test (indirect
    parametrisation; tests/test_simd_batch.py, tests/test_simd_kinematics.py), restored after."""
    from rotode import _lanes

    before = _lanes.use(request.param)
    yield request.param
    _lanes.use(before)
