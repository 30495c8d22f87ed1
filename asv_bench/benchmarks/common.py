"""Seeded problem set-up shared by every benchmark."""
import numpy as np

SEED = 20261121


def rotation_vectors(n, scale=1.0):
    """n seeded rotation vectors with normally distributed components (times ``scale``)."""
    return scale * np.random.default_rng(SEED).normal(size=(n, 3))


def quaternions(n):
    """n seeded non-unit quaternions."""
    return np.random.default_rng(SEED + 1).normal(size=(n, 4))
