# The y0 sensitivity in the specialised engine's own pass (rotode/_tangent_engine.pyx): nothing
# is called from Python.
__all__: list[str] = []
