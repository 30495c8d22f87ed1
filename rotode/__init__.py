"""rotode: fast, trustworthy integration of rotations for SciPy.

Conventions: quaternions are scalar-first ``[w, x, y, z]`` with the Hamilton product; an
orientation maps body to world coordinates; every angular velocity names its frame.
"""
import os as _os
import sys as _sys
from importlib.machinery import EXTENSION_SUFFIXES as _EXTENSION_SUFFIXES


def _package_root():
    """The directory whose compiled modules this import uses.

    ``python -m rotode ...`` run in the clone's root puts the source folder first on
    ``sys.path``; its extensions are not built there (``pip install .`` builds them into the
    installed copy). Then the package's modules load from the installed copy, so every command
    works from the root as it does elsewhere. A source folder built in place
    (``python setup.py build_ext --inplace``) is used as it is.
    """
    def built(directory):
        return any(_os.path.isfile(_os.path.join(directory, "quaternion" + suffix))
                   for suffix in _EXTENSION_SUFFIXES)

    here = _os.path.dirname(_os.path.abspath(__file__))
    if built(here):
        return here
    for entry in _sys.path:
        candidate = _os.path.join(_os.path.abspath(entry or _os.curdir), "rotode")
        if (_os.path.realpath(candidate) != _os.path.realpath(here) and built(candidate)
                and _os.path.isfile(_os.path.join(candidate, "__init__.py"))):
            __path__[:] = [candidate]  # noqa: F821 (the package's own search path)
            return candidate
    raise ImportError(
        f"rotode is imported from its source folder {here}, whose compiled extensions are not "
        "built, and no installed rotode was found: run `python -m pip install .` (or build in "
        "place with `python setup.py build_ext --inplace`)")


_ROOT = _package_root()

from rotode import (
    dynamic,
    events,
    exact,
    frames,
    implicit,
    inertia,
    kinematic,
    methods,
    ode,
    omega,
    quaternion,
    rhs,
    so3,
    steps,
    torque,
)
from rotode._dask import LazyIntegrationResult
from rotode._sensitivity import propagate_covariance
from rotode.frames import DynamicTransform, MovingFrameParticle, MovingFrameRigidBody, Transform
from rotode.inertia import principal_axes, validate_inertia
from rotode.integration import IntegrationResult, integrate
from rotode.ivp import solve_ivp
from rotode.ode import ODE
from rotode.rhs import (
    EulerAnglesXYZ,
    ExpCoordKinematics,
    ExpCoordRigidBody,
    QuaternionKinematics,
    QuaternionSecondOrder,
    RigidBody,
    RotationMatrix,
)
from rotode.solve import as_rotation, solve_expcoord, state
from rotode.solvers import (
    CG1,
    CG2,
    CG3,
    RK3,
    RK4,
    RKMK5,
    RKMK8,
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
    "quaternion", "so3", "inertia", "frames", "omega", "torque", "rhs", "exact", "events",
    "kinematic", "dynamic", "implicit", "ode", "steps", "integrate", "IntegrationResult", "ODE",
    "LazyIntegrationResult", "solve_ivp", "propagate_covariance",
    "LieEuler", "Exp2", "MagnusCA", "Magnus2", "Magnus4", "Magnus6", "Magnus8", "CG1", "CG2",
    "CG3", "RK3", "RK4", "RKN4", "RKMK5", "RKMK8", "ImplicitMidpoint", "Trapezoid",
    "ObjectTrapezoid",
    "QuaternionKinematics", "RigidBody", "ExpCoordKinematics", "ExpCoordRigidBody",
    "QuaternionSecondOrder", "EulerAnglesXYZ", "RotationMatrix", "as_rotation", "solve_expcoord",
    "state",
    "Transform", "DynamicTransform", "MovingFrameParticle", "MovingFrameRigidBody",
    "principal_axes", "validate_inertia", "methods",
    "get_include", "__version__",
]


def get_include() -> str:
    """Directory holding rotode's ``.pxd`` and ``.hpp`` files, for downstream Cython builds.

    Add its parent to Cython's ``include_path`` (so that ``cimport rotode.so3`` resolves) and
    the directory itself to the C++ ``include_dirs`` (for ``_dual.hpp``); compile as C++.

    Returns
    -------
    str
        The absolute path of the ``rotode`` package whose compiled modules this import uses.

    See Also
    --------
    numpy.get_include

    Examples
    --------
    >>> import os, rotode
    >>> os.path.isfile(os.path.join(rotode.get_include(), "so3.pxd"))
    True
    """
    return _ROOT


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
