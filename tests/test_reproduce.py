"""``flowshare reproduce``: command-line errors, the targets table and report of the multfrc
study at a tiny scale, resumption from the run store, and the pass/fail rule of a target."""

from __future__ import annotations

import csv
import html.parser
import math

import pandas as pd
import pytest

from flowshare import ConfigError, cli
from flowshare.reproduce import STUDIES, multfrc, reproduce
from flowshare.reproduce.targets import COLUMNS, Target


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# ---------------------------------------------------------------------------------------------
# Command-line errors: one line, non-zero status, nothing written


def test_unknown_study_is_refused_with_the_list_of_studies(tmp_path, capsys):
    out = tmp_path / "x"
    status, _, err = run_cli(["reproduce", "nosuch", "--out", str(out)], capsys)
    assert status == 1
    assert err.count("\n") == 1
    assert "unknown study 'nosuch'" in err
    for study in STUDIES:
        assert study in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["reproduce", "multfrc", "--out", "{out}", "--workers", "0"], "--workers"),
        (["reproduce", "multfrc", "--out", "{out}", "--speed", "9"], "--speed"),
        (["reproduce", "multfrc"], "--out"),
        (["reproduce", "multfrc", "--out", "{out}", "--workers", "2", "--dask", "h:1"],
         "--workers"),
    ],
)
def test_bad_flags_are_one_line_errors(tmp_path, capsys, argv, needle):
    out = tmp_path / "x"
    status, _, err = run_cli([a.format(out=out) for a in argv], capsys)
    assert status == 2
    assert err.count("\n") == 1
    assert needle in err
    assert not out.exists()


def test_a_directory_holding_something_else_is_refused(tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds no reproduction"):
        reproduce("multfrc", out, scale="tiny", workers=1)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_a_bad_choice_is_refused_naming_the_option(tmp_path):
    with pytest.raises(ConfigError, match=r"options.model_b_j: expected one of old, measured, "
                                          r"improved, got 'best'"):
        multfrc.Options(model_b_j="best")
    with pytest.raises(ConfigError, match="options.b"):
        multfrc.Options(b=0)


@pytest.mark.parametrize("study", STUDIES)
def test_every_arm_of_every_studys_quick_scale_is_a_valid_scenario(study):
    # The quick scale runs for minutes, so the suite does not run it (the documentation's
    # commands run at the tiny scale); its plan is checked arm by arm, networks built.
    import importlib
    import inspect

    from flowshare.study.sweep import load_sweep

    module = importlib.import_module(f"flowshare.reproduce.{study}")
    takes_options = "options" in inspect.signature(module.plan).parameters
    plan = module.plan("quick", module.OPTIONS) if takes_options else module.plan("quick")
    sweep = load_sweep(module.sweep_document(plan, module.OPTIONS))
    assert len(sweep.validate(force=True)) == len(sweep.arms) > 0


def test_unknown_scale_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="scale: expected one of full, quick, tiny"):
        reproduce("multfrc", tmp_path / "x", scale="huge")
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------------------------
# A tiny reproduction: files, targets, report, resumption


