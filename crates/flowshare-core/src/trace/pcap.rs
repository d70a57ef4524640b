//! pcap captures of link directions: libpcap format with nanosecond timestamps
//! (magic `0xa1b23c4d`) and `LINKTYPE_RAW` (101, raw IPv4), streamed through a buffer.
//!
//! Each record holds synthetic IPv4 and TCP headers (no payload bytes: the capture length is
//! the header length, the original length the IPv4 total length, as with a short snap length).
//! Flow `f` is sender `10.(2h+1).b.c` port `1024 + f mod 64000` to receiver `10.(2h+2).b.c`
//! port 5001, where `f = 65536·h + 256·b + c`. Byte sequence numbers are segment numbers times
//! the MSS (modulo 2³²); the SYN carries `ISN = 2³² − 1` so that data starts at byte 0.
//! Layout and field values are documented in `docs/traces.md`.

use super::FlowWire;
use crate::packet::{Dir, Kind, Packet};
use crate::units::{Time, NS_PER_SEC};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// pcap magic for nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record starts with an IPv4 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Snap length in the file header: the longest record (IPv4 + TCP with three SACK blocks).
pub const SNAPLEN: u32 = 128;
/// Destination port of every flow.
pub const DST_PORT: u16 = 5001;

/// A pcap file being written.
#[derive(Debug)]
pub struct PcapWriter {
    out: BufWriter<File>,
    path: PathBuf,
    packets: u64,
    ip_id: u16,
    error: Option<io::Error>,
}

