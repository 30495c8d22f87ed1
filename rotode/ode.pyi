"""Type stubs of the compiled module rotode.ode (checked by mypy.stubtest in CI)."""
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ['ODE', 'run', 'run_plan', 'C_SIGNATURE', 'METHODS', 'KERNELS', 'LIMITS']
C_SIGNATURE: str
METHODS: tuple[Any, ...]
KERNELS: dict[Any, Any]
LIMITS: dict[str, dict[str, int]]


class ODE:
    signature: Any
    c_signature: str
    kind: int
    address: int
    fun: Any
    n: int | None
    quaternions: tuple[int, ...]
    params: NDArray[np.float64] | None
    args: tuple[Any, ...]
    error: BaseException | None

    def __init__(self, fun: Any, n: int | None = ..., quaternions: Any = ...,
                 params: ArrayLike | None = ..., args: Any = ...) -> None: ...
    @property
    def n_bodies(self) -> int | None: ...
    @property
    def compiled(self) -> bool: ...
    def __call__(self, t: float, y: ArrayLike) -> NDArray[np.float64]: ...


def run(method, model, y0, t, save, options=..., workers=...) -> Any: ...
def run_plan(plan) -> Any: ...
