import pytest

from convexagg.cli import main


def test_demo_prints_both_studies(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "convex aggregation:" in out and "(paper: 0.940)" in out
    for name in ("convexagg ovr", "convexagg ovo", "convexagg ecoc"):
        assert name in out
    assert "Decoders on identical one-vs-one binaries" in out
    for name in ("Hamming", "loss-based", "GBTM", "Hastie-Tibshirani", "Wu-Lin-Weng", "WMAP"):
        assert name in out


def test_unknown_command_is_an_argparse_error():
    with pytest.raises(SystemExit):
        main(["nonsense"])
