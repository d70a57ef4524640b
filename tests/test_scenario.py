"""Scenario loading and the Python builders."""

from __future__ import annotations

import json

import pytest
from core_tables import TINY_TOML

import flowshare
from flowshare import ConfigError
from flowshare import scenario as sc

# --- builders: plain dicts in the documented format -------------------------------------------


def test_dumbbell_builder_matches_the_documented_layout():
    scn = sc.dumbbell(
        bottleneck=sc.link(rate="100Mbps", delay="20ms", queue=sc.droptail(limit=250)),
        access=sc.link(rate="1Gbps", delay="1ms", queue={"limit": 100000}),
        flows=sc.flows(
            name="bulk",
            count=16,
            start="0s",
            start_spacing="10ms",
            stop="50s",
            tcp={"recovery": "newreno"},
        ),
        duration="60s",
        seed=1,
        sample_interval="100ms",
    )
    assert scn == {
        "simulation": {"duration": "60s", "seed": 1, "sample_interval": "100ms"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {
                "rate": "100Mbps",
                "delay": "20ms",
                "queue": {"kind": "droptail", "limit": 250},
            },
            "access": {"rate": "1Gbps", "delay": "1ms", "queue": {"limit": 100000}},
        },
        "flows": [
            {
                "name": "bulk",
                "count": 16,
                "start": "0s",
                "start_spacing": "10ms",
                "stop": "50s",
                "tcp": {"recovery": "newreno"},
            }
        ],
    }


def test_builders_leave_defaults_to_the_loader():
    scn = sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="5ms"),
        access=sc.link(rate="1Gbps", delay="1ms"),
        flows=[sc.flows(), sc.flows(direction="reverse", src_access={"delay": "10ms"})],
        duration="2s",
    )
    assert scn["simulation"] == {"duration": "2s"}
    assert scn["topology"]["bottleneck"] == {"rate": "10Mbps", "delay": "5ms"}
    assert scn["flows"] == [{}, {"direction": "reverse", "src_access": {"delay": "10ms"}}]


def test_a_tfrc_group_from_the_builder_runs_and_reports_its_loss_event_rate():
    scn = sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="20ms", queue={"limit": 30}),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=[sc.flows(name="tfrc", transport="tfrc", tfrc={"sqrt_rtt": True}), sc.flows(name="tcp")],
        duration="8s",
    )
    assert scn["flows"][0] == {"name": "tfrc", "transport": "tfrc", "tfrc": {"sqrt_rtt": True}}
    normalized = sc.load_scenario(scn)
    assert normalized["flows"][0]["tfrc"]["df"] == 0.9, "defaults are filled in"
    flows = flowshare.run(scn).flows
    tfrc = flows[flows["name"] == "tfrc"].iloc[0]
    assert tfrc["transport"] == "tfrc"
    assert 0 < tfrc["loss_event_rate"] < 1
    assert tfrc["goodput_bps"] > 1e6
    with pytest.raises(ConfigError, match=r"flows\[0\]\.tfrc\.ss_mult: expected a number > 1"):
        sc.load_scenario({**scn, "flows": [sc.flows(transport="tfrc", tfrc={"ss_mult": 0.5})]})


def test_parking_lot_and_graph_builders_use_the_file_key_names():
    lot = sc.parking_lot(
        routers=4,
        link=sc.link(rate="10Mbps", delay="10ms", queue=sc.droptail(limit=50)),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=sc.flows(from_=1, to=2),
        duration="10s",
    )
    assert lot["topology"]["kind"] == "parking_lot"
    assert lot["topology"]["routers"] == 4
    assert lot["flows"] == [{"from": 1, "to": 2}]

    net = sc.graph(
        nodes=("a", "b", "c"),
        links=[
            sc.link(from_="a", to="b", rate="10Mbps", delay="5ms"),
            sc.link(from_="b", to="c", rate="10Mbps", delay="5ms"),
        ],
        flows=sc.flows(src="a", dst="c"),
        duration="10s",
    )
    assert net["topology"]["nodes"] == ["a", "b", "c"]
    assert net["topology"]["links"][0] == {"from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms"}
    assert net["flows"] == [{"src": "a", "dst": "c"}]


