//! `flowshare._core`: the narrow boundary between Python and the Rust core
//! (see docs/adr/0002-python-boundary.md). A scenario goes in as text; columnar results come
//! out as `(dtype, bytes)` pairs that numpy reads without copying element by element.

use flowshare_core::results::{Column, RunResults, Table};
use flowshare_core::units::{secs, NS_PER_SEC};
use flowshare_core::{scenario, Scenario, Simulation as CoreSim};
use flowshare_output::{Col, Frame};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

mod live;

create_exception!(
    _core,
    ConfigError,
    PyValueError,
    "A scenario that cannot be run: one line naming the field and what is allowed."
);

fn parse(text: &str, fmt: &str) -> PyResult<Scenario> {
    let parsed = match fmt {
        "toml" => scenario::from_toml(text),
        "json" => scenario::from_json(text),
        other => return Err(PyValueError::new_err(format!("fmt: expected \"toml\" or \"json\", got \"{other}\""))),
    };
    parsed.map_err(|e| ConfigError::new_err(e.to_string()))
}

/// Validate a scenario (TOML or JSON text) and return it as normalized JSON; relative file
/// names in it are read from `base_dir`.
#[pyfunction]
#[pyo3(signature = (text, fmt, base_dir=None))]
fn parse_scenario(text: &str, fmt: &str, base_dir: Option<std::path::PathBuf>) -> PyResult<String> {
    let mut s = parse(text, fmt)?;
    s.base_dir = base_dir;
    s.build().map_err(|e| ConfigError::new_err(e.to_string()))?;
    Ok(s.to_json())
}

/// A simulation that Python advances in slices.
#[pyclass(module = "flowshare._core")]
struct Simulation {
    inner: Option<CoreSim>,
    /// The scenario as normalized JSON (every default filled in, the seed applied).
    normalized: String,
}

impl Simulation {
    fn sim(&self) -> PyResult<&CoreSim> {
        self.inner.as_ref().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))
    }
}

#[pymethods]
impl Simulation {
    /// Parse, validate and build the scenario `text` (TOML or JSON) once; `seed` overrides
    /// `simulation.seed`; relative file names in the scenario are read from `base_dir`.
    #[new]
    #[pyo3(signature = (text, fmt="json", seed=None, base_dir=None, max_connections=None))]
    fn new(
        py: Python<'_>,
        text: &str,
        fmt: &str,
        seed: Option<u64>,
        base_dir: Option<std::path::PathBuf>,
        max_connections: Option<u64>,
    ) -> PyResult<Self> {
        let mut s = parse(text, fmt)?;
        s.base_dir = base_dir;
        if let Some(most) = max_connections {
            check_connections(&s, most)?;
        }
        if let Some(seed) = seed {
            s.simulation.seed = seed;
        }
        // The GIL is released while a large network is built, so that Python can say so.
        let sim = py.detach(|| CoreSim::new(&s)).map_err(|e| ConfigError::new_err(e.to_string()))?;
        Ok(Simulation { inner: Some(sim), normalized: s.to_json() })
    }

    /// The scenario as normalized JSON: every default filled in, the seed applied.
    #[getter]
    fn scenario_json(&self) -> &str {
        &self.normalized
    }

    /// Open a pcap file in `dir` (which must exist) for each link direction the scenario's
    /// `trace.pcap` selects; call before running. Returns their paths.
    fn open_pcap(&mut self, dir: std::path::PathBuf) -> PyResult<Vec<String>> {
        let sim = self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let paths = sim.set_pcap_dir(&dir).map_err(|e| PyOSError::new_err(format!("{}: {e}", dir.display())))?;
        Ok(paths.iter().map(|p| p.to_string_lossy().into_owned()).collect())
    }

