"""Type stubs of the compiled module rotode.events (checked by mypy.stubtest in CI)."""
from typing import Any

from numpy.typing import ArrayLike
from typing_extensions import disjoint_base

__all__ = ['Event', 'AxisAngle', 'Component', 'RotationAngle', 'KineticEnergy', 'PythonEvent',
           'as_events']

@disjoint_base
class Event:
    def __init__(self, terminal=..., direction=...) -> None: ...
    def __call__(self, t: float, y: ArrayLike) -> float: ...
    error: Any
    @property
    def terminal(self) -> Any: ...
    @property
    def direction(self) -> Any: ...
    @property
    def needs_w(self) -> Any: ...


@disjoint_base
class AxisAngle(Event):
    def __init__(self, body_axis, world_axis, angle, terminal=..., direction=...) -> None: ...
    @property
    def angle(self) -> float: ...


@disjoint_base
class Component(Event):
    def __init__(self, name, index, value=..., terminal=..., direction=...) -> None: ...
    @property
    def name(self) -> Any: ...
    @property
    def index(self) -> Any: ...
    @property
    def value(self) -> Any: ...


@disjoint_base
class RotationAngle(Event):
    def __init__(self, reference, angle, terminal=..., direction=...) -> None: ...
    @property
    def angle(self) -> float: ...


@disjoint_base
class KineticEnergy(Event):
    def __init__(self, inertia, value, terminal=..., direction=...) -> None: ...
    @property
    def value(self) -> Any: ...


@disjoint_base
class PythonEvent(Event):
    def __init__(self, function, terminal=..., direction=...) -> None: ...
    @property
    def function(self) -> Any: ...

def as_events(events) -> Any: ...
