"""Type stubs of the compiled module rotode.kinematic (checked by mypy.stubtest in CI)."""
from typing import Any

__all__ = ['METHODS', 'KERNELS', 'LIMITS', 'run']
METHODS: tuple[Any, ...]
KERNELS: dict[Any, Any]
LIMITS: dict[str, dict[str, int]]
MAX_SUBSTEPS: int
def run(method, model, y0, t, save, options, workers=...) -> Any: ...
def run_plan(plan) -> Any: ...