impl PcapWriter {
    /// Create `path` and write the file header.
    pub fn create(path: &Path) -> io::Result<PcapWriter> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay 0.
        h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, path: path.to_path_buf(), packets: 0, ip_id: 0, error: None })
    }

    /// Append packet `p` at time `t`. After an I/O error nothing more is written; the error is
    /// returned by [`PcapWriter::finish`].
    pub fn write(&mut self, t: Time, p: &Packet, wire: &FlowWire) {
        if self.error.is_some() {
            return;
        }
        let mut buf = [0u8; 16 + SNAPLEN as usize];
        let (captured, total) = headers(&mut buf[16..], p, wire, self.ip_id);
        self.ip_id = self.ip_id.wrapping_add(1);
        buf[0..4].copy_from_slice(&((t / NS_PER_SEC) as u32).to_le_bytes());
        buf[4..8].copy_from_slice(&((t % NS_PER_SEC) as u32).to_le_bytes());
        buf[8..12].copy_from_slice(&(captured as u32).to_le_bytes());
        buf[12..16].copy_from_slice(&total.to_le_bytes());
        match self.out.write_all(&buf[..16 + captured]) {
            Ok(()) => self.packets += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Flush and close: (path, packets written, first error).
    pub fn finish(mut self) -> (PathBuf, u64, Option<io::Error>) {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
        (self.path, self.packets, self.error)
    }
}

/// Sender and receiver IPv4 addresses and the sender's port of flow `f`.
pub fn flow_addresses(f: u32) -> ([u8; 4], [u8; 4], u16) {
    let h = ((f >> 16) & 0x7f) as u8;
    let (b, c) = ((f >> 8) as u8, f as u8);
    ([10, 2 * h + 1, b, c], [10, 2 * h + 2, b, c], (1024 + f % 64_000) as u16)
}

fn checksum(sum: u32, bytes: &[u8]) -> u32 {
    let mut sum = sum;
    for pair in bytes.chunks(2) {
        let hi = u32::from(pair[0]) << 8;
        sum += hi | pair.get(1).map_or(0, |&lo| u32::from(lo));
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Write the IPv4 header (protocol `proto`, `total` bytes) into `buf[..20]`.
fn ipv4(buf: &mut [u8], src: [u8; 4], dst: [u8; 4], proto: u8, total: u32, ip_id: u16) {
    let total16 = total.min(u32::from(u16::MAX)) as u16;
    let ip = &mut buf[..20];
    ip.fill(0);
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&total16.to_be_bytes());
    ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
    ip[6] = 0x40; // don't fragment
    ip[8] = 64; // TTL
    ip[9] = proto;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let ck = fold(checksum(0, ip));
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
}

/// Checksum of a transport header over the IPv4 pseudo-header; the (absent) payload counts
/// as zeros, so only the lengths carry it.
fn transport_checksum(src: [u8; 4], dst: [u8; 4], proto: u8, len: u32, header: &[u8]) -> u16 {
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src);
    pseudo[4..8].copy_from_slice(&dst);
    pseudo[9] = proto;
    pseudo[10..12].copy_from_slice(&(len.min(u32::from(u16::MAX)) as u16).to_be_bytes());
    fold(checksum(checksum(0, &pseudo), header))
}

/// Write the IPv4 and UDP headers of UDP packet `p` (a UDP source's datagram, or a TFRC data
/// or feedback packet, which travel over UDP); returns (header bytes, IPv4 total length).
fn udp_headers(buf: &mut [u8], p: &Packet, wire: &FlowWire, ip_id: u16) -> (usize, u32) {
    let (sender, receiver, sport) = flow_addresses(p.conn);
    let forward = p.dir == Dir::Forward;
    let (src, dst, sp, dp) =
        if forward { (sender, receiver, sport, DST_PORT) } else { (receiver, sender, DST_PORT, sport) };
    let payload = if p.kind == Kind::TfrcFeedback { 0 } else { p.size.saturating_sub(wire.header) };
    let udp_len = 8 + payload;
    let total = 20 + udp_len;
    ipv4(buf, src, dst, 17, total, ip_id);
    let udp = &mut buf[20..28];
    udp.fill(0);
    udp[0..2].copy_from_slice(&sp.to_be_bytes());
    udp[2..4].copy_from_slice(&dp.to_be_bytes());
    udp[4..6].copy_from_slice(&(udp_len.min(u32::from(u16::MAX)) as u16).to_be_bytes());
    let ck = match transport_checksum(src, dst, 17, udp_len, udp) {
        0 => 0xffff, // RFC 768: a computed zero is sent as all ones
        c => c,
    };
    udp[6..8].copy_from_slice(&ck.to_be_bytes());
    (28, total)
}

/// Write the IPv4 and TCP (or UDP) headers of `p` into `buf`; returns (header bytes, IPv4
/// total length).
pub fn headers(buf: &mut [u8], p: &Packet, wire: &FlowWire, ip_id: u16) -> (usize, u32) {
    if matches!(p.kind, Kind::Udp | Kind::TfrcData | Kind::TfrcFeedback) {
        return udp_headers(buf, p, wire, ip_id);
    }
    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    let (sender, receiver, sport) = flow_addresses(p.conn);
    let mss = u64::from(wire.mss);
    let bytes = |seg: u64| -> u32 {
        let b = seg.saturating_mul(mss);
        wire.size.map_or(b, |s| b.min(s)) as u32
    };
    // (from the sender as the kind usually is, seq, ack, flags, payload bytes); the packet's own
    // direction decides, below.
    let (_, seq, ack, flags, payload) = match p.kind {
        Kind::Data => (true, bytes(p.seq), 0, ACK, p.size.saturating_sub(wire.header)),
        Kind::Syn => (true, u32::MAX, 0, SYN, 0),
        Kind::SynAck => (false, u32::MAX, 0, SYN | ACK, 0),
        Kind::Ack => (false, 0, bytes(p.seq), ACK, 0),
        Kind::Udp | Kind::TfrcData | Kind::TfrcFeedback => unreachable!("written by udp_headers"),
        Kind::Cell => unreachable!("cell links are not captured (trace.pcap refuses them)"),
    };
    // An HTTP client's SYN and requests travel against their kind's usual direction (ADR 0014).
    let forward = p.dir == Dir::Forward;
    let (src, dst, sp, dp) =
        if forward { (sender, receiver, sport, DST_PORT) } else { (receiver, sender, DST_PORT, sport) };
    let n_sack = if p.kind == Kind::Ack { p.n_sack as usize } else { 0 };
    let options = if n_sack > 0 { 4 + 8 * n_sack } else { 0 };
    let tcp_len = 20 + options;
    let total = 20 + tcp_len as u32 + payload;
    ipv4(buf, src, dst, 6, total, ip_id);

    let tcp = &mut buf[20..20 + tcp_len];
    tcp.fill(0);
    tcp[0..2].copy_from_slice(&sp.to_be_bytes());
    tcp[2..4].copy_from_slice(&dp.to_be_bytes());
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    tcp[8..12].copy_from_slice(&ack.to_be_bytes());
    tcp[12] = ((tcp_len / 4) as u8) << 4;
    tcp[13] = flags;
    tcp[14..16].copy_from_slice(&u16::MAX.to_be_bytes());
    if n_sack > 0 {
        tcp[20] = 1; // NOP
        tcp[21] = 1; // NOP
        tcp[22] = 5; // SACK
        tcp[23] = (2 + 8 * n_sack) as u8;
        for (i, (a, b)) in p.sack_blocks().enumerate() {
            let at = 24 + 8 * i;
            tcp[at..at + 4].copy_from_slice(&bytes(a).to_be_bytes());
            tcp[at + 4..at + 8].copy_from_slice(&bytes(b).to_be_bytes());
        }
    }
    let ck = transport_checksum(src, dst, 6, tcp_len as u32 + payload, tcp);
    tcp[16..18].copy_from_slice(&ck.to_be_bytes());
    (20 + tcp_len, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_checksum_verifies_and_fields_are_in_place() {
        let wire = FlowWire { mss: 1460, header: 40, size: None };
        let mut p = Packet::new(300, Kind::Data, 7, 1500, 0);
        p.set_retx(true);
        let mut buf = [0u8; 128];
        let (n, total) = headers(&mut buf, &p, &wire, 9);
        assert_eq!((n, total), (40, 1500));
        assert_eq!(fold(checksum(0, &buf[..20])), 0, "a valid header sums to 0xffff");
        assert_eq!(&buf[12..20], &[10, 1, 1, 44, 10, 2, 1, 44]);
        assert_eq!(u16::from_be_bytes([buf[20], buf[21]]), 1324);
        assert_eq!(u32::from_be_bytes([buf[24], buf[25], buf[26], buf[27]]), 7 * 1460);

        let mut a = Packet::new(300, Kind::Ack, 12, 40, 0);
        a.push_sack_block(14, 16);
        let (n, total) = headers(&mut buf, &a, &wire, 10);
        assert_eq!((n, total), (52, 52));
        assert_eq!(&buf[12..20], &[10, 2, 1, 44, 10, 1, 1, 44]);
        assert_eq!(u32::from_be_bytes([buf[28], buf[29], buf[30], buf[31]]), 12 * 1460);
        assert_eq!(&buf[40..44], &[1, 1, 5, 10]);
        assert_eq!(u32::from_be_bytes([buf[48], buf[49], buf[50], buf[51]]), 16 * 1460);
        let mut pseudo = [0u8; 12];
        pseudo[0..8].copy_from_slice(&buf[12..20]);
        pseudo[9] = 6;
        pseudo[11] = 32;
        assert_eq!(fold(checksum(checksum(0, &pseudo), &buf[20..52])), 0, "TCP checksum verifies");
    }

    #[test]
    fn finite_transfers_acknowledge_their_last_byte() {
        let wire = FlowWire { mss: 1000, header: 40, size: Some(2500) };
        let mut buf = [0u8; 128];
        headers(&mut buf, &Packet::new(0, Kind::Ack, 3, 40, 0), &wire, 0);
        assert_eq!(u32::from_be_bytes([buf[28], buf[29], buf[30], buf[31]]), 2500);
    }

    #[test]
    fn udp_packets_get_a_udp_header_with_a_valid_checksum() {
        let wire = FlowWire { mss: 1000, header: 28, size: None };
        let p = Packet::new(5, Kind::Udp, 3, 1028, 0);
        let mut buf = [0u8; 64];
        let (n, total) = headers(&mut buf, &p, &wire, 1);
        assert_eq!((n, total), (28, 1028));
        assert_eq!(buf[9], 17, "protocol UDP");
        assert_eq!(fold(checksum(0, &buf[..20])), 0);
        assert_eq!(u16::from_be_bytes([buf[24], buf[25]]), 1008, "UDP length = 8 + payload");
        let (src, dst, _) = flow_addresses(5);
        assert_eq!(transport_checksum(src, dst, 17, 1008, &buf[20..28]), 0, "checksum verifies");
    }
}
