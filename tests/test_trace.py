"""Event traces, Parquet and pcap output, and the loss analysis built on them."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import flowshare
from flowshare import analysis, cli

SCENARIO = """\
[simulation]
duration = "6s"
seed = 2
sample_interval = "100ms"

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { limit = 20 } }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = 1000 } }

[[flows]]
count = 3
start_spacing = "50ms"
drop_segments = [40]
"""


def scenario(tmp_path: Path, trace: str = "") -> Path:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO + (f"\n[trace]\n{trace}\n" if trace else ""), encoding="utf-8")
    return path


def test_trace_off_gives_the_same_tables_and_no_events(tmp_path):
    off = flowshare.run(scenario(tmp_path), progress=False)
    on = flowshare.run(scenario(tmp_path, "events = true"), progress=False)
    assert off.events is None and off.pcap_files == []
    assert off.flows.to_csv() == on.flows.to_csv()
    assert off.queues.to_csv() == on.queues.to_csv()
    assert len(on.events) > 1000


def test_event_counts_match_the_tables(tmp_path):
    r = flowshare.run(scenario(tmp_path, "events = true"), progress=False)
    ev = r.events
    assert list(ev.columns) == [
        "time_s", "time_ns", "kind", "flow", "link", "packet", "seq", "size", "retx",
        "acked", "reason",
    ]  # fmt: skip
    assert list(ev["kind"].cat.categories) == ["send", "enqueue", "dequeue", "drop", "receive", "ack"]
    assert ev["time_ns"].is_monotonic_increasing
    data = ev[ev["packet"] == "data"]
    counts = data.groupby(["flow", "kind"], observed=False).size().unstack(fill_value=0)
    assert (counts["send"].to_numpy() == r.flows["packets_sent"].to_numpy()).all()
    assert (counts["receive"].to_numpy() == r.flows["packets_received"].to_numpy()).all()
    assert (counts["drop"].to_numpy() == r.flows["drops"].to_numpy()).all()
    drops = ev[ev["kind"] == "drop"]
    assert set(drops["reason"].astype(str)) == {"overflow", "forced"}
    assert (drops[drops["reason"] == "forced"]["link"] == -1).all()
    assert ev[ev["kind"] != "drop"]["reason"].isna().all()
    at_queue = ev[ev["link"] >= 0].groupby(["link", "kind"], observed=False).size().unstack(fill_value=0)
    q = r.queues.set_index("queue").loc[at_queue.index]
    assert (at_queue["dequeue"].to_numpy() == q["departures"].to_numpy()).all()
    assert (at_queue["drop"].to_numpy() == q["drops"].to_numpy()).all()


def test_filters(tmp_path):
    trace = 'events = true\nflows = [1]\nlinks = ["bottleneck"]\nkinds = ["drop", "dequeue"]\nstart = "2s"'
    ev = flowshare.run(scenario(tmp_path, trace), progress=False).events
    assert len(ev) > 100
    assert set(ev["flow"]) == {1}
    assert set(ev["kind"].astype(str)) <= {"drop", "dequeue"}
    assert set(ev["link"]) <= {0, 1, -1}
    assert ev["time_s"].min() >= 2.0


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        ("events = true\nflows = [7]", "trace.flows[0]: flow 7 does not exist; flows are 0..2"),
        ('pcap = ["nowhere"]', 'trace.pcap[0]: unknown link "nowhere"'),
        ('events = true\nkinds = ["lost"]', "trace.kinds[0]: unknown variant `lost`"),
        ("events = 1", "trace.events: invalid type"),
        ('kinds = ["drop"]', "trace.kinds: filters the event trace, which is off"),
    ],
)
def test_bad_trace_config_is_a_one_line_error(tmp_path, trace, message):
    with pytest.raises(flowshare.ConfigError) as info:
        flowshare.run(scenario(tmp_path, trace), progress=False)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_cli_writes_events_parquet_with_the_documented_schema(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["run", str(scenario(tmp_path, "events = true")), "--out", str(out), "--no-progress"]) == 0
    assert "events.parquet" in capsys.readouterr().out
    table = pq.read_table(out / "events.parquet")
    types = {f.name: str(f.type) for f in table.schema}
    assert types == {
        "time_s": "double",
        "time_ns": "int64",
        "kind": "dictionary<values=string, indices=int8, ordered=0>",
        "flow": "int32",
        "link": "int32",
        "packet": "dictionary<values=string, indices=int8, ordered=0>",
        "seq": "int64",
        "size": "int32",
        "retx": "bool",
        "acked": "int32",
        "reason": "dictionary<values=string, indices=int8, ordered=0>",
    }
    back = pd.read_parquet(out / "events.parquet")
    again = flowshare.run(scenario(tmp_path, "events = true"), progress=False).events
    pd.testing.assert_frame_equal(back, again)


def read_pcap(path: Path) -> tuple[tuple, list[tuple[int, bytes, int]]]:
    """A minimal pcap reader: the global header and (time ns, captured bytes, length)."""
    data = path.read_bytes()
    header = struct.unpack("<IHHiIII", data[:24])
    records, at = [], 24
    while at < len(data):
        sec, frac, incl, orig = struct.unpack("<IIII", data[at : at + 16])
        records.append((sec * 10**9 + frac, data[at + 16 : at + 16 + incl], orig))
        at += 16 + incl
    assert at == len(data)
    return header, records


def ones_complement_sum(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def test_cli_writes_pcap_files_that_parse(tmp_path, capsys):
    out = tmp_path / "out"
    path = scenario(tmp_path, 'pcap = ["bottleneck"]')
    assert cli.main(["run", str(path), "--out", str(out), "--no-progress"]) == 0
    assert (out / "r0-r1.pcap").is_file() and (out / "r1-r0.pcap").is_file()
    assert not list(tmp_path.glob(".out.partial*"))
    queues = pd.read_csv(out / "queues.csv")
    for name, queue in [("r0-r1.pcap", 0), ("r1-r0.pcap", 1)]:
        header, records = read_pcap(out / name)
        assert header == (0xA1B23C4D, 2, 4, 0, 0, 128, 101)
        assert len(records) == queues.loc[queue, "departures"]
        times = [t for t, _, _ in records]
        assert times == sorted(times)
        for _, hdr, orig in records:
            assert hdr[0] == 0x45 and hdr[9] == 6
            assert struct.unpack("!H", hdr[2:4])[0] == orig
            assert ones_complement_sum(hdr[:20]) == 0xFFFF
    _, records = read_pcap(out / "r0-r1.pcap")
    for _, hdr, orig in records[:200]:
        flow = hdr[15]
        assert hdr[12:16] == bytes([10, 1, 0, flow])
        sport, dport, seq = struct.unpack("!HHI", hdr[20:28])
        assert (sport, dport) == (1024 + flow, 5001)
        assert seq % 1460 == 0 and orig == 1500


def test_pcap_from_python_and_the_warning_without_a_directory(tmp_path):
    path = scenario(tmp_path, 'pcap = ["r1->d2"]')
    r = flowshare.run(path, progress=False, pcap_dir=tmp_path / "caps")
    assert r.pcap_files == [tmp_path / "caps" / "r1-d2.pcap"]
    _, records = read_pcap(r.pcap_files[0])
    queue = r.queues[(r.queues["from"] == "r1") & (r.queues["to"] == "d2")]
    assert len(records) == int(queue["departures"].iloc[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = flowshare.run(path, progress=False)
    assert r.pcap_files == []
    assert any("pcap_dir" in str(w.message) for w in caught)


# --- analysis -------------------------------------------------------------------------------


def frame(rows: list[tuple]) -> pd.DataFrame:
    columns = ["time_s", "kind", "flow", "packet", "seq", "retx", "acked"]
    ev = pd.DataFrame(rows, columns=columns)
    ev["retx"] = ev["retx"].astype(bool)
    return ev.sort_values("time_s", kind="stable").reset_index(drop=True)


def test_loss_measures_on_a_crafted_trace():
    rows = []
    for flow, n in [(0, 10), (1, 10), (2, 20)]:
        rows += [(0.01 * k, "send", flow, "data", k, 0, 0) for k in range(n)]
    for flow, t in [(0, 1.00), (0, 1.05), (0, 1.20), (1, 1.02), (1, 3.00), (2, 1.08), (2, 1.11)]:
        rows.append((t, "drop", flow, "data", 0, 0, 0))
    rows.append((1.5, "drop", 1, "ack", 3, 0, 0))  # ACK losses do not count
    m = analysis.loss_measures(frame(rows), rtt=0.1)
    assert (m.n, m.packets_sent, m.packets_lost) == (3, 40, 7)
    assert m.per_flow["loss_events"].tolist() == [2, 2, 1]
    assert m.flow_loss_events == 5 and m.cumulative_loss_events == 3
    assert m.p == pytest.approx(5 / 40)
    assert m.p_e == pytest.approx(3 / 40)
    assert m.p_r == pytest.approx(7 / 40)
    assert m.cumulative_events["flows"].tolist() == [3, 2, 1]
    assert m.cumulative_events["losses"].tolist() == [4, 2, 1]
    assert m.j_measured == pytest.approx(2.0)
    assert m.j_old == pytest.approx(7 / 3)
    assert m.per_flow["loss_event_rate"].tolist() == pytest.approx([0.2, 0.2, 0.05])
    # A warm-up window drops the first 1.1 s and every send: the losses at 1.11 (flow 2),
    # 1.20 (flow 0) and 3.0 (flow 1) remain, in two cumulative events; no rate is defined.
    w = analysis.loss_measures(frame(rows), rtt=0.1, start_s=1.1)
    assert (w.packets_lost, w.cumulative_loss_events, w.packets_sent) == (3, 2, 0)
    assert np.isnan(w.p_e) and w.j_measured == pytest.approx(1.5)


def test_rtt_samples_and_rounds_on_a_crafted_trace():
    rows = [
        (0.0, "send", 0, "data", 0, 0, 0),
        (0.0, "send", 0, "data", 1, 0, 0),
        (0.1, "ack", 0, "ack", 1, 0, 1),
        (0.1, "ack", 0, "ack", 2, 0, 1),
    ]
    rows += [(0.1, "send", 0, "data", s, 0, 0) for s in range(2, 6)]
    rows += [(0.22, "ack", 0, "ack", s, 0, 1) for s in range(3, 7)]
    rows.append((0.3, "ack", 0, "ack", 6, 1, 0))  # a duplicate echoing a retransmission: no sample
    ev = frame(rows)
    samples = analysis.rtt_samples(ev)
    assert samples["rtt_s"].tolist() == pytest.approx([0.1, 0.1, 0.12, 0.12, 0.12, 0.12])
    assert analysis.rounds(ev, 0).tolist() == pytest.approx([0.1, 0.12])
    m = analysis.loss_measures(ev)
    assert m.rtt_mean_s == pytest.approx(0.68 / 6)
    assert m.round_mean_s == pytest.approx(0.11)
    assert m.packets_lost == 0 and m.cumulative_loss_events == 0 and np.isnan(m.j_measured)


def test_loss_measures_of_a_real_run(tmp_path):
    r = flowshare.run(scenario(tmp_path, 'events = true\nkinds = ["send", "drop", "ack"]'), progress=False)
    m = analysis.loss_measures(r.events, start_s=1.0)
    assert m.n == 3
    assert 0 < m.p_e <= m.p <= m.p_r
    assert 1.0 <= m.j_measured <= 3.0 and m.j_measured <= m.j_old + 1e-12
    # The trace's RTT samples are the sender's: their mean is close to the flows table's.
    whole = analysis.loss_measures(r.events)
    expected = (r.flows["rtt_mean_s"] * r.flows["rtt_samples"]).sum() / r.flows["rtt_samples"].sum()
    assert whole.rtt_mean_s == pytest.approx(expected, rel=0.02)
    assert whole.round_mean_s == pytest.approx(whole.rtt_mean_s, rel=0.3)
    total_drops = int(r.flows["drops"].sum())
    assert whole.packets_lost == total_drops
