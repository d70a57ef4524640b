"""``flowshare model``: values, range tables, plots, the model list and one-line errors."""

from __future__ import annotations

import pytest

from flowshare import cli
from flowshare.models import MODELS


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("flowshare: error: "), err
    return lines[0]


def test_value_of_pftk(capsys):
    assert cli.main(["model", "pftk", "p=0.01", "rtt=100ms", "rto=400ms"]) == 0
    assert capsys.readouterr().out == "112.3322 pkt/s\n"


def test_multfrc_in_packets_by_default_and_bytes_with_s(capsys):
    argv = ["model", "multfrc", "n=5", "p=0.01", "j=1", "rtt=100ms", "rto=400ms"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == "596.2626 pkt/s\n"
    assert cli.main([*argv, "s=1460B"]) == 0
    assert capsys.readouterr().out == "870543.3 B/s\n"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["mathis", "p=0.01", "rtt=100ms"], "122.4745 pkt/s"),
        (["aimd", "a=1", "b=0.5", "p=0.01", "rtt=100ms"], "122.4745 pkt/s"),
        (["parallel-a", "n=1", "p=0.01", "rtt=100ms", "rto=400ms"], "105.7268 pkt/s"),
        # Algorithm 2 takes j = 2 as two flows hit; multfrc's improved j makes it 1.8 (423.83)
        (["parallel-b", "n=5", "p=0.01", "j=2", "rtt=100ms", "rto=400ms"], "404.9073 pkt/s"),
        (["multfrc", "n=5", "p=0.01", "j=2", "rtt=100ms", "rto=400ms"], "423.8341 pkt/s"),
        (["improved-j", "n=5", "j=4.140351"], "3.015146 flows"),
        (["altman", "n=3"], "0.9"),
        (["multcp-factor", "n=2"], "1.080123"),
        (["pa-multcp-wmax", "n=4", "p=1"], "5.103104 pkt"),
    ],
)
def test_values_of_other_models(argv, expected, capsys):
    assert cli.main(["model", *argv]) == 0
    assert capsys.readouterr().out == expected + "\n"


def test_choice_keys(capsys):
    assert cli.main(["model", "pftk", "p=0.5", "rtt=100ms", "rto=400ms", "form=rfc5348"]) == 0
    rfc = float(capsys.readouterr().out.split()[0])
    assert cli.main(["model", "pftk", "p=0.5", "rtt=100ms", "rto=400ms"]) == 0
    assert float(capsys.readouterr().out.split()[0]) > rfc


