# The error-controlled pairs in SIMD lanes (rotode/_lanes_erk.pyx): nothing is called from
# Python.
__all__: list[str] = []
