"""Type stubs of the compiled module rotode.ode (checked by mypy.stubtest in CI)."""
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from typing_extensions import disjoint_base

__all__ = ['ODE', 'Equations', 'run', 'run_plan', 'C_SIGNATURE', 'METHODS', 'KERNELS', 'LIMITS']
C_SIGNATURE: str
METHODS: tuple[Any, ...]
KERNELS: dict[Any, Any]
LIMITS: dict[str, dict[str, int]]


@disjoint_base
class Equations:
    def __call__(self, t: float, y: ArrayLike, p: ArrayLike | None = ...) -> NDArray[np.float64]: ...


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
    jac: Callable[..., ArrayLike] | None
    jac_params: Callable[..., ArrayLike] | None
    error: BaseException | None

    def __init__(self, fun: Any, n: int | None = ..., quaternions: Any = ...,
                 params: ArrayLike | None = ..., args: Any = ...,
                 jac: Callable[..., ArrayLike] | None = ...,
                 jac_params: Callable[..., ArrayLike] | None = ...) -> None: ...
    @property
    def n_bodies(self) -> int | None: ...
    @property
    def compiled(self) -> bool: ...
    def __call__(self, t: float, y: ArrayLike) -> NDArray[np.float64]: ...


def run(method, model, y0, t, save, options=..., workers=...) -> Any: ...
def run_plan(plan) -> Any: ...