    /// What the run is estimated to cost: `events`, `samples`, `series_rows`, `trace_rows`,
    /// `packets_held`, `memory_bytes` (the core's, apart from rows not yet taken; of it
    /// `packet_bytes` for the packets held),
    /// `series_row_bytes` and `trace_row_bytes` (core bytes per row not yet taken),
    /// `drivers`, a list of (field path, events), largest first, and `connections`.
    #[getter]
    fn estimate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = self.sim()?.estimate();
        let d = PyDict::new(py);
        d.set_item("events", e.events)?;
        d.set_item("samples", e.samples)?;
        d.set_item("series_rows", e.series_rows)?;
        d.set_item("trace_rows", e.trace_rows)?;
        d.set_item("packets_held", e.packets_held)?;
        d.set_item("memory_bytes", e.memory_bytes)?;
        d.set_item("packet_bytes", e.packet_bytes)?;
        d.set_item("series_row_bytes", flowshare_core::sim::BYTES_PER_SERIES_ROW)?;
        d.set_item("trace_row_bytes", flowshare_core::sim::BYTES_PER_TRACE_ROW)?;
        d.set_item("drivers", PyList::new(py, &e.drivers)?)?;
        d.set_item("connections", e.connections)?;
        Ok(d)
    }

    /// Simulated seconds the run lasts.
    #[getter]
    fn duration_s(&self) -> PyResult<f64> {
        Ok(secs(self.sim()?.end()))
    }

    /// Simulated seconds reached.
    #[getter]
    fn now_s(&self) -> PyResult<f64> {
        Ok(secs(self.sim()?.now()))
    }

    /// Advance to `t_s` seconds (capped at the end). The GIL is released meanwhile.
    fn run_until(&mut self, py: Python<'_>, t_s: f64) -> PyResult<()> {
        if !(t_s.is_finite() && t_s >= 0.0) {
            return Err(PyValueError::new_err(format!("t_s: expected a finite time >= 0, got {t_s}")));
        }
        let sim = self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let t = (t_s * NS_PER_SEC as f64).round() as u64;
        py.detach(|| sim.run_until(t));
        Ok(())
    }

    /// The transfers recorded since the last call, as a table (see `take_transfers` in the
    /// core); draining them while the run goes on keeps the core's memory bounded.
    fn take_transfers<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let t = sim.take_transfers();
        table_to_py(py, &t)
    }

    /// The rows of the `concurrency` table written since the last call, or `None` when the
    /// scenario does not ask for it (see `take_concurrency` in the core).
    fn take_concurrency<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let sim = self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        sim.take_concurrency().map(|t| table_to_py(py, &t)).transpose()
    }

    /// The time series sampled since the last call, as `{"flow_series": table,
    /// "queue_series": table}` (see `take_series` in the core).
    fn take_series<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let (flow_series, queue_series) = sim.take_series();
        let d = PyDict::new(py);
        d.set_item("flow_series", table_to_py(py, &flow_series)?)?;
        d.set_item("queue_series", table_to_py(py, &queue_series)?)?;
        Ok(d)
    }

    /// The traced events up to the time reached, since the last call, or `None` when the run
    /// traces no events (see `take_events` in the core).
    fn take_events<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let sim = self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        sim.take_events().map(|t| table_to_py(py, &t)).transpose()
    }

    /// Run to the end and return the results (see the ADR for the layout).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.inner.take().ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let results = py.detach(move || sim.finish());
        if let Some(e) = &results.trace.pcap_error {
            return Err(PyOSError::new_err(format!("writing pcap: {e}")));
        }
        results_to_py(py, &results)
    }
}

/// Refuse, before anything is allocated, a scenario with more listed flows, closed-loop
/// users and session sources than `most` (what the caller's memory budget can build), naming the largest group.
fn check_connections(s: &Scenario, most: u64) -> PyResult<()> {
    let size = |g: &scenario::FlowGroup| match &g.arrivals {
        Some(a) if a.sources.is_some() => (u64::from(a.sources.unwrap_or(0)), "arrivals.sources"),
        Some(a) => (u64::from(a.users.unwrap_or(0)), "arrivals.users"),
        None => (u64::from(g.count), "count"),
    };
    let total: u64 = s.flows.iter().map(|g| size(g).0).sum();
    if total <= most {
        return Ok(());
    }
    let (i, g) = s.flows.iter().enumerate().max_by_key(|(_, g)| size(g).0).expect("a group");
    Err(ConfigError::new_err(format!(
        "flows[{i}].{}: {total} connections in all would need more memory to build than the budget allows; at most {most} fit",
        size(g).1
    )))
}

