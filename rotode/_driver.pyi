"""Type stubs of the compiled module rotode._driver (checked by mypy.stubtest in CI)."""
from typing import Any

__all__ = ['STATUS', 'outcome']
STATUS: dict[Any, Any]
def outcome(status, failed, t, sources=..., reasons=...) -> Any: ...
