"""Type aliases of the Python facades' annotations (read by type checkers; nothing at run time
depends on them).  The facades import this module under ``typing.TYPE_CHECKING`` only."""
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeAlias

from numpy.typing import ArrayLike

from rotode.events import Event
from rotode.omega import AngularVelocity
from rotode.rhs import QuaternionKinematics, RigidBody

__all__ = ["DaskCollection", "EventLike", "Frame", "Model"]


class DaskCollection(Protocol):
    """A dask collection (``dask.array.Array``): what makes `rotode.integrate` lazy."""

    def __dask_graph__(self) -> Any: ...


#: The angular velocity's frame.
Frame: TypeAlias = Literal["body", "world"]

#: What `rotode.integrate` integrates: kinematics from a rate source, a callable ``w(t)``, a
#: constant rate (3,) or per-body rates (N, 3), a `QuaternionKinematics`; rigid-body dynamics
#: from a `RigidBody` or a list of them.
Model: TypeAlias = (AngularVelocity | QuaternionKinematics | RigidBody | Sequence[RigidBody]
                    | Callable[[float], ArrayLike] | ArrayLike)

#: One event or several: compiled `rotode.events` or SciPy-style functions ``g(t, y)``.
EventLike: TypeAlias = Event | Callable[..., float] | Sequence[Event | Callable[..., float]]
