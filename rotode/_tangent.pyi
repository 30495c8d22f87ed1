from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rotode.rhs import RigidBody

__all__ = ["rigid_body", "kinematics_rates", "KERNELS", "RATE_KERNELS", "TORQUE_PARAMETERS",
           "TENSOR", "DIRECTIONS"]

KERNELS: dict[str, int]
DIRECTIONS: int

def rigid_body(method: str, body: RigidBody, y0: ArrayLike, ts: ArrayLike, tout: ArrayLike,
               cols: Sequence[tuple[str, int]], normalize: Any = ...,
               full: Any = ..., options: Any = ...) -> NDArray[np.float64]: ...

RATE_KERNELS: dict[str, int]
TORQUE_PARAMETERS: dict[type, tuple[str, ...]]
TENSOR: tuple[tuple[int, int], ...]

def kinematics_rates(kernel: str, tableau: tuple[Sequence[float], Sequence[float]],
                     frame: str, rates: tuple[Any, Any, ArrayLike], C: ArrayLike,
                     sel: Sequence[int], y0: ArrayLike, ts: ArrayLike,
                     save: ArrayLike) -> NDArray[np.float64]: ...
