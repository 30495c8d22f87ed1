"""rotode: fast, trustworthy integration of rotations for SciPy.

Conventions: quaternions are scalar-first ``[w, x, y, z]`` with the Hamilton product; an
orientation maps body to world coordinates; every angular velocity names its frame.
"""
from rotode import (
    dynamic,
    exact,
    frames,
    implicit,
    inertia,
    kinematic,
    omega,
    quaternion,
    rhs,
    so3,
    steps,
    torque,
)
from rotode.frames import DynamicTransform, MovingFrameParticle, MovingFrameRigidBody, Transform
from rotode.inertia import principal_axes, validate_inertia
from rotode.integration import IntegrationResult, integrate
from rotode.rhs import (
    EulerAnglesXYZ,
    ExpCoordKinematics,
    ExpCoordRigidBody,
    QuaternionKinematics,
    QuaternionSecondOrder,
    RigidBody,
    RotationMatrix,
)
from rotode.solve import as_rotation, solve_expcoord
from rotode.solvers import (
    CG1,
    CG2,
    CG3,
    RK3,
    RK4,
    RKN4,
    Exp2,
    ImplicitMidpoint,
    LieEuler,
    Magnus2,
    Magnus4,
    Magnus6,
    Magnus8,
    MagnusCA,
    ObjectTrapezoid,
    Trapezoid,
)

__version__ = "0.1.0"
__all__ = [
    "quaternion", "so3", "inertia", "frames", "omega", "torque", "rhs", "exact",
    "kinematic", "dynamic", "implicit", "steps", "integrate", "IntegrationResult",
    "LieEuler", "Exp2", "MagnusCA", "Magnus2", "Magnus4", "Magnus6", "Magnus8", "CG1", "CG2",
    "CG3", "RK3", "RK4", "RKN4", "ImplicitMidpoint", "Trapezoid", "ObjectTrapezoid",
    "QuaternionKinematics", "RigidBody", "ExpCoordKinematics", "ExpCoordRigidBody",
    "QuaternionSecondOrder", "EulerAnglesXYZ", "RotationMatrix", "as_rotation", "solve_expcoord",
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