fn table_to_py<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        match col {
            Column::F64(v) => set_numeric(py, &d, name, "<f8", v.len(), |b| {
                b.iter_mut().zip(v.iter().flat_map(|x| x.to_le_bytes())).for_each(|(o, x)| *o = x)
            })?,
            Column::I64(v) => set_numeric(py, &d, name, "<i8", v.len(), |b| {
                b.iter_mut().zip(v.iter().flat_map(|x| x.to_le_bytes())).for_each(|(o, x)| *o = x)
            })?,
            Column::Str(v) => {
                d.set_item(*name, PyList::new(py, v)?)?;
            }
        }
    }
    Ok(d)
}

/// Set `d[name]` to `(dtype, bytes)` for `n` 8-byte values, written by `fill` straight into
/// the Python bytes object (no intermediate copy: results can be large).
fn set_numeric(
    py: Python<'_>,
    d: &Bound<'_, PyDict>,
    name: &str,
    dtype: &str,
    n: usize,
    fill: impl FnOnce(&mut [u8]),
) -> PyResult<()> {
    let bytes = PyBytes::new_with(py, 8 * n, |b| {
        fill(b);
        Ok(())
    })?;
    d.set_item(name, PyTuple::new(py, [dtype.into_pyobject(py)?.into_any(), bytes.into_any()])?)
}

fn results_to_py<'py>(py: Python<'py>, r: &RunResults) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let s = PyDict::new(py);
    s.set_item("duration_s", r.summary.duration_s)?;
    s.set_item("warmup_s", r.summary.warmup_s)?;
    s.set_item("seed", r.summary.seed)?;
    s.set_item("events", r.summary.events)?;
    s.set_item("wall_s", r.summary.wall_s)?;
    s.set_item("scenario_hash", &r.summary.scenario_hash)?;
    s.set_item("version", &r.summary.version)?;
    out.set_item("summary", s)?;
    out.set_item("flows", table_to_py(py, &r.flows)?)?;
    out.set_item("queues", table_to_py(py, &r.queues)?)?;
    out.set_item("flow_series", table_to_py(py, &r.flow_series)?)?;
    out.set_item("queue_series", table_to_py(py, &r.queue_series)?)?;
    out.set_item("transfers", table_to_py(py, &r.transfers)?)?;
    if let Some(c) = &r.concurrency {
        out.set_item("concurrency", table_to_py(py, c)?)?;
    }
    out.set_item("delays", table_to_py(py, &r.delays)?)?;
    out.set_item("fct", table_to_py(py, &r.fct)?)?;
    out.set_item("members", table_to_py(py, &r.members)?)?;
    if let Some(events) = &r.trace.events {
        out.set_item("events", table_to_py(py, events)?)?;
        let codes = PyDict::new(py);
        for (column, names) in flowshare_core::trace::code_names() {
            codes.set_item(column, PyList::new(py, names)?)?;
        }
        out.set_item("event_codes", codes)?;
    }
    let pcap = PyList::empty(py);
    for f in &r.trace.pcap {
        let d = PyDict::new(py);
        d.set_item("queue", f.queue)?;
        d.set_item("path", f.path.to_string_lossy())?;
        d.set_item("packets", f.packets)?;
        pcap.append(d)?;
    }
    out.set_item("pcap", pcap)?;
    Ok(out)
}

