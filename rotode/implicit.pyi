"""Type stubs of the compiled module rotode.implicit (checked by mypy.stubtest in CI)."""
from typing import Any

__all__ = ['METHODS', 'run', 'newton_trace', 'max_step', 'residual_jacobian']
METHODS: tuple[Any, ...]
SOLVERS: tuple[Any, ...]
BOUNDS: tuple[Any, ...]
VARIANTS: dict[Any, Any]
DEFAULT_TOL: float
DEFAULT_MAX_ITER: dict[Any, Any]
DEFAULT_MAX_SUBSTEPS: int
DEFAULT_SUBSTEP_ANGLE: dict[Any, Any]
WARN_SUBSTEPS: int
def run(method, model, y0, t, save, options=..., workers=...) -> Any: ...
def run_plan(plan) -> Any: ...
def max_step(inertia, L_b, method=..., bound=...) -> Any: ...
def newton_trace(inertia, L_b, dt, method=..., solver=..., tol=..., max_iter=..., bound=...) -> Any: ...
def residual_jacobian(inertia, l_vec, v, method=...) -> Any: ...