def test_builders_copy_their_inputs():
    access = {"rate": "1Gbps", "delay": "1ms"}
    scn = sc.dumbbell(bottleneck=access, access=access, flows={}, duration=1)
    scn["topology"]["access"]["delay"] = "9ms"
    assert access["delay"] == "1ms"
    assert scn["topology"]["bottleneck"]["delay"] == "1ms"


def test_describe_counts_flows_and_links():
    groups = [{"count": 3}, {"count": 1}]
    assert sc.describe({"topology": {"kind": "dumbbell"}, "flows": groups}) == {
        "topology": "dumbbell",
        "flows": 4,
        "links": 9,  # bottleneck + two access links per flow
    }
    lot = {"topology": {"kind": "parking_lot", "routers": 4}, "flows": groups}
    assert sc.describe(lot)["links"] == 3 + 8
    net = {"topology": {"kind": "graph", "links": [{}, {}]}, "flows": [{"count": 1}]}
    assert sc.describe(net)["links"] == 2


# --- loading: errors found before the core sees anything --------------------------------------


def test_missing_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(FileNotFoundError) as info:
        flowshare.load_scenario(path)
    assert str(info.value) == f"scenario file not found: {path}"


def test_unknown_suffix_is_a_config_error(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("simulation: {}")
    with pytest.raises(ConfigError, match=r"s\.yaml: unknown scenario format '\.yaml'"):
        flowshare.load_scenario(path)


def test_other_types_are_rejected():
    with pytest.raises(TypeError, match="path or a mapping"):
        flowshare.load_scenario(42)  # type: ignore[arg-type]


def test_non_json_values_are_a_config_error():
    with pytest.raises(ConfigError, match="not representable as JSON"):
        sc.to_json({"simulation": {"duration": float("nan")}})


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


# --- loading through the Rust loader ----------------------------------------------------------


def test_toml_file_json_file_and_dict_normalize_alike(tiny_toml, tmp_path):
    from_toml = flowshare.load_scenario(tiny_toml)
    as_json = tmp_path / "tiny.json"
    as_json.write_text(json.dumps(from_toml))
    assert flowshare.load_scenario(str(as_json)) == from_toml
    assert flowshare.load_scenario(from_toml) == from_toml


def test_defaults_are_filled_in(tiny_toml):
    scn = flowshare.load_scenario(tiny_toml)
    group = scn["flows"][0]
    assert group["count"] == 2
    assert group["tcp"]["recovery"] == "newreno"  # the documented default
    assert scn["simulation"]["seed"] == 3


def test_builder_scenarios_are_accepted_by_the_loader():
    access = sc.link(rate="100Mbps", delay="1ms")
    scenarios = [
        sc.dumbbell(
            bottleneck=sc.link(rate="10Mbps", delay="5ms", queue=sc.droptail(limit=20)),
            access=access,
            flows=[sc.flows(count=2, size="100KB"), sc.flows(direction="reverse")],
            duration="1s",
        ),
        sc.parking_lot(
            routers=3,
            link=sc.link(rate="10Mbps", delay="2ms"),
            access=access,
            flows=[sc.flows(), sc.flows(from_=1, to=2)],
            duration="1s",
        ),
        sc.graph(
            nodes=["a", "b", "c"],
            links=[
                sc.link(from_="a", to="b", rate="10Mbps", delay="5ms"),
                sc.link(from_="b", to="c", rate="10Mbps", delay="5ms"),
            ],
            flows=sc.flows(src="a", dst="c", tcp={"recovery": "sack"}),
            duration="1s",
        ),
        sc.dumbbell(
            bottleneck=sc.link(rate="10Mbps", delay="5ms"),
            access=access,
            flows=[
                sc.flows(),
                sc.flows(
                    transport="udp",
                    source={
                        "kind": "cbr",
                        "rate": "1Mbps",
                        "schedule": [("0.5s", "2Mbps"), ("0.8s", "1Mbps", "ramp")],
                    },
                ),
            ],
            duration="1s",
        ),
    ]
    for scn in scenarios:
        normalized = flowshare.load_scenario(scn)
        assert normalized["topology"]["kind"] == scn["topology"]["kind"]


def test_bad_field_names_the_file_and_the_field(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(TINY_TOML + '[flows.tcp]\nrecovery = "newrenoo"\n')
    with pytest.raises(ConfigError) as info:
        flowshare.load_scenario(path)
    message = str(info.value)
    assert message.startswith(f"{path}: flows[0].tcp.recovery")
    assert "newreno" in message and "\n" not in message


def test_unknown_key_is_an_error(tmp_path):
    path = tmp_path / "typo.toml"
    path.write_text(TINY_TOML.replace("seed = 3", "sed = 3"))
    with pytest.raises(ConfigError, match="sed"):
        flowshare.load_scenario(path)


def test_validate_returns_the_normalized_scenario(tiny_toml):
    assert flowshare.validate(tiny_toml) == flowshare.load_scenario(tiny_toml)


def test_lan_and_change_builders_use_the_file_key_names():
    scn = sc.graph(
        nodes=["srv", "r", "h1", "h2"],
        links=[sc.link(from_="srv", to="r", rate="1Gbps", delay="5ms")],
        lans=[
            sc.lan(
                name="lan",
                nodes=("r", "h1", "h2"),
                rate="10Mbps",
                delay="0.5us",
                queue=sc.droptail(limit=50),
                queues={"r": sc.droptail(limit=20)},
                loss={"model": "bernoulli", "p": 0.05},
            )
        ],
        flows=sc.flows(src="srv", dst="h1"),
        duration="2s",
        changes=[
            sc.change(at="1s", link="lan", rate="5Mbps"),
            sc.change(at="1.5s", link="srv-r", up=False),
        ],
    )
    assert scn["topology"]["lans"] == [
        {
            "name": "lan",
            "nodes": ["r", "h1", "h2"],
            "rate": "10Mbps",
            "delay": "0.5us",
            "queue": {"kind": "droptail", "limit": 50},
            "queues": {"r": {"kind": "droptail", "limit": 20}},
            "loss": {"model": "bernoulli", "p": 0.05},
        }
    ]
    assert scn["changes"] == [
        {"at": "1s", "link": "lan", "rate": "5Mbps"},
        {"at": "1.5s", "link": "srv-r", "up": False},
    ]
    normalized = flowshare.load_scenario(scn)
    assert normalized["changes"][1] == {"at": "1500ms", "link": "srv-r", "up": False}
    assert sc.describe(normalized)["links"] == 2
    # Without LANs or changes the keys are left out, so earlier scenarios keep their form.
    plain = sc.graph(nodes=["a", "b"], links=[], flows={}, duration=1)
    assert "lans" not in plain["topology"] and "changes" not in plain


def test_bad_changes_and_lans_name_the_field():
    def scn(changes, lans):
        return sc.graph(
            nodes=["a", "b"],
            links=[sc.link(from_="a", to="b", rate="1Mbps", delay="1ms")],
            lans=lans,
            flows=sc.flows(src="a", dst="b"),
            duration="2s",
            changes=changes,
        )

    with pytest.raises(ConfigError, match=r"^changes\[0\]\.at: 3s is beyond the end of the run"):
        flowshare.load_scenario(scn([sc.change(at="3s", link="a-b", up=False)], None))
    with pytest.raises(ConfigError, match=r'^changes\[0\]\.link: unknown link "x"'):
        flowshare.load_scenario(scn([sc.change(at="1s", link="x", up=False)], None))
    with pytest.raises(ConfigError, match=r'^topology\.lans\[0\]\.nodes\[1\]: unknown node "c"'):
        lan = sc.lan(name="l", nodes=["a", "c"], rate="1Mbps", delay=0)
        flowshare.load_scenario(scn(None, [lan]))


def test_flow_groups_take_a_start_jitter_drawn_from_the_seed():
    group = sc.flows(count=3, start_spacing="10ms", start_jitter="500ms")
    assert group["start_jitter"] == "500ms"
    scn = sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="10ms"),
        access=sc.link(rate="1Gbps", delay="1ms"),
        flows=group,
        duration="100ms",
    )
    starts = [flowshare.run(scn, seed=s, progress=False).flows["start_s"].tolist() for s in (1, 2, 1)]
    assert starts[0] == starts[2] != starts[1]
    assert all(0.01 * k <= t <= 0.01 * k + 0.5 for run in starts for k, t in enumerate(run))


