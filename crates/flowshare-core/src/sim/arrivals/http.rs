//! HTTP clients at run time (`process = "http"`, [`crate::traffic::http`]; ADR 0014): a client
//! opens a connection per document (HTTP/1.0) or per session (HTTP/1.1) in a transfer slot
//! like any other arrival, and moves on when its client endpoint has received the last byte
//! of the connection's last document, not when the server has seen it acknowledged, since the
//! user waits for the document, not for the ACK. Each document is a row of the per-transfer
//! table, written as the client receives it.

use super::{whole_ns, Counts, Row, Transfer};
use crate::cc::RttEstimator;
use crate::engine::Event;
use crate::scenario::ArrivalSpec;
use crate::sim::Simulation;
use crate::tcp::http::{Documents, HttpClient};
use crate::tcp::{Sender, Sink, TcpConfig};
use crate::traffic::arrivals::Process;
use crate::traffic::http::{Http, HttpVersion};

/// Where a client is in its sessions.
#[derive(Debug, Default)]
pub(crate) struct HttpUser {
    /// The current session's documents.
    docs: Vec<u64>,
    /// The next of them to fetch.
    next: usize,
    /// Sessions begun.
    sessions: u64,
}

/// An HTTP connection in a transfer slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HttpConn {
    /// Its client's session (from 0).
    session: u64,
    /// The number in the session of its first document.
    first: u64,
    /// Documents it carries.
    docs: u32,
    /// Documents recorded so far.
    recorded: u32,
    /// The sender's counters when the last document was recorded.
    base: Counts,
}

/// Make `sender` the server and `sink` the client of connection `c` carrying `docs`.
pub(super) fn serve_and_fetch(sender: &mut Sender, sink: &mut Sink, c: u32, h: &Http, tcp: &TcpConfig, docs: &[u64]) {
    let layout = Documents::new(docs, tcp.mss);
    sender.serve_http(layout.clone(), !h.persistent_cwnd);
    let request = h.request_size.unwrap_or(tcp.ack_size);
    let rtt = RttEstimator::new(tcp.rto_initial, tcp.timer_tick, tcp.rto_min, tcp.rto_max);
    sink.fetch_http(HttpClient::new(c, layout, tcp.ack_size, request, rtt));
}

/// The HTTP workload of an arrival group.
fn http_of(spec: &ArrivalSpec) -> &Http {
    match &spec.process {
        Process::Http(h) => h,
        _ => unreachable!("an HTTP group"),
    }
}

impl Simulation {
    /// Client `u` opens its next connection: for the next document (HTTP/1.0) or for the rest
    /// of its session (HTTP/1.1), beginning a new session when the last one is over, unless
    /// it has had all its sessions.
    pub(super) fn open_http(&mut self, u: u32) {
        let user = &mut self.users[u as usize];
        let a = user.arrivals;
        let h = http_of(&self.arrivals[a as usize].spec);
        let st = &mut user.http;
        if st.next >= st.docs.len() {
            if st.sessions >= h.sessions {
                return;
            }
            st.docs = h.documents.session(&mut user.rng);
            st.next = 0;
            st.sessions += 1;
        }
        let n = match h.version {
            HttpVersion::V1_0 => 1,
            HttpVersion::V1_1 => st.docs.len() - st.next,
        };
        let docs = st.docs[st.next..st.next + n].to_vec();
        let conn = HttpConn {
            session: st.sessions - 1,
            first: st.next as u64,
            docs: n as u32,
            recorded: 0,
            base: Counts::default(),
        };
        st.next += n;
        self.arrivals[a as usize].opened += 1;
        let size = docs.iter().sum();
        self.open_transfer(a, size, Some(u), Some((conn, docs)), None);
    }

    /// After an endpoint of HTTP connection `t` in slot `c` ran: record the documents its
    /// client has received since, let the client move on after the last, and give the slot
    /// back once the server has seen everything acknowledged and no packet is left.
    pub(super) fn after_http_event(&mut self, c: u32, t: Transfer, mut h: HttpConn) {
        let slot = c as usize;
        let received = self.agents[2 * slot + 1].tcp_sink().and_then(Sink::http).map_or(0, |k| k.received_at.len());
        let before = h.recorded;
        while (h.recorded as usize) < received {
            self.record_document(c, &t, &mut h, true);
        }
        let sender_done = self.agents[2 * slot].tcp_sender().is_some_and(|s| s.stats.completed_at.is_some());
        let entry = self.transfers[slot].as_mut().expect("a transfer");
        entry.http = Some(h);
        let newly_done = !entry.done && sender_done;
        entry.done |= sender_done;
        if before < h.docs && h.recorded == h.docs {
            if let Some(u) = t.user {
                self.http_client_moves_on(u);
            }
        }
        if newly_done {
            self.concurrency_completed(c);
        }
        if sender_done && self.conns[slot].in_network == 0 {
            self.release_slot(c);
        }
    }

    /// Client `u` received its connection's last document: its next connection opens now,
    /// or after a think time once its session is over.
    fn http_client_moves_on(&mut self, u: u32) {
        let user = &mut self.users[u as usize];
        let arr = &self.arrivals[user.arrivals as usize];
        let pause =
            if user.http.next < user.http.docs.len() { 0.0 } else { http_of(&arr.spec).think.sample(&mut user.rng) };
        let next = self.now.saturating_add(whole_ns(pause));
        if arr.spec.stop.is_none_or(|s| next < s) && next <= self.end {
            self.events.push(next, Event::User(u));
        }
    }

    /// Record the next document of connection `t` (slot `c`): received, or still on its way
    /// at the end of the run.
    fn record_document(&mut self, c: u32, t: &Transfer, h: &mut HttpConn, received: bool) {
        let slot = c as usize;
        let i = h.recorded as usize;
        let client = self.agents[2 * slot + 1].tcp_sink().and_then(Sink::http).expect("an HTTP client");
        let asked = client.asked_at[i];
        let fct = received.then(|| client.received_at[i] - asked);
        let size = client.docs().size(i);
        let s = self.agents[2 * slot].tcp_sender().expect("a TCP sender");
        let now = Counts::of(s, self.counters[slot].data_dropped);
        let counts = now.since(h.base);
        h.base = now;
        h.recorded += 1;
        let row =
            Row { start: asked, size, fct, counts, session: h.session as i64, document: (h.first + i as u64) as i64 };
        self.push_row(c, t, row);
    }

    /// At the end of the run: record the document connection `t` (slot `c`) was fetching, if
    /// its client had asked for it.
    pub(super) fn record_unfinished_document(&mut self, c: u32, t: Transfer, mut h: HttpConn) {
        let slot = c as usize;
        let asked = self.agents[2 * slot + 1].tcp_sink().and_then(Sink::http).map_or(0, |k| k.asked_at.len());
        if (h.recorded as usize) < asked && h.recorded < h.docs {
            self.record_document(c, &t, &mut h, false);
        }
        let entry = self.transfers[slot].as_mut().expect("a transfer");
        entry.http = Some(h);
        entry.done = true;
    }
}
