import os
import sys

import numpy as np
import pytest
from hypothesis import settings

# tests/reference.py holds the independent NumPy implementations the tests compare against
sys.path.insert(0, os.path.dirname(__file__))

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci")


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)
