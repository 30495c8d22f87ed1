"""Type stubs of the compiled module rotode._driver (checked by mypy.stubtest in CI)."""
from typing import Any

from typing_extensions import disjoint_base

__all__ = ['STATUS', 'Engine', 'outcome', 'algebra_atol', 'per_body_counts']

@disjoint_base
class Engine:
    def __init__(self, spec, control, n, ref=...) -> None: ...
    @property
    def adaptive(self) -> Any: ...

STATUS: dict[Any, Any]
def outcome(status, failed, t, sources=..., reasons=..., fail_t=..., last=...) -> Any: ...
def algebra_atol(atol) -> Any: ...
def per_body_counts(counts, n_steps, nfev) -> Any: ...
