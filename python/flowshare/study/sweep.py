"""Sweep definitions: a base scenario, parameters combined into arms, replications, responses.

A sweep is a TOML or JSON file, or the same structure as a Python mapping (``docs/sweeps.md``)::

    base = "../demo.toml"            # or an inline [base] table
    set = { "simulation.duration" = "10s" }   # changed in every arm
    replications = 3
    root_seed = 1
    common_random_numbers = true     # default

    [grid]
    "topology.bottleneck.rate" = ["5Mbps", "10Mbps"]

    [responses]
    reno_goodput = { table = "flows", column = "goodput_bps", where = { cc = "reno" } }

Blocks (``grid``, ``zip``, ``points``, ``factorial``) each give a list of assignments of their
parameters; the arms are the cartesian product of the blocks, the first block varying slowest.
Every problem is a :class:`~flowshare.ConfigError` with one line naming the field.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from .. import sim as _sim
from .._core import ConfigError
from .._files import read_document_text
from ..guard import Budget
from ..results import RunResult
from . import design as _design

_CONFIG_ONLY = Budget(force=True)
"""The base and the ``[set]`` table are checked as configuration only: the resource guard
judges each arm when the sweep is validated or run (with the sweep's own ``force``), not a
base that is never run as it stands."""

__all__ = [
    "DEFAULT_DIRECTIONS",
    "DEFAULT_RESPONSES",
    "Response",
    "Run",
    "Sweep",
    "apply_parameter",
    "derive_seed",
    "evaluate_responses",
    "load_sweep",
    "parse_path",
]

FORMAT = 1
"""Version of the normalized sweep document (``sweep.json``)."""

DEFAULT_RESPONSES = ("flows", "goodput_bps", "jain_index", "drops", "retransmits", "timeouts")
"""Responses every sweep records: the keys of :meth:`RunResult.aggregate`."""

RESERVED_COLUMNS = frozenset(
    {"run_id", "arm", "replication", "seed", "scenario_hash", "version", "status",
     "started_at", "wall_s", "error"}
)

_TOP_FIELDS = (
    "base", "set", "replications", "root_seed", "common_random_numbers",
    "grid", "zip", "points", "factorial", "responses",
)
_RESPONSE_TABLES = ("flows", "queues")
_AGGREGATES = ("mean", "sum", "min", "max", "median", "std", "count")
_RESPONSE_FIELDS = ("table", "column", "where", "agg", "better")
_DIRECTIONS = ("higher", "lower")

DEFAULT_DIRECTIONS: dict[str, str | None] = {
    "flows": None,
    "goodput_bps": "higher",
    "jain_index": "higher",
    "drops": "lower",
    "retransmits": "lower",
    "timeouts": "lower",
}
"""Which values of each default response are better (``None``: neither; not ranked)."""
_FACTOR_FIELDS = ("parameter", "levels", "parameters")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")
_SEED_MASK = (1 << 63) - 1


# ---------------------------------------------------------------------------------------------
# Paths and seeds


def parse_path(path: str) -> list[str | int]:
    """Split a dotted parameter path such as ``flows[0].tcp.cc`` into keys and indices.

    Raises
    ------
    ValueError
        If the path is not dot-separated names, each optionally followed by ``[index]``.
    """
    if not isinstance(path, str) or not path:
        raise ValueError("expected a dotted path such as topology.bottleneck.rate")
    parts: list[str | int] = []
    for segment in path.split("."):
        match = _SEGMENT.match(segment)
        if match is None:
            raise ValueError(
                f"{segment!r} is not a field name; expected a dotted path such as "
                "topology.bottleneck.rate or flows[0].tcp.cc"
            )
        parts.append(match.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))
    return parts


def apply_parameter(scenario: dict[str, Any], path: str, value: Any) -> None:
    """Set the field at ``path`` of a scenario mapping to ``value``, in place.

    Missing tables on the way are created (``flows[0].tcp.cc`` works on a flow group without a
    ``tcp`` table); list indices must exist.

    Raises
    ------
    ValueError
        If an index is out of range or a step of the path is not a table or a list.
    """
    parts = parse_path(path)
    node: Any = scenario
    walked = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ValueError(f"{walked} is not a list in the base scenario")
            if part >= len(node):
                raise ValueError(
                    f"index {part} is out of range: {walked} has {len(node)} entries in the "
                    "base scenario"
                )
            step = f"{walked}[{part}]"
        else:
            if not isinstance(node, dict):
                raise ValueError(f"{walked} is not a table in the base scenario")
            step = f"{walked}.{part}" if walked else part
        if last:
            node[part] = copy.deepcopy(value)
            return
        if isinstance(part, str) and part not in node:
            node[part] = [] if isinstance(parts[i + 1], int) else {}
        node = node[part]
        walked = step


def derive_seed(root_seed: int, replication: int, arm: int | None = None) -> int:
    """The seed of a run: a hash of the root seed and the replication index (and the arm when
    common random numbers are off), as a non-negative 63-bit integer.

    Hashing keeps the replications' streams unrelated even for neighbouring root seeds, and
    the same inputs always give the same seed.
    """
    key = f"flowshare-sweep/{root_seed}/{replication}"
    if arm is not None:
        key += f"/arm/{arm}"
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & _SEED_MASK


def scenario_hash(scenario: Mapping[str, Any]) -> str:
    """SHA-256 of the scenario as canonical JSON (sorted keys), first 16 hex digits."""
    text = json.dumps(scenario, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# Responses


@dataclass(frozen=True)
class Response:
    """A scalar read from one run: ``agg`` of ``table.column`` over the rows matching ``where``."""

    name: str
    table: str
    column: str
    where: dict[str, Any] = field(default_factory=dict)
    agg: str = "mean"
    better: str | None = None
    """``"higher"`` or ``"lower"``: which values are better (rank 1 in a report's rank
    matrices); ``None`` when not stated."""

    def to_dict(self) -> dict[str, Any]:
        out = {"table": self.table, "column": self.column, "where": self.where, "agg": self.agg}
        if self.better is not None:
            out["better"] = self.better
        return out

    def evaluate(self, result: RunResult) -> float:
        """The response's value for ``result``.

        ``count`` counts the matching rows; the other aggregates leave out ``NaN`` values (a
        metric that does not apply) and are ``NaN`` when nothing is left (``sum`` is 0).

        Raises
        ------
        ValueError
            If the table has no such column.
        """
        frame = getattr(result, self.table)
        for name in (self.column, *self.where):
            if name not in frame.columns:
                raise ValueError(
                    f"responses.{self.name}: {self.table} has no column {name!r}; its columns "
                    f"are {', '.join(map(str, frame.columns))}"
                )
        mask = np.ones(len(frame), dtype=bool)
        for name, wanted in self.where.items():
            values = frame[name]
            if isinstance(wanted, list):
                mask &= values.isin(wanted).to_numpy()
            else:
                mask &= (values == wanted).to_numpy()
        selected = frame.loc[mask, self.column].to_numpy(dtype=float, na_value=np.nan)
        if self.agg == "count":
            return float(len(selected))
        # NaN marks a value that does not apply (a flow that never started): left out.
        selected = selected[~np.isnan(selected)]
        if self.agg == "sum":
            return float(np.sum(selected))
        if len(selected) == 0 or (self.agg == "std" and len(selected) < 2):
            return math.nan
        function = {
            "mean": np.mean, "min": np.min, "max": np.max, "median": np.median,
            "std": lambda x: np.std(x, ddof=1),
        }[self.agg]
        return float(function(selected))


def evaluate_responses(result: RunResult, responses: Sequence[Response]) -> dict[str, float]:
    """The default responses (``RunResult.aggregate()``) and the declared ones, as floats
    (``NaN`` where undefined)."""
    aggregate = result.aggregate()
    values = {
        name: math.nan if aggregate.get(name) is None else float(aggregate[name])
        for name in DEFAULT_RESPONSES
    }
    for response in responses:
        values[response.name] = response.evaluate(result)
    return values


# ---------------------------------------------------------------------------------------------
# The sweep


@dataclass(frozen=True)
class Run:
    """One run of a sweep: an arm, a replication, its seed and its complete scenario."""

    run_id: str
    arm: int
    replication: int
    seed: int
    scenario: dict[str, Any]
    scenario_hash: str


@dataclass
class Sweep:
    """A validated sweep. Build it with :func:`load_sweep`.

    Attributes
    ----------
    base : dict
        The base scenario as written (not normalized).
    parameters : list of str
        The dotted paths that vary, in declaration order.
    arms : list of dict
        Each arm's parameter values.
    replications, root_seed, common_random_numbers
        Replications per arm, the seed every run's seed derives from, and whether the same
        replication index gets the same seed in every arm.
    responses : list of Response
        The declared responses (the defaults are always recorded as well).
    blocks : list of dict
        How the arms were built, for ``sweep.json``.
    coded : list of dict or None
        With a factorial block, each arm's factor levels (−1/+1) by letter.
    source_text, source_suffix
        The sweep as given (file text, or JSON of the mapping) and its kind (``.toml`` or
        ``.json``), copied into the run store.
    """

    base: dict[str, Any]
    parameters: list[str]
    arms: list[dict[str, Any]]
    replications: int = 1
    root_seed: int = 1
    common_random_numbers: bool = True
    responses: list[Response] = field(default_factory=list)
    blocks: list[dict[str, Any]] = field(default_factory=list)
    coded: list[dict[str, int]] | None = None
    source_text: str = ""
    source_suffix: str = ".json"
    label: str = "sweep"

    @property
    def response_names(self) -> list[str]:
        return [*DEFAULT_RESPONSES, *(r.name for r in self.responses)]

    def seed(self, arm: int, replication: int) -> int:
        """The seed of run (``arm``, ``replication``)."""
        return derive_seed(
            self.root_seed, replication, None if self.common_random_numbers else arm
        )

    def run_id(self, arm: int, replication: int) -> str:
        width_a = max(3, len(str(len(self.arms) - 1)))
        width_r = max(2, len(str(self.replications - 1)))
        return f"a{arm:0{width_a}d}-r{replication:0{width_r}d}"

    def arm_scenario(self, arm: int) -> dict[str, Any]:
        """The base scenario with arm ``arm``'s parameter values applied (not normalized)."""
        scenario = copy.deepcopy(self.base)
        for path, value in self.arms[arm].items():
            try:
                apply_parameter(scenario, path, value)
            except ValueError as exc:
                raise ConfigError(f"{self.label}: {self._arm_label(arm)}: {path}: {exc}") from None
        return scenario

    def validate(self, *, force: bool = False) -> list[dict[str, Any]]:
        """Check every arm: apply its parameters, validate the scenario and build its network.

        With ``force`` the resource guard's estimate does not refuse an arm (see
        :func:`flowshare.study.run_sweep`).

        Returns
        -------
        list of dict
            Each arm's normalized scenario (seed not yet set).

        Raises
        ------
        ConfigError
            For the first invalid arm, naming the arm, its parameter values and the field.
        """
        normalized = []
        for arm in range(len(self.arms)):
            scenario = self.arm_scenario(arm)
            try:
                normalized.append(
                    _sim.validate(scenario, budget=Budget(force=True) if force else None)
                )
            except ConfigError as exc:
                raise ConfigError(f"{self.label}: {self._arm_label(arm)}: {exc}") from None
        return normalized

    def runs(self, normalized: Sequence[dict[str, Any]] | None = None) -> list[Run]:
        """Every run, arm by arm and, within an arm, by replication."""
        if normalized is None:
            normalized = self.validate()
        runs = []
        for arm, scenario in enumerate(normalized):
            for rep in range(self.replications):
                seed = self.seed(arm, rep)
                with_seed = copy.deepcopy(scenario)
                with_seed.setdefault("simulation", {})["seed"] = seed
                runs.append(
                    Run(self.run_id(arm, rep), arm, rep, seed, with_seed, scenario_hash(with_seed))
                )
        return runs

    def to_json(self) -> dict[str, Any]:
        """The normalized sweep written to ``sweep.json``."""
        arms = []
        for i, values in enumerate(self.arms):
            entry: dict[str, Any] = {"arm": i, "values": values}
            if self.coded is not None:
                entry["coded"] = self.coded[i]
            arms.append(entry)
        return {
            "format": FORMAT,
            "version": __version__,
            "parameters": list(self.parameters),
            "responses": self.response_names,
            "response_definitions": {r.name: r.to_dict() for r in self.responses},
            "replications": self.replications,
            "root_seed": self.root_seed,
            "common_random_numbers": self.common_random_numbers,
            "design": {"arms": len(self.arms), "blocks": self.blocks},
            "arms": arms,
            "base": self.base,
        }

    def _arm_label(self, arm: int) -> str:
        values = ", ".join(f"{k} = {json.dumps(v)}" for k, v in self.arms[arm].items())
        return f"arm {arm} ({values})" if values else f"arm {arm}"


# ---------------------------------------------------------------------------------------------
# Loading


def load_sweep(
    source: str | Path | Mapping[str, Any], *, base_dir: str | Path | None = None
) -> Sweep:
    """Read and check a sweep: a ``.toml`` or ``.json`` file, or a mapping.

    Parameters
    ----------
    source : str, path or mapping
        The sweep. A base scenario given as a path is relative to the sweep file (to
        ``base_dir``, default the working directory, for a mapping).
    base_dir : str or path, optional
        Directory for relative base paths of a mapping.

    Raises
    ------
    ConfigError
        One line naming the field and what is allowed. The arms' scenarios are not validated
        here; :meth:`Sweep.validate` does that.
    FileNotFoundError
        If the sweep file or the base scenario file is missing.
    """
    if isinstance(source, Mapping):
        label = "sweep"
        document = dict(source)
        try:
            text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"sweep is not representable as JSON: {exc}") from None
        suffix = ".json"
        directory = Path(base_dir) if base_dir is not None else Path.cwd()
    else:
        path = Path(source)
        label = str(path)
        text, fmt = read_document_text(path, "sweep")
        suffix = f".{fmt}"
        try:
            document = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{path}: invalid {suffix[1:].upper()}: {exc}") from None
        if not isinstance(document, dict):
            raise ConfigError(f"{path}: expected a table at the top level")
        directory = path.parent
    return _Loader(label, directory).load(document, text, suffix)