# --- units, the rtt helper, queue and source helpers, and field paths of dict errors -----------


def _tiny(**flow: object) -> dict:
    return sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="10ms", queue=sc.droptail(limit=50)),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=sc.flows(**flow),  # type: ignore[arg-type]
        duration="1s",
    )


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        (("topology", "bottleneck", "rate"), 20,
         'topology.bottleneck.rate: 20 has no unit; write a rate such as "20Mbps" (units: bps, '
         'kbps, Mbps, Gbps, Tbps, also bit/s forms such as "10 Mbit/s")'),
        (("topology", "bottleneck", "delay"), 20,
         'topology.bottleneck.delay: 20 has no unit; write a time such as "20ms"'),
        (("simulation", "duration"), 1.5, 'simulation.duration: 1.5 has no unit; write a time such as "1.5ms"'),
        (("topology", "access", "rate"), "10MB/s",
         'topology.access.rate: "MB/s" is bytes per second, and rates are in bits per second: write "80Mbps"'),
        (("topology", "access", "rate"), "10 parsecs", 'topology.access.rate: expected a rate such as "100Mbps"'),
    ],
)
def test_bare_numbers_and_byte_rates_name_the_field_and_the_units(where, value, expected):
    scn = _tiny()
    node = scn
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    with pytest.raises(ConfigError) as info:
        sc.load_scenario(scn)
    assert str(info.value).startswith(expected), str(info.value)


