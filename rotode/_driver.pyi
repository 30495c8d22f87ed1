"""Type stubs of the compiled module rotode._driver (checked by mypy.stubtest in CI)."""
from enum import IntEnum
from typing import Any

from typing_extensions import disjoint_base

__all__ = ['STATUS', 'Kernel', 'Engine', 'outcome', 'algebra_atol', 'per_body_counts']

class Kernel(IntEnum):
    KERNEL_CG = 0
    KERNEL_EXP2 = 1
    KERNEL_MAGNUS_CA = 2
    KERNEL_MAGNUS = 3
    KERNEL_RK3 = 4
    KERNEL_RK4 = 5
    KERNEL_AB3 = 6
    KERNEL_ERK = 7
    KERNEL_RKMK = 8
    KERNEL_LIE_EULER = 9
    KERNEL_RKN4 = 10
    KERNEL_IMPLICIT = 11

@disjoint_base
class Engine:
    def __init__(self, spec, control, n, ref=...) -> None: ...
    @property
    def adaptive(self) -> Any: ...

STATUS: dict[Any, Any]
def outcome(status, failed, t, sources=..., reasons=..., fail_t=..., last=...) -> Any: ...
def algebra_atol(atol) -> Any: ...
def per_body_counts(counts, n_steps, nfev) -> Any: ...
