//! Live mode's Rust parts, started from Python: the link emulator and a live endpoint each
//! run on a thread of their own, so that the Python process that owns it keeps handling signals and can stop it
//! (`stop`) and collect its report (`join`) without holding the GIL while it runs.

use flowshare_core::scenario;
use flowshare_emu::{EmulatorConfig, LinkSelect};
use flowshare_live::{EndpointConfig, Side};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde::Deserialize;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

/// What Python asks of the emulator (JSON; every field named as the error messages name it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmulatorRequest {
    /// The scenario (normalized JSON object) whose link is emulated.
    scenario: serde_json::Value,
    /// Which link: its name (`r0-r1` is a dumbbell's bottleneck).
    link: String,
    ns_a: String,
    ns_b: String,
    address_a: Ipv4Addr,
    address_b: Ipv4Addr,
    duration_s: f64,
    #[serde(default)]
    pcap: Option<PathBuf>,
    /// The event trace's file of records and the flows' ports.
    #[serde(default)]
    events: Option<flowshare_emu::EventsConfig>,
    #[serde(default)]
    busy_poll: bool,
}

fn emulator_config(request_json: &str) -> PyResult<EmulatorConfig> {
    let de = &mut serde_json::Deserializer::from_str(request_json);
    let r: EmulatorRequest = serde_path_to_error::deserialize(de)
        .map_err(|e| PyValueError::new_err(format!("emulator request: {}: {}", e.path(), e.inner())))?;
    let scenario = scenario::from_json(&r.scenario.to_string())
        .map_err(|e| crate::ConfigError::new_err(format!("scenario: {e}")))?;
    let duration = positive_seconds(r.duration_s)?;
    let mut cfg = EmulatorConfig::new(r.ns_a, r.ns_b, scenario, LinkSelect::Name(r.link));
    cfg.addr_a = r.address_a;
    cfg.addr_b = r.address_b;
    cfg.duration = duration;
    cfg.pcap = r.pcap;
    cfg.events = r.events;
    cfg.busy_poll = r.busy_poll;
    cfg.check().map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(cfg)
}

/// A live part running on a thread of its own, with a flag that asks it to stop.
struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<String, String>>>,
}

impl Running {
    /// Run `work` (given the stop flag and a `ready` callback) on a thread; return once it has
    /// called `ready`, or with its error if it ended first.
    fn start<F>(py: Python<'_>, what: &str, work: F) -> PyResult<Running>
    where
        F: FnOnce(&AtomicBool, Box<dyn FnOnce() + Send>) -> Result<String, String> + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            work(
                &flag,
                Box::new(move || {
                    let _ = ready_tx.send(());
                }),
            )
        });
        // The channel closes without a message when the run fails before it is ready.
        if py.detach(move || ready_rx.recv()).is_err() {
            let outcome = thread.join().map_err(|_| PyRuntimeError::new_err(format!("the {what} panicked")))?;
            let message = outcome.err().unwrap_or_else(|| format!("the {what} ended before it was ready"));
            return Err(PyRuntimeError::new_err(message));
        }
        Ok(Running { stop, thread: Some(thread) })
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    fn join(&mut self, py: Python<'_>, what: &str) -> PyResult<String> {
        let thread =
            self.thread.take().ok_or_else(|| PyRuntimeError::new_err(format!("the {what} was joined already")))?;
        let outcome =
            py.detach(|| thread.join()).map_err(|_| PyRuntimeError::new_err(format!("the {what} panicked")))?;
        outcome.map_err(PyRuntimeError::new_err)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Never leave a thread holding devices or sockets: stop it and wait.
        self.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn to_json<T: serde::Serialize, E: std::fmt::Display>(r: Result<T, E>) -> Result<String, String> {
    r.map_err(|e| e.to_string()).and_then(|r| serde_json::to_string(&r).map_err(|e| e.to_string()))
}

/// A running link emulator.
#[pyclass(module = "flowshare._core")]
pub struct Emulator(Running);

#[pymethods]
impl Emulator {
    /// Start the emulator of `request` (JSON) and return once its devices are up; an error
    /// before that (a namespace, a device, the scenario) is raised here.
    #[new]
    fn new(py: Python<'_>, request: &str) -> PyResult<Self> {
        let cfg = emulator_config(request)?;
        Running::start(py, "link emulator", move |stop, ready| to_json(flowshare_emu::run(&cfg, stop, ready)))
            .map(Emulator)
    }

    /// Ask the emulator to stop (it ends within a few milliseconds).
    fn stop(&self) {
        self.0.stop();
    }

    /// Whether the run has ended (its duration passed, stopped, or failed).
    fn finished(&self) -> bool {
        self.0.finished()
    }

    /// Wait for the run to end and return its report as JSON.
    fn join(&mut self, py: Python<'_>) -> PyResult<String> {
        self.0.join(py, "link emulator")
    }
}

/// What Python asks of a live endpoint (JSON).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointRequest {
    /// The scenario (normalized JSON object) the flow is taken from.
    scenario: serde_json::Value,
    /// The flow's index among the scenario's listed flows.
    flow: usize,
    /// `"source"` or `"destination"`.
    side: String,
    bind: SocketAddr,
    peer: SocketAddr,
    duration_s: f64,
    /// `n` of the host's other MulTFRC connections (the per-host cap counts them).
    #[serde(default)]
    multfrc_host_n_other: f64,
}