@pytest.mark.parametrize("rate", ["10Mbps", "10mbps", "10 Mbit/s", "10Mbit/s", "10Mb/s", "10MBit/s", "0.01Gbps"])
def test_rates_in_every_spelling_normalize_alike(rate):
    scn = _tiny()
    scn["topology"]["bottleneck"]["rate"] = rate
    assert sc.load_scenario(scn)["topology"]["bottleneck"]["rate"] == "10Mbps"


def test_zero_needs_no_unit():
    scn = _tiny(start=0)
    assert sc.load_scenario(scn)["flows"][0]["start"] == "0ns"


@pytest.mark.parametrize(
    ("flow", "expected"),
    [
        ({"tcp": {"cc": "newreno"}}, 'flows[0].tcp.cc: unknown algorithm "newreno"; NewReno is recovery'),
        ({"tcp": {"mss": 1460}}, 'flows[0].tcp.mss: 1460 has no unit; write a size such as "1460B"'),
        ({"tcp": {"recovery": "newrenoo"}}, "flows[0].tcp.recovery: unknown variant `newrenoo`"),
        ({"tcp": {"rto_min": "1 sec"}}, 'flows[0].tcp.rto_min: expected a time such as "20ms"'),
        ({"tcp": {"initial_window": "ten"}}, "flows[0].tcp.initial_window: invalid type: string"),
        ({"count": -1}, "flows[0].count: invalid value: integer `-1`"),
        ({"bogus": 1}, "flows[0].bogus: unknown field `bogus`"),
    ],
)
def test_errors_of_a_dict_name_the_field_path_not_a_json_position(flow, expected):
    scn = _tiny()
    scn["flows"][0].update(flow)
    with pytest.raises(ConfigError) as info:
        sc.load_scenario(scn)
    message = str(info.value)
    assert message.startswith(expected), message
    assert " line " not in message and "column" not in message, message