/// A table from Python: a dict of columns (`(dtype, bytes)` with dtype `<f8` or `<i8`, or a
/// list of str), or a list of such dicts, the chunks of one table in order.
fn frame_from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Frame> {
    if let Ok(list) = obj.cast::<PyList>() {
        let chunks = list.iter().map(|c| frame_from_py(&c, what)).collect::<PyResult<Vec<_>>>()?;
        return Frame::concat(chunks).map_err(|e| PyValueError::new_err(format!("{what}: {e}")));
    }
    let dict = obj
        .cast::<PyDict>()
        .map_err(|_| PyValueError::new_err(format!("{what}: expected a dict of columns or a list of them")))?;
    let mut columns = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        let name: String = k.extract()?;
        let col = if let Ok(t) = v.cast::<PyTuple>() {
            if t.len() != 2 {
                return Err(PyValueError::new_err(format!("{what}.{name}: expected (dtype, bytes)")));
            }
            let dtype: String = t.get_item(0)?.extract()?;
            let item = t.get_item(1)?;
            let bytes = item
                .cast::<PyBytes>()
                .map_err(|_| PyValueError::new_err(format!("{what}.{name}: expected (dtype, bytes)")))?
                .as_bytes();
            if bytes.len() % 8 != 0 {
                return Err(PyValueError::new_err(format!("{what}.{name}: {} bytes is not whole values", bytes.len())));
            }
            let words = bytes.chunks_exact(8).map(|b| <[u8; 8]>::try_from(b).expect("8 bytes"));
            match dtype.as_str() {
                "<f8" | "float64" => Col::F64(words.map(f64::from_le_bytes).collect()),
                "<i8" | "int64" => Col::I64(words.map(i64::from_le_bytes).collect()),
                other => {
                    return Err(PyValueError::new_err(format!(
                        "{what}.{name}: dtype {other:?} not written; expected \"<f8\" or \"<i8\""
                    )))
                }
            }
        } else if let Ok(l) = v.cast::<PyList>() {
            Col::Str(l.iter().map(|x| x.str().map(|s| s.to_string())).collect::<PyResult<Vec<_>>>()?)
        } else {
            return Err(PyValueError::new_err(format!("{what}.{name}: expected (dtype, bytes) or a list of str")));
        };
        columns.push((name, col));
    }
    Frame::new(columns).map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

fn output_err(path: &std::path::Path, e: flowshare_output::OutputError) -> PyErr {
    match e {
        flowshare_output::OutputError::Io(io) => {
            let code = io.raw_os_error().unwrap_or(0);
            PyOSError::new_err((code, io.to_string(), path.to_string_lossy().into_owned()))
        }
        flowshare_output::OutputError::Data(m) => PyValueError::new_err(format!("{}: {m}", path.display())),
    }
}

/// Write `table` (a dict of columns or a list of chunks) to `path` as CSV, as pandas'
/// `to_csv(index=False)` writes it. The GIL is released while the file is written.
#[pyfunction]
fn write_csv(py: Python<'_>, table: &Bound<'_, PyAny>, path: std::path::PathBuf) -> PyResult<()> {
    let frame = frame_from_py(table, "table")?;
    py.detach(|| flowshare_output::csv::write(&frame, &path)).map_err(|e| output_err(&path, e))
}

/// Write the tidy time series of the flow and queue series (each a list of chunks) to `path`
/// as Parquet. The GIL is released while the file is written.
#[pyfunction]
fn write_timeseries(
    py: Python<'_>,
    flow_series: &Bound<'_, PyAny>,
    queue_series: &Bound<'_, PyAny>,
    path: std::path::PathBuf,
) -> PyResult<()> {
    let flow = frame_from_py(flow_series, "flow_series")?;
    let queue = frame_from_py(queue_series, "queue_series")?;
    py.detach(|| flowshare_output::parquet::write_timeseries(&flow, &queue, &path)).map_err(|e| output_err(&path, e))
}

/// Draw the plot of a run to `path` (PNG) and return its description as JSON text (see
/// `flowshare_output::plot`). `tables` holds `flows`, `queues`, `flow_series`,
/// `queue_series` and, when present, `delays`. The GIL is released while drawing.
#[pyfunction]
fn render_plot(
    py: Python<'_>,
    tables: &Bound<'_, PyDict>,
    duration_s: f64,
    path: std::path::PathBuf,
) -> PyResult<String> {
    let table = |name: &str| -> PyResult<Frame> {
        match tables.get_item(name)? {
            Some(t) => frame_from_py(&t, name),
            None => Ok(Frame::default()),
        }
    };
    let input = flowshare_output::plot::PlotInput {
        flows: table("flows")?,
        queues: table("queues")?,
        flow_series: table("flow_series")?,
        queue_series: table("queue_series")?,
        delays: match tables.get_item("delays")? {
            Some(t) if !t.is_none() => Some(frame_from_py(&t, "delays")?),
            _ => None,
        },
        duration_s,
    };
    let doc = py.detach(|| flowshare_output::plot::render(&input, &path)).map_err(|e| output_err(&path, e))?;
    Ok(doc.to_string())
}

