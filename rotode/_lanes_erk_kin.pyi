# The error-controlled pairs on kinematics batches in SIMD lanes (rotode/_lanes_erk_kin.pyx):
# nothing is called from Python.
__all__: list[str] = []