def test_rtt_sets_the_access_delays():
    scn = _tiny(name="far", rtt="80ms")
    normalized = sc.load_scenario(scn)
    assert normalized["flows"][0]["rtt"] == "80ms"
    r = flowshare.run(scn, progress=False)
    # 80 ms of propagation; a 1500 B segment on 100, 10 and 100 Mbit/s and its 40 B ACK back.
    serialization = 2 * 12000 / 100e6 + 12000 / 10e6 + 2 * 320 / 100e6 + 320 / 10e6
    assert r.flows.rtt_min_s[0] == pytest.approx(0.080 + serialization, abs=2e-9)


def test_rtt_below_the_bottleneck_is_refused():
    with pytest.raises(ConfigError, match=r"^flows\[0\]\.rtt: 10ms is less than the bottleneck's own two-way"):
        sc.load_scenario(_tiny(rtt="10ms"))


def test_red_helper():
    q = sc.red(limit=100, min_th=5, max_th=15, max_p=0.1, w_q=0.002, mode="packets", target_delay="5ms")
    assert q == {"kind": "red", "limit": 100, "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002,
                 "mode": "packets", "target_delay": "5ms"}
    scn = _tiny()
    scn["topology"]["bottleneck"]["queue"] = q
    assert sc.load_scenario(scn)["topology"]["bottleneck"]["queue"]["kind"] == "red"
    scn["topology"]["bottleneck"]["queue"] = sc.red(target_delay=5)
    with pytest.raises(ConfigError, match=r"^topology\.bottleneck\.queue\.target_delay: 5 has no unit"):
        sc.load_scenario(scn)


@pytest.mark.parametrize(
    "source",
    [
        sc.cbr(rate="2 Mbit/s"),
        sc.cbr(schedule=[["0.2s", "1Mbps"], ["0.6s", "3Mbps", "ramp"]], packet_size="500B"),
        sc.poisson(rate="1Mbps", jitter="1ms"),
        sc.on_off(rate="4Mbps", on="100ms", off="300ms", periods="pareto", shape=1.4),
        sc.vbr(rate="1Mbps", peak="3Mbps", fps=25),
    ],
)
def test_udp_source_helpers_build_what_the_loader_accepts(source):
    scn = sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="10ms"),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=[sc.flows(name="tcp"), sc.udp(source, name="udp", start="100ms")],
        duration="1s",
    )
    normalized = sc.load_scenario(scn)
    assert normalized["flows"][1]["transport"] == "udp"
    assert normalized["flows"][1]["source"]["kind"] == source["kind"]
    r = flowshare.run(scn, progress=False)
    assert r.flows.set_index("name").loc["udp", "packets_sent"] > 0


def test_udp_helper_refuses_tcp_options():
    with pytest.raises(TypeError, match="set by udp"):
        sc.udp(sc.cbr(rate="1Mbps"), tcp={"cc": "cubic"})


def test_the_worked_examples_of_docs_rtt_run(capsys):
    import re
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "rtt.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    for block in blocks:
        exec(compile(block, "docs/rtt.md", "exec"), {})  # noqa: S102
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert all("min RTT 81.4784 ms" in line for line in lines[:2]), lines
    utilization = [float(line.rsplit(" ", 1)[1]) for line in lines]
    # A buffer of one BDP keeps the link busier than a quarter of it.
    assert utilization[0] > utilization[1]