/// Draw sequence-time panels of `flows` from the event trace `events` (a table or its chunks)
/// to `path` (PNG); `kind_names` and `packet_names` name the codes of the `kind` and `packet`
/// columns. Returns the description as JSON text. The GIL is released while drawing.
#[pyfunction]
fn render_seqplot(
    py: Python<'_>,
    events: &Bound<'_, PyAny>,
    kind_names: Vec<String>,
    packet_names: Vec<String>,
    flows: Vec<i64>,
    path: std::path::PathBuf,
) -> PyResult<String> {
    let events = frame_from_py(events, "events")?;
    let doc = py
        .detach(|| {
            let panels = flowshare_output::plot::build_seq(&events, &kind_names, &packet_names, &flows);
            flowshare_output::plot::write_png(&panels, &path).map(|_| flowshare_output::plot::describe(&panels))
        })
        .map_err(|e| output_err(&path, e))?;
    Ok(doc.to_string())
}

/// The congestion-control algorithms of the registry with their parameters and defaults, the
/// loss recoveries and the queue disciplines, as JSON (`flowshare algorithms`).
#[pyfunction]
fn algorithms_json() -> String {
    flowshare_core::cc::catalog::listing().to_string()
}

/// A quantity written with its unit, as a scenario reads it, in the base SI unit: `kind`
/// `"time"` gives seconds, `"rate"` bits per second, `"size"` bytes. `ValueError` with the
/// scenario loader's message (a bare number has no unit, an unknown unit lists the known ones).
#[pyfunction]
fn parse_quantity(kind: &str, text: &str) -> PyResult<f64> {
    use flowshare_core::units::{Bytes, Dur, Rate};
    let parsed = match kind {
        "time" => Dur::parse(text).map(|d| secs(d.0)),
        "rate" => Rate::parse(text).map(|r| r.0 as f64),
        "size" => Bytes::parse(text).map(|b| b.0 as f64),
        other => Err(format!("kind: expected \"time\", \"rate\" or \"size\", got \"{other}\"")),
    };
    parsed.map_err(PyValueError::new_err)
}

/// A 1-D numpy array (any object with the buffer protocol) of `T`, copied out; `what` names
/// the argument in the error.
fn array<T: pyo3::buffer::Element + Copy>(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<T>> {
    let buf = pyo3::buffer::PyBuffer::<T>::get(obj).map_err(|e| {
        PyValueError::new_err(format!("{what}: expected a 1-D array of {}: {e}", std::any::type_name::<T>()))
    })?;
    if buf.dimensions() != 1 {
        return Err(PyValueError::new_err(format!(
            "{what}: expected a 1-D array, got {} dimensions",
            buf.dimensions()
        )));
    }
    buf.to_vec(py)
}

/// Loss times in seconds: not NaN and sorted (the batch functions' precondition).
fn loss_times(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let t: Vec<f64> = array(py, obj, "times")?;
    if let Some(i) = t.iter().position(|x| x.is_nan()) {
        return Err(PyValueError::new_err(format!("times: NaN at index {i}")));
    }
    if let Some(i) = t.windows(2).position(|w| w[0] > w[1]) {
        return Err(PyValueError::new_err(format!("times: not sorted (index {} > index {})", i, i + 1)));
    }
    Ok(t)
}

fn grouping_rtt(rtt: f64, what: &str) -> PyResult<f64> {
    if rtt.is_nan() {
        return Err(PyValueError::new_err(format!("{what}: NaN cannot group losses")));
    }
    Ok(rtt)
}

fn i64_column<'py>(py: Python<'py>, v: impl ExactSizeIterator<Item = i64>) -> PyResult<Bound<'py, PyTuple>> {
    let n = v.len();
    let bytes = PyBytes::new_with(py, 8 * n, |b| {
        b.chunks_exact_mut(8).zip(v).for_each(|(o, x)| o.copy_from_slice(&x.to_le_bytes()));
        Ok(())
    })?;
    PyTuple::new(py, ["<i8".into_pyobject(py)?.into_any(), bytes.into_any()])
}

/// For each loss of `times` (seconds, sorted, float64), the index of its loss event when
/// losses within `rtt` seconds (inclusive) of an event's first loss belong to it
/// (`flowshare_core::loss_events`, the TFRC receiver's rule); `("<i8", bytes)`.
#[pyfunction]
fn loss_event_index<'py>(py: Python<'py>, times: &Bound<'py, PyAny>, rtt: f64) -> PyResult<Bound<'py, PyTuple>> {
    let t = loss_times(py, times)?;
    let rtt = grouping_rtt(rtt, "rtt")?;
    let idx = py.detach(|| flowshare_core::loss_events::event_index(&t, rtt));
    i64_column(py, idx.into_iter().map(|e| e as i64))
}