class _Loader:
    def __init__(self, label: str, directory: Path) -> None:
        self.label = label
        self.directory = directory

    def fail(self, where: str, message: str) -> ConfigError:
        return ConfigError(f"{self.label}: {where}: {message}")

    def load(self, doc: dict[str, Any], text: str, suffix: str) -> Sweep:
        for key in doc:
            if key not in _TOP_FIELDS:
                raise self.fail(key, f"unknown field; allowed: {', '.join(_TOP_FIELDS)}")
        base = self.base(doc.get("base"))
        if "set" in doc:
            base = self.fixed(base, doc["set"])
        replications = self.integer(doc, "replications", 1, minimum=1)
        root_seed = self.integer(doc, "root_seed", 1, minimum=0)
        crn = doc.get("common_random_numbers", True)
        if not isinstance(crn, bool):
            raise self.fail("common_random_numbers", f"expected true or false, got {crn!r}")

        blocks: list[tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, int]] | None]] = []
        if "grid" in doc:
            blocks.append(self.grid(doc["grid"]))
        if "zip" in doc:
            blocks.extend(self.zips(doc["zip"]))
        if "points" in doc:
            blocks.append(self.points(doc["points"]))
        if "factorial" in doc:
            blocks.append(self.factorial(doc["factorial"]))

        parameters: list[str] = []
        owner: dict[str, str] = {}
        for info, _, _ in blocks:
            for p in info["parameters"]:
                if p in owner:
                    raise self.fail(
                        f"{info['kind']}.{_quote(p)}",
                        f"parameter already set by {owner[p]}; each parameter belongs to one "
                        "block",
                    )
                owner[p] = info["kind"]
                parameters.append(p)

        arms: list[dict[str, Any]] = []
        coded: list[dict[str, int]] | None = (
            [] if any(c is not None for _, _, c in blocks) else None
        )
        for combo in itertools.product(*(range(len(rows)) for _, rows, _ in blocks)):
            values: dict[str, Any] = {}
            codes: dict[str, int] = {}
            for (_, rows, block_codes), i in zip(blocks, combo, strict=True):
                values.update(rows[i])
                if block_codes is not None:
                    codes.update(block_codes[i])
            arms.append(values)
            if coded is not None:
                coded.append(codes)

        responses = self.responses(doc.get("responses", {}), parameters)
        return Sweep(
            base=base,
            parameters=parameters,
            arms=arms,
            replications=replications,
            root_seed=root_seed,
            common_random_numbers=crn,
            responses=responses,
            blocks=[info for info, _, _ in blocks],
            coded=coded,
            source_text=text,
            source_suffix=suffix,
            label=self.label,
        )

    # -- fields ---------------------------------------------------------------------------

    def base(self, value: Any) -> dict[str, Any]:
        if value is None:
            raise self.fail(
                "base", "missing; give a scenario file path or an inline [base] table"
            )
        if isinstance(value, Mapping):
            scenario = json.loads(json.dumps(value))
            try:
                _sim.validate(scenario, budget=_CONFIG_ONLY)
            except ConfigError as exc:
                raise self.fail("base", str(exc)) from None
            return scenario
        if not isinstance(value, str):
            raise self.fail(
                "base", f"expected a scenario file path or a table, got {_kind(value)}"
            )
        path = self.directory / value
        suffix = path.suffix.lower()
        if suffix not in (".toml", ".json"):
            raise self.fail("base", f"{value!r} is not a .toml or .json scenario file")
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise self.fail("base", f"scenario file not found: {path}") from None
        try:
            scenario = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise self.fail("base", f"{path}: invalid {suffix[1:].upper()}: {exc}") from None
        try:
            _sim.validate(scenario, budget=_CONFIG_ONLY)
        except ConfigError as exc:
            raise self.fail("base", f"{path}: {exc}") from None
        return scenario

    def fixed(self, base: dict[str, Any], value: Any) -> dict[str, Any]:
        """Apply the ``[set]`` table: fields changed in every arm (not parameters)."""
        table = self.table("set", value)
        for path, v in table.items():
            where = f"set.{_quote(path)}"
            self.parameter(where, path)
            self.value(where, v)
            try:
                apply_parameter(base, path, v)
            except ValueError as exc:
                raise self.fail(where, str(exc)) from None
        try:
            _sim.validate(base, budget=_CONFIG_ONLY)
        except ConfigError as exc:
            raise self.fail("set", str(exc)) from None
        return base

    def integer(self, doc: Mapping[str, Any], key: str, default: int, *, minimum: int) -> int:
        value = doc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"expected an integer >= {minimum}, got {value!r}")
        if value > _SEED_MASK:
            raise self.fail(key, f"expected an integer < 2^63, got {value!r}")
        return value

    def parameter(self, where: str, path: Any) -> str:
        try:
            parse_path(path)
        except ValueError as exc:
            raise self.fail(where, str(exc)) from None
        if path in ("simulation.seed", "simulation"):
            raise self.fail(
                where,
                "the seed is set per run from root_seed and the replication; use root_seed "
                "and common_random_numbers instead",
            )
        return str(path)

    def values(self, where: str, values: Any) -> list[Any]:
        if not isinstance(values, list) or not values:
            raise self.fail(where, f"expected a non-empty list of values, got {_kind(values)}")
        for v in values:
            self.value(where, v)
        return values

    def value(self, where: str, value: Any) -> Any:
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise self.fail(
                where, f"{value!r} is not a scenario value (string, number, boolean, list or table)"
            ) from None
        return value

    def table(self, where: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping) or not value:
            raise self.fail(where, f"expected a non-empty table, got {_kind(value)}")
        return dict(value)

    # -- blocks ---------------------------------------------------------------------------

    def grid(self, value: Any) -> tuple[dict[str, Any], list[dict[str, Any]], None]:
        table = self.table("grid", value)
        names = [self.parameter(f"grid.{_quote(p)}", p) for p in table]
        lists = [self.values(f"grid.{_quote(p)}", table[p]) for p in names]
        rows = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*lists)]
        return {"kind": "grid", "parameters": names}, rows, None

    def zips(self, value: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]], None]]:
        groups = [value] if isinstance(value, Mapping) else value
        if not isinstance(groups, list) or not groups:
            raise self.fail("zip", f"expected a table or a list of tables, got {_kind(value)}")
        out = []
        for g, group in enumerate(groups):
            label = "zip" if isinstance(value, Mapping) else f"zip[{g}]"
            table = self.table(label, group)
            names = [self.parameter(f"{label}.{_quote(p)}", p) for p in table]
            lists = [self.values(f"{label}.{_quote(p)}", table[p]) for p in names]
            lengths = {p: len(v) for p, v in zip(names, lists, strict=True)}
            if len(set(lengths.values())) > 1:
                detail = ", ".join(f"{_quote(p)} has {n}" for p, n in lengths.items())
                raise self.fail(label, f"lists must have the same length ({detail})")
            rows = [dict(zip(names, combo, strict=True)) for combo in zip(*lists, strict=True)]
            out.append(({"kind": label, "parameters": names}, rows, None))
        return out

    def points(self, value: Any) -> tuple[dict[str, Any], list[dict[str, Any]], None]:
        if not isinstance(value, list) or not value:
            raise self.fail(
                "points", f"expected a non-empty list of tables ([[points]]), got {_kind(value)}"
            )
        names: list[str] | None = None
        rows = []
        for i, point in enumerate(value):
            table = self.table(f"points[{i}]", point)
            keys = [self.parameter(f"points[{i}].{_quote(p)}", p) for p in table]
            if names is None:
                names = keys
            elif set(keys) != set(names):
                raise self.fail(
                    f"points[{i}]",
                    f"sets {', '.join(sorted(keys))}; every point must set the same parameters "
                    f"as points[0] ({', '.join(names)})",
                )
            rows.append({p: self.value(f"points[{i}].{_quote(p)}", table[p]) for p in names})
        return {"kind": "points", "parameters": list(names or [])}, rows, None

    def factorial(
        self, value: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, int]]]:
        table = self.table("factorial", value)
        for key in table:
            if key not in ("factors", "generators"):
                raise self.fail(f"factorial.{key}", "unknown field; allowed: factors, generators")
        factors = self.table("factorial.factors", table.get("factors"))
        generators = table.get("generators", {})
        if not isinstance(generators, Mapping):
            raise self.fail("factorial.generators", f"expected a table, got {_kind(generators)}")
        letters = list(factors)
        for letter in letters:
            if not re.fullmatch(r"[A-Z]", letter):
                raise self.fail(
                    f"factorial.factors.{letter}", "factor names are single capital letters A-Z"
                )
        for letter, word in generators.items():
            where = f"factorial.generators.{letter}"
            if letter not in factors:
                raise self.fail(where, f"not a factor; the factors are {', '.join(letters)}")
            if not isinstance(word, str):
                raise self.fail(where, f"expected a string such as \"ABC\", got {_kind(word)}")
        try:
            matrix = _design.fractional_factorial(letters, dict(generators))
        except ValueError as exc:
            raise self.fail("factorial.generators", str(exc)) from None

        levels: dict[str, dict[str, list[Any]]] = {}
        for letter in letters:
            where = f"factorial.factors.{letter}"
            spec = self.table(where, factors[letter])
            for key in spec:
                if key not in _FACTOR_FIELDS:
                    raise self.fail(
                        f"{where}.{key}",
                        "unknown field; allowed: parameter and levels, or parameters",
                    )
            if "parameters" in spec:
                if "parameter" in spec or "levels" in spec:
                    raise self.fail(where, "give either parameter and levels, or parameters")
                pairs = self.table(f"{where}.parameters", spec["parameters"])
            else:
                if "parameter" not in spec or "levels" not in spec:
                    missing = "parameter" if "parameter" not in spec else "levels"
                    raise self.fail(f"{where}.{missing}", "missing; a factor needs parameter "
                                    "and levels = [low, high]")
                if not isinstance(spec["parameter"], str):
                    raise self.fail(f"{where}.parameter", "expected a dotted path string")
                pairs = {spec["parameter"]: spec["levels"]}
            levels[letter] = {}
            for path, pair in pairs.items():
                if "parameters" in spec:
                    label = path_label = f"{where}.parameters.{_quote(path)}"
                else:
                    label, path_label = f"{where}.levels", f"{where}.parameter"
                self.parameter(path_label, path)
                if not isinstance(pair, list) or len(pair) != 2:
                    raise self.fail(
                        label, f"expected two values [low, high], got {_describe_levels(pair)}"
                    )
                for v in pair:
                    self.value(label, v)
                levels[letter][path] = pair
        names = [p for letter in letters for p in levels[letter]]
        if len(set(names)) != len(names):
            dup = next(p for p in names if names.count(p) > 1)
            raise self.fail("factorial.factors", f"parameter {_quote(dup)} is set by two factors")
        rows = []
        codes = []
        for row in matrix:
            assignment: dict[str, Any] = {}
            code: dict[str, int] = {}
            for letter, level in zip(letters, row, strict=True):
                code[letter] = int(level)
                for path, pair in levels[letter].items():
                    assignment[path] = pair[0] if level < 0 else pair[1]
            rows.append(assignment)
            codes.append(code)
        info = {
            "kind": "factorial",
            "parameters": names,
            "factors": {letter: levels[letter] for letter in letters},
            "generators": dict(generators),
            "resolution": _design.resolution(dict(generators)),
            "runs": len(matrix),
        }
        return info, rows, codes

    def responses(self, value: Any, parameters: Sequence[str]) -> list[Response]:
        if not isinstance(value, Mapping):
            raise self.fail("responses", f"expected a table of responses, got {_kind(value)}")
        out = []
        for name, spec in value.items():
            where = f"responses.{name}"
            if not _NAME.match(name):
                raise self.fail(where, "a response name is letters, digits and _ (not first)")
            if name in DEFAULT_RESPONSES:
                raise self.fail(
                    where,
                    f"{name} is a default response (recorded always); choose another name",
                )
            if name in RESERVED_COLUMNS or name in parameters:
                raise self.fail(where, "clashes with a catalog column; choose another name")
            spec = self.table(where, spec)
            for key in spec:
                if key not in _RESPONSE_FIELDS:
                    raise self.fail(
                        f"{where}.{key}", f"unknown field; allowed: {', '.join(_RESPONSE_FIELDS)}"
                    )
            table = spec.get("table")
            if table not in _RESPONSE_TABLES:
                raise self.fail(
                    f"{where}.table",
                    f"expected one of {', '.join(_RESPONSE_TABLES)}, got {table!r}",
                )
            column = spec.get("column")
            if not isinstance(column, str) or not column:
                raise self.fail(f"{where}.column", f"expected a column name, got {column!r}")
            agg = spec.get("agg", "mean")
            if agg not in _AGGREGATES:
                raise self.fail(
                    f"{where}.agg", f"expected one of {', '.join(_AGGREGATES)}, got {agg!r}"
                )
            filters = spec.get("where", {})
            if not isinstance(filters, Mapping):
                raise self.fail(
                    f"{where}.where", f"expected a table of column = value, got {_kind(filters)}"
                )
            for col, wanted in filters.items():
                items = wanted if isinstance(wanted, list) else [wanted]
                if not items or not all(isinstance(v, str | int | float) for v in items):
                    raise self.fail(
                        f"{where}.where.{col}",
                        "expected a value or a non-empty list of values (string, number, boolean)",
                    )
            better = spec.get("better")
            if better is not None and better not in _DIRECTIONS:
                raise self.fail(
                    f"{where}.better",
                    f"expected \"higher\" or \"lower\" (which values are better), got {better!r}",
                )
            out.append(Response(name, table, column, dict(filters), agg, better))
        return out


def _quote(path: str) -> str:
    return f'"{path}"' if "." in path or "[" in path else path


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "an empty table" if not value else "a table"
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return type(value).__name__


def _describe_levels(value: Any) -> str:
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return _kind(value)
