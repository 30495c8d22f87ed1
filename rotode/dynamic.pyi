"""Type stubs of the compiled module rotode.dynamic (checked by mypy.stubtest in CI)."""
from typing import Any

from typing_extensions import disjoint_base

__all__ = ['METHODS', 'KERNELS', 'LIMITS', 'run']

@disjoint_base
class ForceSource:
    def __init__(self, force) -> None: ...
    @property
    def error(self) -> Any: ...

METHODS: tuple[Any, ...]
KERNELS: dict[Any, Any]
LIMITS: dict[str, dict[str, int]]
def run(method, model, y0, t, save, options=..., workers=...) -> Any: ...
def run_plan(plan) -> Any: ...
def tangent_ready(plan) -> Any: ...
def fixed_tangent(method, body, y0, t, save, cols, normalize=..., full=..., out=...) -> Any: ...
