"""The demo (the README's first command) tells its story in <= 100 columns, every table is
followed by its conclusion, and it cites published sources only."""
import re

import pytest

from rotode.studies import demo


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = demo.demo(out_dir=str(tmp_path_factory.mktemp("plots")), plots=True)
    assert status == 0
    return buf.getvalue()


def test_width(output):
    wide = [line for line in output.splitlines() if len(line) > 100]
    assert not wide, wide


def test_every_table_has_a_conclusion(output):
    lines = output.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"-+(  -+)+", line)]
    assert len(rules) == 5                       # five tables
    for i in rules:
        end = next(j for j in range(i + 1, len(lines) + 1)
                   if j == len(lines) or not lines[j].strip()
                   or lines[j].startswith("Conclusion"))
        assert end < len(lines) and lines[end].startswith("Conclusion: "), lines[i - 1]
        assert re.search(r"\d", lines[end])      # a conclusion in numbers


def test_cites_published_sources_only(output):
    assert "seed" not in output.lower()
    assert "Rucker (2018" in output and "Landau and Lifshitz" in output


def test_plots(output):
    # matplotlib is in the test extras, so the plot path runs in CI
    assert "Plots written to" in output
