"""EFCM ensembles from Python: a flow group's ``tcp`` mapping takes ``ensemble``, checked by the
core with one-line errors."""

from __future__ import annotations

import pytest

import flowshare
from flowshare import ConfigError
from flowshare import scenario as sc


def _scenario(ensemble: dict | None, **tcp: object) -> dict:
    options = {"initial_window": 3, "initial_ssthresh": 44, **tcp}
    if ensemble is not None:
        options["ensemble"] = ensemble
    return sc.graph(
        nodes=["S", "A", "R1", "R2"],
        links=[
            sc.link(from_="S", to="A", rate="10Mbps", delay="10ms", queue={"limit": 5000}),
            sc.link(from_="A", to="R1", rate="1Gbps", delay="1ms"),
            sc.link(from_="A", to="R2", rate="1Gbps", delay="25ms"),
        ],
        flows=[
            sc.flows(name="near", src="S", dst="R1", tcp=options),
            sc.flows(name="far", src="S", dst="R2", start="200ms", tcp=options),
        ],
        duration="3s",
        sample_interval="20ms",
    )


def _windows(result: flowshare.RunResult) -> list[tuple[float, float]]:
    s = result.flow_series
    s = s[s.time_s > 0.2]
    near = s[s.flow == 0].cwnd.to_list()
    far = s[s.flow == 1].cwnd.to_list()
    return list(zip(near, far))


def test_an_ensemble_keyed_by_receiver_network_shares_one_window() -> None:
    shared = flowshare.run(_scenario({"controller": "efcm"}), progress=False)
    pairs = _windows(shared)
    assert len(pairs) > 100
    assert all(a == b for a, b in pairs)
    plain = flowshare.run(_scenario(None), progress=False)
    assert sum(a == b for a, b in _windows(plain)) < len(pairs) // 10


@pytest.mark.parametrize(
    ("ensemble", "tcp", "message"),
    [
        ({"controller": "efcm", "key": "host"}, {}, r"flows\[0\]\.tcp\.ensemble\.key: unknown variant `host`"),
        (
            {"controller": "efcm", "alpha": "step", "alpha_fixed": 1.5},
            {},
            r'flows\[0\]\.tcp\.ensemble\.alpha_fixed: only used with alpha = "fixed", got alpha = "step"',
        ),
        ({"controller": "efcm"}, {"cc": "cubic"}, r'tcp\.ensemble\.controller: EFCM runs NewReno.*got "cubic"'),
        ({"controller": "efcm"}, {"initial_ssthresh": None}, r"set tcp\.initial_ssthresh"),
    ],
)
def test_bad_ensemble_settings_are_refused_with_the_field(ensemble: dict, tcp: dict, message: str) -> None:
    scenario = _scenario(ensemble, **tcp)
    for group in scenario["flows"]:
        group["tcp"] = {k: v for k, v in group["tcp"].items() if v is not None}
    with pytest.raises(ConfigError, match=message):
        flowshare.run(scenario, progress=False)
