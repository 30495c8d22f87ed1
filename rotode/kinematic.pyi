"""Type stubs of the compiled module rotode.kinematic (checked by mypy.stubtest in CI)."""
from typing import Any

from typing_extensions import disjoint_base

__all__ = ['METHODS', 'run', 'CG_TABLEAUS', 'ORDERS']

@disjoint_base
class _Driver:
    ...

METHODS: tuple[Any, ...]
ORDERS: dict[Any, Any]
CG_TABLEAUS: dict[Any, Any]
def run(method, model, y0, t, save, options, workers=...) -> Any: ...