fn endpoint_config(request_json: &str) -> PyResult<EndpointConfig> {
    let de = &mut serde_json::Deserializer::from_str(request_json);
    let r: EndpointRequest = serde_path_to_error::deserialize(de)
        .map_err(|e| PyValueError::new_err(format!("endpoint request: {}: {}", e.path(), e.inner())))?;
    let scenario = scenario::from_json(&r.scenario.to_string())
        .map_err(|e| crate::ConfigError::new_err(format!("scenario: {e}")))?;
    let side = match r.side.as_str() {
        "source" => Side::Source,
        "destination" => Side::Destination,
        other => {
            return Err(PyValueError::new_err(format!("side: expected \"source\" or \"destination\", got \"{other}\"")))
        }
    };
    let mut cfg = EndpointConfig::new(scenario, r.flow, side, r.bind, r.peer, positive_seconds(r.duration_s)?);
    cfg.multfrc_host_n_other = r.multfrc_host_n_other;
    Ok(cfg)
}

fn positive_seconds(s: f64) -> PyResult<Duration> {
    if !(s.is_finite() && s > 0.0) {
        return Err(PyValueError::new_err(format!("duration_s: must be a positive number of seconds, got {s}")));
    }
    Ok(Duration::from_secs_f64(s))
}

/// A running endpoint of flowshare's live transport.
#[pyclass(module = "flowshare._core")]
pub struct Endpoint(Running);

#[pymethods]
impl Endpoint {
    /// Start the endpoint of `request` (JSON); a configuration error or a socket that cannot
    /// be bound is raised here.
    #[new]
    fn new(py: Python<'_>, request: &str) -> PyResult<Self> {
        let cfg = endpoint_config(request)?;
        Running::start(py, "live endpoint", move |stop, ready| {
            // run_endpoint checks the configuration and binds before it sends anything; the
            // caller learns of a failure there from join.
            ready();
            to_json(flowshare_live::run_endpoint(&cfg, stop))
        })
        .map(Endpoint)
    }

    /// Ask the endpoint to stop.
    fn stop(&self) {
        self.0.stop();
    }

    /// Whether the run has ended.
    fn finished(&self) -> bool {
        self.0.finished()
    }

    /// Wait for the run to end and return its report as JSON.
    fn join(&mut self, py: Python<'_>) -> PyResult<String> {
        self.0.join(py, "live endpoint")
    }
}

/// Register live mode's classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Emulator>()?;
    m.add_class::<Endpoint>()
}
