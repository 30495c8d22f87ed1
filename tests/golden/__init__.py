"""The golden-engine cases (`golden.cases`) and the script that saves their outputs
(`make_golden.py`); tests/test_golden_engine.py compares against them."""
