"""rotode: fast, trustworthy integration of rotations for SciPy.

Conventions: quaternions are scalar-first ``[w, x, y, z]`` with the Hamilton product; an
orientation maps body to world coordinates; every angular velocity names its frame.
"""
from rotode import frames, inertia, quaternion, so3
from rotode.frames import DynamicTransform, MovingFrameParticle, MovingFrameRigidBody, Transform
from rotode.inertia import principal_axes, validate_inertia

__version__ = "0.1.0"
__all__ = [
    "quaternion", "so3", "inertia", "frames",
    "Transform", "DynamicTransform", "MovingFrameParticle", "MovingFrameRigidBody",
    "principal_axes", "validate_inertia",
    "get_include", "__version__",
]


def get_include():
    """Directory holding rotode's ``.pxd`` and ``.hpp`` files, for downstream Cython builds.

    Add its parent to Cython's ``include_path`` (so that ``cimport rotode.so3`` resolves) and
    the directory itself to the C++ ``include_dirs`` (for ``_dual.hpp``); compile as C++.
    """
    import os

    return os.path.dirname(os.path.abspath(__file__))
