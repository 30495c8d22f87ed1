import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci")


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


def rotation_angle_between(Ra, Rb):
    """Angle (rad) of Ra^T Rb for stacks of rotation matrices, accurate for small angles."""
    D = np.swapaxes(Ra, -1, -2) @ Rb
    skew = 0.5 * np.stack([D[..., 2, 1] - D[..., 1, 2], D[..., 0, 2] - D[..., 2, 0],
                           D[..., 1, 0] - D[..., 0, 1]], axis=-1)
    s = np.linalg.norm(skew, axis=-1)
    c = 0.5 * (np.trace(D, axis1=-2, axis2=-1) - 1.0)
    return np.arctan2(s, c)