/// The loss events of the cumulative flow of losses `(times[i], flows[i])` (float64 seconds,
/// sorted; int64 flow ids) grouped by one `rtt`: a table of `start_s`, `losses`, `flows`
/// (distinct flows hit).
#[pyfunction]
fn cumulative_loss_events<'py>(
    py: Python<'py>,
    times: &Bound<'py, PyAny>,
    flows: &Bound<'py, PyAny>,
    rtt: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let t = loss_times(py, times)?;
    let f: Vec<i64> = array(py, flows, "flows")?;
    if f.len() != t.len() {
        return Err(PyValueError::new_err(format!("flows: {} values for {} times", f.len(), t.len())));
    }
    let rtt = grouping_rtt(rtt, "rtt")?;
    let events = py.detach(|| flowshare_core::loss_events::cumulative_events(&t, &f, rtt));
    let d = PyDict::new(py);
    set_numeric(py, &d, "start_s", "<f8", events.len(), |b| {
        b.chunks_exact_mut(8).zip(&events).for_each(|(o, e)| o.copy_from_slice(&e.start.to_le_bytes()))
    })?;
    d.set_item("losses", i64_column(py, events.iter().map(|e| e.losses as i64))?)?;
    d.set_item("flows", i64_column(py, events.iter().map(|e| e.flows as i64))?)?;
    Ok(d)
}

/// Loss events counted flow by flow, from losses `(times[i], flows[i])` (float64 seconds,
/// sorted; int64 flow ids): flow `ids[k]`'s losses are grouped by `rtts[k]` seconds. Returns
/// the count of each of `ids` as `("<i8", bytes)`; a loss of a flow not in `ids`, or a NaN
/// RTT of a flow with losses, is a `ValueError`.
#[pyfunction]
fn flow_loss_events<'py>(
    py: Python<'py>,
    times: &Bound<'py, PyAny>,
    flows: &Bound<'py, PyAny>,
    ids: &Bound<'py, PyAny>,
    rtts: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let t = loss_times(py, times)?;
    let f: Vec<i64> = array(py, flows, "flows")?;
    let ids: Vec<i64> = array(py, ids, "ids")?;
    let rtts: Vec<f64> = array(py, rtts, "rtts")?;
    if f.len() != t.len() {
        return Err(PyValueError::new_err(format!("flows: {} values for {} times", f.len(), t.len())));
    }
    if rtts.len() != ids.len() {
        return Err(PyValueError::new_err(format!("rtts: {} values for {} ids", rtts.len(), ids.len())));
    }
    let rtt_of: std::collections::BTreeMap<i64, f64> = ids.iter().copied().zip(rtts.iter().copied()).collect();
    if rtt_of.len() != ids.len() {
        return Err(PyValueError::new_err("ids: repeated flow ids"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for &flow in &f {
        if seen.insert(flow) {
            let r =
                rtt_of.get(&flow).ok_or_else(|| PyValueError::new_err(format!("flows: flow {flow} is not in ids")))?;
            grouping_rtt(*r, &format!("rtts: flow {flow}"))?;
        }
    }
    let counts = py.detach(|| flowshare_core::loss_events::flow_loss_events(&t, &f, |flow| rtt_of[&flow]));
    i64_column(py, ids.iter().map(|k| counts.get(k).map_or(0, |&c| c as i64)))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", flowshare_core::VERSION)?;
    m.add("build_profile", if cfg!(debug_assertions) { "debug" } else { "release" })?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add_function(wrap_pyfunction!(parse_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(write_csv, m)?)?;
    m.add_function(wrap_pyfunction!(write_timeseries, m)?)?;
    m.add_function(wrap_pyfunction!(render_plot, m)?)?;
    m.add_function(wrap_pyfunction!(render_seqplot, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms_json, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(loss_event_index, m)?)?;
    m.add_function(wrap_pyfunction!(cumulative_loss_events, m)?)?;
    m.add_function(wrap_pyfunction!(flow_loss_events, m)?)?;
    m.add_class::<Simulation>()?;
    live::register(m)?;
    Ok(())
}