def test_range_prints_a_table(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["model", "multfrc", "n=1", "p=0.001:0.05:3", "j=1", "rtt=100ms", "rto=400ms"]
    assert cli.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["p", "multfrc", "(pkt/s)"]
    rows = [line.split() for line in lines[1:]]
    assert [r[0] for r in rows] == ["0.001", "0.0255", "0.05"]
    assert rows[0][1] == "383.673" and rows[2][1] == "44.54434"
    assert list(tmp_path.iterdir()) == []


def test_log_range_is_geometric(capsys):
    assert cli.main(["model", "mathis", "p=0.0001:0.01:3", "rtt=100ms", "--log"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[0] for r in rows] == ["0.0001", "0.001", "0.01"]


def test_plot_writes_a_png(capsys, tmp_path):
    target = tmp_path / "curve.png"
    argv = ["model", "parallel-b", "n=5", "p=0.001:0.1:30", "j=2", "rtt=100ms", "rto=400ms",
            "--log", "--plot", str(target)]
    assert cli.main(argv) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(capsys.readouterr().out.splitlines()) == 31
    assert [p.name for p in tmp_path.iterdir()] == ["curve.png"]


def test_list_names_every_model_with_keys_and_units(capsys):
    assert cli.main(["model", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("mathis", "pftk", "aimd", "parallel-a", "parallel-b", "multfrc"):
        assert name in MODELS
        assert any(line.startswith(name + "  ") for line in out.splitlines())
    assert "[pkt/s; B/s with s]" in out
    assert "    rtt  [s]" in out
    assert "in (0, 1)" in out and "required" in out and "default 1" in out


def test_help_mentions_the_model_command(capsys):
    assert cli.main(["--help"]) == 0
    assert "model" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "a model NAME is required"),
        (["frob"], "unknown model 'frob'; known models: mathis"),
        (["pftk", "p=0.01", "rtt=100ms"], "model pftk needs rto=..."),
        (["pftk", "p=0.01", "rtt=100ms", "rto=400ms", "x=1"], "model pftk has no key 'x'; its keys"),
        (["pftk", "p=1.5", "rtt=100ms", "rto=400ms"], "p must be in (0, 1], got 1.5"),
        (["multfrc", "n=5", "p=0", "j=1", "rtt=100ms", "rto=400ms"], "p must be in (0, 1), got 0"),
        (["multfrc", "n=0", "p=0.1", "j=1", "rtt=100ms", "rto=400ms"], "n must be > 0, got 0"),
        (["multfrc", "n=5", "p=0.1", "j=-1", "rtt=100ms", "rto=400ms"], "j must be >= 0, got -1"),
        (["pftk", "p=abc", "rtt=100ms", "rto=400ms"], "p must be a number in (0, 1], got 'abc'"),
        (["pftk", "p=nan", "rtt=100ms", "rto=400ms"], "p must be a number in (0, 1], got 'nan'"),
        (["pftk", "p=0.01", "rtt=100ms", "rto=400ms", "form=ns2"],
         "form must be one of pftk, rfc5348, got 'ns2'"),
        (["pftk", "p", "rtt=100ms"], "expected KEY=VALUE, got 'p'"),
        (["pftk", "p=0.1", "p=0.2", "rtt=100ms", "rto=400ms"], "key 'p' is given twice"),
        (["pftk", "p=0.001:0.1", "rtt=100ms", "rto=400ms"], "p: a range is START:STOP:COUNT"),
        (["pftk", "p=0.001:0.1:1", "rtt=100ms", "rto=400ms"],
         "COUNT of a range must be an integer >= 2"),
        (["pftk", "p=0.001:1.5:4", "rtt=100ms", "rto=400ms"], "p must be in (0, 1], got 1.5"),
        (["pftk", "p=0.001:0.1:4", "rtt=100ms:200ms:3", "rto=400ms"], "only one key can be a range"),
        (["pftk", "p=0.01", "rtt=100ms", "rto=400ms", "form=a:b:3"], "form cannot be a range"),
        (["mathis", "p=-0.1:0.1:3", "rtt=100ms", "--log"], "a --log range needs START and STOP > 0"),
        (["--list", "pftk"], "--list takes no model or keys"),
    ],
)
def test_bad_input_is_one_line_with_status_2(argv, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["model", *argv]) == 2
    out, err = capsys.readouterr()
    assert expected in one_error_line(err)
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_plot_without_a_range_writes_nothing(capsys, tmp_path):
    target = tmp_path / "x.png"
    argv = ["model", "mathis", "p=0.01", "rtt=100ms", "--plot", str(target)]
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert "--plot needs a range" in one_error_line(err)
    assert out == ""
    assert not target.exists()


def test_bad_value_with_plot_writes_no_file(capsys, tmp_path):
    target = tmp_path / "x.png"
    argv = ["model", "mathis", "p=0.01:2:3", "rtt=100ms", "--plot", str(target)]
    assert cli.main(argv) == 2
    assert list(tmp_path.iterdir()) == []


def test_plot_into_a_missing_directory_fails_cleanly(capsys, tmp_path):
    target = tmp_path / "missing" / "x.png"
    argv = ["model", "mathis", "p=0.01:0.1:3", "rtt=100ms", "--plot", str(target)]
    assert cli.main(argv) == 2  # refused before anything is computed
    out, err = capsys.readouterr()
    one_error_line(err)
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_hasegawa_models_are_in_the_registry(capsys):
    names = [n for n in MODELS if n.startswith("hasegawa-")]
    assert len(names) >= 15
    # (3/4)·sqrt(8/(3p)) at p = 0.02: 8.660 packets (Eqs 6.5, 6.6)
    assert cli.main(["model", "hasegawa-red-window", "p=0.02"]) == 0
    assert capsys.readouterr().out.startswith("8.66")
    assert cli.main(["model", "hasegawa-rto-delay"]) == 2
    assert "needs window" in capsys.readouterr().err


# --- units: times, sizes and bit rates are written with their unit ----------------------------


@pytest.mark.parametrize(
    "rtt", ["100ms", "0.1s", "100 ms", "100000us", "100000µs", "1e8ns"]
)
def test_times_take_any_unit_and_reach_the_model_in_seconds(rtt, capsys):
    assert cli.main(["model", "pftk", "p=0.01", f"rtt={rtt}", "rto=0.4s"]) == 0
    assert capsys.readouterr().out == "112.3322 pkt/s\n"


def test_a_range_takes_units_at_both_ends(capsys):
    assert cli.main(["model", "mathis", "p=0.01", "rtt=50ms:0.2s:4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["rtt", "(s)"]
    assert [line.split()[0] for line in out[1:]] == ["0.05", "0.1", "0.15", "0.2"]


def test_a_key_in_milliseconds_gets_milliseconds():
    # A key whose own unit is ms receives the value converted to ms.
    from flowshare.models import cli as model_cli

    ms_keys = [k for spec in MODELS.values() for k in spec.keys if k.unit == "ms"]
    assert ms_keys, "some model has a key in ms"
    assert model_cli._number(ms_keys[0], "0.25s") == 250.0
    assert model_cli._number(ms_keys[0], "250us") == 0.25


def test_sizes_and_rates_take_units(capsys):
    argv = ["model", "multfrc", "n=5", "p=0.01", "j=1", "rtt=100ms", "rto=400ms"]
    for size in ["1460B", "1.46KB", "1460 B"]:
        assert cli.main([*argv, f"s={size}"]) == 0
        assert capsys.readouterr().out == "870543.3 B/s\n"
    rate_keys = [(spec, k) for spec in MODELS.values() for k in spec.keys if k.unit == "bit/s"]
    assert rate_keys
    from flowshare.models import cli as model_cli

    for text in ["10Mbps", "10 Mbit/s", "10mbps", "0.01Gbps"]:
        assert model_cli._number(rate_keys[0][1], text) == 10e6


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["pftk", "p=0.01", "rtt=0.1", "rto=400ms"],
         "rtt: 0.1 has no unit; write rtt=0.1s (units: ns, us (or µs), ms, s, min, h)"),
        (["pftk", "p=0.01", "rtt=100ms", "rto=0.4"], "rto: 0.4 has no unit; write rto=0.4s"),
        (["mathis", "p=0.01", "rtt=0.05:0.2:4"], "rtt: 0.05 has no unit; write rtt=0.05s"),
        (["pftk", "p=0.01", "rtt=100", "rto=400ms"], "rtt: 100 has no unit; write rtt=100s"),
        (["pftk", "p=0.01", "rtt=100mss", "rto=400ms"],
         "rtt: expected a time such as \"20ms\" (units: ns, us (or µs), ms, s, min, h), got \"100mss\""),
        (["pftk", "p=0.01", "rtt=-5ms", "rto=400ms"], "rtt:"),
        (["pftk", "p=0.01", "rtt=0s", "rto=400ms"], "rtt must be > 0, got 0"),
        (["multfrc", "n=5", "p=0.01", "j=1", "rtt=100ms", "rto=400ms", "s=1460"],
         "s: 1460 has no unit; write s=1460B (units: B, KB"),
    ],
)
def test_dimensioned_keys_refuse_bare_numbers_and_bad_units(argv, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["model", *argv]) == 2
    out, err = capsys.readouterr()
    assert expected in one_error_line(err)
    assert out == ""


def test_counts_and_probabilities_stay_bare_numbers(capsys):
    assert cli.main(["model", "multfrc", "n=5", "p=0.01", "j=1", "rtt=100ms", "rto=400ms"]) == 0
    assert cli.main(["model", "pftk", "p=1%", "rtt=100ms", "rto=400ms"]) == 2
    assert "p must be a number" in capsys.readouterr().err
