"""rotode: fast, trustworthy integration of rotations for SciPy.

Conventions: quaternions are scalar-first ``[w, x, y, z]`` with the Hamilton product; an
orientation maps body to world coordinates; every angular velocity names its frame.
"""
from rotode import quaternion, so3

__version__ = "0.1.0"
__all__ = ["quaternion", "so3", "__version__"]
