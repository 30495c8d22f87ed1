"""The compiled peers of benchmarks/bench_engine.py: a hand-written C++ DOP853 (engine.cpp) and
CyRK's cysolve_ivp with Cython right-hand sides (cyrk_rhs.pyx), built at run time (build.py)."""