class _Tables(html.parser.HTMLParser):
    """The cells of each table of a page, and every src/href and <link> seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.links: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "link":
            self.links.append("<link>")
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("data:"):
                self.links.append(value)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro") / "multfrc"
    first = reproduce("multfrc", out, scale="tiny", workers=1, progress=False)
    return out, first


def test_targets_csv_has_the_exact_columns_and_every_target(tiny):
    out, first = tiny
    with open(out / "targets.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        rows = list(reader)
    ids = [t.id for t in multfrc.targets()]
    assert [r["id"] for r in rows] == ids
    assert len(set(ids)) == len(ids)
    for row in rows:
        assert row["passed"] in ("true", "false")
        if row["passed"] == "false":
            assert row["note"], f"{row['id']} fails without a reason"
    multfrc_rows = [r for r in rows if r["id"].startswith("M.")]
    assert len(multfrc_rows) == 28
    # The tiny scale measures at least the targets its runs can answer; the others say why not.
    measured = {r["id"] for r in rows if r["measured"] != ""}
    assert {"A.S1.30ms.max_error", "A.S3.max_error", "B.S3.underestimate_share",
            "M.S1.30ms.low_loss_gap"} <= measured
    for row in rows:
        if row["measured"] == "":
            assert "scale" in row["note"], row
    # Chapter 3's three conditions and their warm-up twins; chapter 4's MulTFRC alone in S1
    # (and its twin) and MulTFRC against TCP in S8.
    assert first.runs == first.ran == 9


def test_report_lists_every_target_first_and_is_self_contained(tiny):
    out, _ = tiny
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'src="http' not in page and "<link" not in page
    parser = _Tables()
    parser.feed(page)
    assert parser.links == []
    first = parser.tables[0]
    assert first[0][:7] == list(COLUMNS)
    assert [row[0] for row in first[1:]] == [t.id for t in multfrc.targets()]
    assert page.count('src="data:image/png;base64,') >= 3


def test_runs_csv_holds_the_measured_inputs_of_both_models(tiny):
    out, _ = tiny
    runs = pd.read_csv(out / "runs.csv")
    assert sorted(runs["setup"]) == ["I1", "S1", "S2", "S3", "S8"]
    protocol = runs[runs["part"] == "protocol"]
    for column in ("throughput", "tcp_norm", "multfrc_norm", "utilisation"):
        assert protocol[column].notna().any(), column
    runs = runs[runs["part"] == "model"]
    for column in ("throughput", "p", "p_e", "p_r", "j_measured", "rtt", "rto", "model_a",
                   "model_a_ca", "model_b_old", "err_a", "err_b_old"):
        assert runs[column].notna().all(), column
    # Errors are (model - measured) / measured, in per cent.
    expected = 100 * (runs["model_a"] - runs["throughput"]) / runs["throughput"]
    assert (expected - runs["err_a"]).abs().max() < 1e-3  # runs.csv keeps 6 digits


def test_a_second_invocation_reuses_every_run(tiny):
    out, _ = tiny
    before = pd.read_parquet(out / "store" / "catalog.parquet")
    again = reproduce("multfrc", out, scale="tiny", workers=1, progress=False)
    after = pd.read_parquet(out / "store" / "catalog.parquet")
    assert again.ran == 0 and again.runs == 9
    assert list(after["started_at"]) == list(before["started_at"])
    assert (out / "targets.csv").is_file()


def test_a_quick_run_into_a_tiny_reproduction_is_refused(tiny, capsys):
    out, _ = tiny
    # The tiny scale is not the CLI's: a full or quick run into it is refused, not mixed.
    status, _, err = run_cli(["reproduce", "multfrc", "--out", str(out), "--quick"], capsys)
    assert status == 1
    assert "holds the tiny reproduction of multfrc" in err


def test_same_inputs_give_identical_targets(tmp_path, tiny):
    out, _ = tiny
    other = tmp_path / "again"
    reproduce("multfrc", other, scale="tiny", workers=2, progress=False)
    assert (other / "targets.csv").read_bytes() == (out / "targets.csv").read_bytes()
    assert (other / "runs.csv").read_bytes() == (out / "runs.csv").read_bytes()


# ---------------------------------------------------------------------------------------------
# The pass/fail rule of a target


def test_close_target_passes_within_an_absolute_tolerance_and_fails_outside():
    t = Target("x", "a value", published=4.7, tolerance=2.0)
    assert t.evaluate(6.6).passed
    assert t.evaluate(2.8).passed
    miss = t.evaluate(6.8)
    assert not miss.passed
    assert "6.8" in miss.note and "4.7" in miss.note


def test_relative_tolerance_scales_with_the_published_value():
    t = Target("j", "flows hit", published=1.42, tolerance=0.10, tolerance_kind="relative")
    assert t.evaluate(1.55).passed
    assert not t.evaluate(1.57).passed
    assert not t.evaluate(1.27).passed
    assert t.row()["tolerance"] == "±10%"


def test_bounds_pass_on_their_side_only():
    upper = Target("u", "an error bound", published=10.0, tolerance=0.0, comparison="at_most")
    assert upper.evaluate(10.0).passed and upper.evaluate(-3.0).passed
    assert not upper.evaluate(10.5).passed
    lower = Target("l", "a share", published=1.0, tolerance=0.25, comparison="at_least")
    assert lower.evaluate(0.75).passed
    assert not lower.evaluate(0.7).passed


def test_an_explanation_is_added_to_a_miss_only():
    t = Target("u", "an error bound", published=10.0, tolerance=0.0, comparison="at_most")
    miss = t.evaluate(12.0).explained("the model, not the simulator")
    assert miss.note == "measured 12 is above the upper bound 10 (published 10); the model, not the simulator"
    assert t.evaluate(9.0).explained("the model, not the simulator").note == ""
    assert t.evaluate(12.0).explained("").note == t.evaluate(12.0).note


def test_an_unmeasured_target_fails_with_its_reason():
    t = Target("m", "MulTFRC", published=2.7, tolerance=2.0).unmeasured("not implemented")
    assert not t.passed and math.isnan(t.measured)
    assert t.row() == {
        "id": "m", "description": "MulTFRC", "published": "2.7", "measured": "",
        "tolerance": "±2", "passed": "false", "note": "not implemented",
    }
    assert not Target("n", "x", 1.0, 0.5).evaluate(float("nan")).passed
    with pytest.raises(ValueError, match="needs the reason"):
        Target("m", "x", 1.0, 0.0).unmeasured("")


def test_a_target_rejects_an_unknown_comparison_or_negative_tolerance():
    with pytest.raises(ValueError, match="comparison"):
        Target("x", "x", 1.0, 0.0, comparison="near")
    with pytest.raises(ValueError, match="tolerance"):
        Target("x", "x", 1.0, -1.0)


def test_every_multfrc_target_states_a_published_value_and_tolerance():
    ids = [t.id for t in multfrc.targets()]
    assert len(ids) == len(set(ids))
    for t in multfrc.targets():
        assert math.isfinite(t.published) and t.tolerance >= 0, t.id
    # The thesis's numbers for Model B's j (Damjanović (2010) §3.3.4).
    by_id = {t.id: t for t in multfrc.targets()}
    assert by_id["B.S1.lowest.n5.j_measured"].published == 1.124352
    assert by_id["B.S2.red.n5.lowest.throughput"].published == 25403.79


def test_a_choice_reaches_the_measurement(tmp_path):
    out = tmp_path / "model-denominator"
    options = multfrc.Options(error_denominator="model", model_rto="rtt4")
    reproduce("multfrc", out, scale="tiny", workers=1, progress=False, options=options)
    runs = pd.read_csv(out / "runs.csv")
    runs = runs[runs["part"] == "model"]
    expected = 100 * (runs["model_a"] - runs["throughput"]) / runs["model_a"]
    assert (expected - runs["err_a"]).abs().max() < 1e-3
    assert ((runs["rto"] - 4 * runs["rtt"]).abs() < 1e-5).all()
    assert '"error_denominator": "model"' in (out / "reproduce.json").read_text(encoding="utf-8")
