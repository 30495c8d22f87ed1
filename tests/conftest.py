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
