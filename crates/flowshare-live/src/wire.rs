//! The wire format: one core [`Packet`] in one UDP datagram, and back.
//!
//! Every datagram starts with a 32-byte header (magic, version, kind, flags, ECN bits, loop
//! tag, connection id, modelled size, sequence number, timestamp), followed by a body whose
//! layout the kind fixes. A reliable transfer over TFRC ([`crate::reliable`]) adds a block
//! number to TFRC data (flag [`FLAG_BLOCK`]) and a kind of its own, the block ACK
//! ([`BlockAck`]), which has no core packet: [`decode`] gives a [`Datagram`], either. All integers are big-endian (network byte order); floats are IEEE 754
//! binary64 in the same order. Data datagrams (TCP data, TFRC data, UDP) are padded with zero
//! bytes to the packet's modelled size minus the IPv4 and UDP headers (28 bytes), so that a
//! real link carries the sizes the model assumes. `docs/wire-format.md` has the byte tables.
//!
//! [`decode`] trusts nothing: any byte string gives a packet or one [`WireError`], never a
//! panic, and what it accepts is exactly what [`encode`] can produce.

use flowshare_core::packet::{Kind, Packet, MAX_SACK_BLOCKS};
use flowshare_core::units::{Time, MAX_TIME};
use std::fmt;

/// First two bytes of every datagram: `"FS"`.
pub const MAGIC: [u8; 2] = *b"FS";
/// The version this module reads and writes.
pub const VERSION: u8 = 1;
/// Bytes of the common header.
pub const HEADER_LEN: usize = 32;
/// Bytes of the IPv4 (20) and UDP (8) headers, which a packet's modelled size includes and the
/// datagram's payload does not.
pub const IP_UDP_OVERHEAD: u32 = 28;
/// The largest UDP payload over IPv4 (65,535 − 20 − 8): longer datagrams cannot exist.
pub const MAX_DATAGRAM: usize = 65_507;
/// The largest modelled packet size: the IPv4 total-length field's maximum.
pub const MAX_SIZE: u32 = 65_535;
/// The largest receive rate a report may carry, bytes/s (10 Tbit/s, the core's largest rate).
pub const MAX_X_RECV: f64 = 1.25e12;
/// The largest mean number of packets lost per loss event a report may carry.
pub const MAX_J: f64 = 4_294_967_296.0;
/// Flag bit 3 of a TFRC data packet: it carries a block of a reliable transfer, whose number is
/// in the body after the RTT field (and in word 1 of the core packet).
pub const FLAG_BLOCK: u8 = 8;
/// The largest block number (2⁴⁸ − 1): a transfer has at most 2⁴⁸ blocks.
pub const MAX_BLOCK: u64 = (1 << 48) - 1;
/// The most ranges of held blocks a block ACK carries.
pub const MAX_RANGES: usize = 8;

/// Kind codes of byte 3.
pub mod code {
    /// A TCP data segment.
    pub const TCP_DATA: u8 = 1;
    /// A TCP acknowledgement, with up to three SACK blocks.
    pub const TCP_ACK: u8 = 2;
    /// A TCP SYN of the optional handshake.
    pub const TCP_SYN: u8 = 3;
    /// A TCP SYN-ACK.
    pub const TCP_SYNACK: u8 = 4;
    /// A UDP datagram of a traffic source.
    pub const UDP: u8 = 5;
    /// A TFRC data packet.
    pub const TFRC_DATA: u8 = 6;
    /// A TFRC feedback report.
    pub const TFRC_FEEDBACK: u8 = 7;
    /// A block ACK of a reliable transfer, with up to eight ranges of held blocks.
    pub const BLOCK_ACK: u8 = 8;
}

/// Bytes of each kind's body (an ACK's grows by 16 per SACK block).
const DATA_BODY: usize = 8;
const ACK_BODY: usize = 8;
const SACK_BLOCK: usize = 16;
const FEEDBACK_BODY: usize = 32;
/// The block number of a TFRC data packet that carries one.
const BLOCK_FIELD: usize = 8;
/// A block ACK's range count and reserved bytes; each range adds 16.
const BLOCK_ACK_BODY: usize = 8;
const RANGE: usize = 16;

/// Why a datagram was refused. One variant per reason, so that a receiver can count them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WireError {
    /// Shorter than the header, or than the body its kind needs.
    TooShort,
    /// Longer than [`MAX_DATAGRAM`].
    TooLong,
    /// The first two bytes are not [`MAGIC`].
    BadMagic,
    /// A version other than [`VERSION`].
    BadVersion,
    /// A kind code this version does not define.
    UnknownKind,
    /// A header byte that must be zero is not, or a flag or ECN bit this version does not
    /// define is set.
    BadHeaderBits,
    /// The modelled size is above [`MAX_SIZE`].
    SizeOutOfRange,
    /// A control datagram's length is not the one its kind (and SACK count) fixes.
    LengthMismatch,
    /// A data datagram's length is not its modelled size minus 28 bytes (or its minimum), or
    /// its padding is not all zero.
    PaddingMismatch,
    /// More SACK blocks than [`MAX_SACK_BLOCKS`], or a non-zero reserved byte beside the count.
    BadSackCount,
    /// A SACK block that is empty, starts below the cumulative ACK, or ends more than 2³²
    /// segments above it (RFC 2018 §3).
    BadSackBlock,
    /// A timestamp, elapsed time or RTT above the core's largest time (10⁹ s), or a report
    /// whose echo plus elapsed time overflows.
    TimeOutOfRange,
    /// A report's `X_recv` is not finite or outside [0, [`MAX_X_RECV`]].
    BadXRecv,
    /// A report's loss event rate `p` is not finite or outside [0, 1].
    BadLossRate,
    /// A report's `j` is not finite or outside [0, [`MAX_J`]].
    BadJ,
    /// The block flag ([`FLAG_BLOCK`]) on a kind other than TFRC data, or a block ACK with a
    /// flag, ECN bit or loop tag set.
    BadBlockFlag,
    /// A block number or a block ACK's cumulative acknowledgement above [`MAX_BLOCK`].
    BlockOutOfRange,
    /// A block ACK with more than [`MAX_RANGES`] ranges, or a non-zero reserved byte beside
    /// the count.
    BadRangeCount,
    /// A block ACK range that is empty, does not lie above the cumulative acknowledgement,
    /// ends beyond [`MAX_BLOCK`] + 1 or 2³² blocks above it, or overlaps or touches another.
    BadRange,
}

impl WireError {
    /// Every reason, in declaration order.
    pub const ALL: [WireError; 19] = [
        WireError::TooShort,
        WireError::TooLong,
        WireError::BadMagic,
        WireError::BadVersion,
        WireError::UnknownKind,
        WireError::BadHeaderBits,
        WireError::SizeOutOfRange,
        WireError::LengthMismatch,
        WireError::PaddingMismatch,
        WireError::BadSackCount,
        WireError::BadSackBlock,
        WireError::TimeOutOfRange,
        WireError::BadXRecv,
        WireError::BadLossRate,
        WireError::BadJ,
        WireError::BadBlockFlag,
        WireError::BlockOutOfRange,
        WireError::BadRangeCount,
        WireError::BadRange,
    ];

    /// A short stable name, for counters and reports.
    pub fn name(self) -> &'static str {
        match self {
            WireError::TooShort => "too_short",
            WireError::TooLong => "too_long",
            WireError::BadMagic => "bad_magic",
            WireError::BadVersion => "bad_version",
            WireError::UnknownKind => "unknown_kind",
            WireError::BadHeaderBits => "bad_header_bits",
            WireError::SizeOutOfRange => "size_out_of_range",
            WireError::LengthMismatch => "length_mismatch",
            WireError::PaddingMismatch => "padding_mismatch",
            WireError::BadSackCount => "bad_sack_count",
            WireError::BadSackBlock => "bad_sack_block",
            WireError::TimeOutOfRange => "time_out_of_range",
            WireError::BadXRecv => "bad_x_recv",
            WireError::BadLossRate => "bad_loss_rate",
            WireError::BadJ => "bad_j",
            WireError::BadBlockFlag => "bad_block_flag",
            WireError::BlockOutOfRange => "block_out_of_range",
            WireError::BadRangeCount => "bad_range_count",
            WireError::BadRange => "bad_range",
        }
    }

    /// Its position in [`WireError::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireError::TooShort => "datagram shorter than its header or its kind's body",
            WireError::TooLong => "datagram longer than 65507 bytes",
            WireError::BadMagic => "magic is not \"FS\"",
            WireError::BadVersion => "version is not 1",
            WireError::UnknownKind => "kind is not one of 1..=8",
            WireError::BadHeaderBits => "reserved byte, flag or ECN bit set that version 1 does not define",
            WireError::SizeOutOfRange => "modelled size above 65535 bytes",
            WireError::LengthMismatch => "length does not match the kind (and SACK count)",
            WireError::PaddingMismatch => "data length is not size - 28 (or the minimum), or padding is not zero",
            WireError::BadSackCount => "SACK count above 3 or reserved bytes not zero",
            WireError::BadSackBlock => "SACK block empty, below the cumulative ACK or beyond 2^32 segments",
            WireError::TimeOutOfRange => "time field above 10^9 s",
            WireError::BadXRecv => "X_recv not finite or outside [0, 1.25e12] bytes/s",
            WireError::BadLossRate => "p not finite or outside [0, 1]",
            WireError::BadJ => "j not finite or outside [0, 2^32]",
            WireError::BadBlockFlag => "block flag on a kind other than TFRC data, or header bits set on a block ACK",
            WireError::BlockOutOfRange => "block number above 2^48 - 1",
            WireError::BadRangeCount => "block ACK range count above 8 or reserved bytes not zero",
            WireError::BadRange => "block ACK range empty, not above the cumulative ACK, beyond 2^48 or 2^32 blocks above it, or overlapping another",
        })
    }
}

impl std::error::Error for WireError {}

/// Why a packet cannot be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// ATM cells exist only inside a simulated cell network.
    #[error("kind: a cell has no datagram form")]
    Cell,
    /// The packet's size is above [`MAX_SIZE`].
    #[error("size: {0} bytes is above the largest IPv4 packet, 65535 bytes")]
    TooLarge(u32),
    /// A timestamp or RTT above the core's largest time.
    #[error("ts: a time above 10^9 s cannot be written")]
    Time,
    /// A report's elapsed time is larger than its timestamp.
    #[error("t_delay: the elapsed time exceeds the report's timestamp")]
    Elapsed,
    /// The block flag on a packet that is not TFRC data.
    #[error("flags: only TFRC data carries a block number")]
    BlockFlag,
    /// A block number or cumulative block acknowledgement above [`MAX_BLOCK`].
    #[error("block: above the largest block number, 2^48 - 1")]
    Block,
    /// A block ACK whose ranges break the rules [`decode`] applies.
    #[error("ranges: more than 8, empty, not above the cumulative ACK, or overlapping")]
    Ranges,
}

/// Bits of [`Packet::flags`] and [`Packet::ecn`] this version carries.
const FLAG_MASK: u8 = 0b0000_1111;
const ECN_MASK: u8 = 0b0000_1111;

/// A datagram read back: the connection id from its header, the packet (whose `conn` is that
/// id) and, for a TFRC report, its elapsed time `t_delay` (0 otherwise).
#[derive(Clone, Copy, Debug)]
pub struct Decoded {
    /// The connection id of the header.
    pub conn_id: u32,
    /// The packet.
    pub packet: Packet,
    /// A report's `t_delay` (RFC 5348 §6.2), ns; the packet's `ts` already includes it.
    pub t_delay: Time,
}

/// A block ACK of a reliable transfer (kind 8): the next block expected in order and up to
/// [`MAX_RANGES`] runs of blocks held above it, RFC 2018 style (M. Mathis, J. Mahdavi, S. Floyd
/// and A. Romanow, "TCP Selective Acknowledgment Options", RFC 2018, 1996) with block numbers
/// in place of byte sequence numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockAck {
    /// The cumulative acknowledgement: every block below it has been delivered.
    pub cum: u64,
    /// The send timestamp of the latest data packet the receiver took, echoed (sender's clock).
    pub echo: Time,
    /// The modelled size of the packet, bytes (IPv4 and UDP headers included).
    pub size: u32,
    n: u8,
    ranges: [(u64, u64); MAX_RANGES],
}

impl BlockAck {
    /// A block ACK of `cum` without ranges, echoing `echo`, of modelled size `size`.
    pub fn new(cum: u64, echo: Time, size: u32) -> Self {
        BlockAck { cum, echo, size, n: 0, ranges: [(0, 0); MAX_RANGES] }
    }

    /// Append range `[left, right)`; `false` (and nothing appended) when [`MAX_RANGES`] are
    /// there already.
    pub fn push_range(&mut self, left: u64, right: u64) -> bool {
        let n = usize::from(self.n);
        if n == MAX_RANGES {
            return false;
        }
        self.ranges[n] = (left, right);
        self.n += 1;
        true
    }

    /// The ranges `[left, right)`, in the order they were written.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges[..usize::from(self.n)]
    }

    /// The datagram's length: header, count and ranges.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + BLOCK_ACK_BODY + RANGE * usize::from(self.n)
    }

    /// Whether the cumulative acknowledgement and the ranges satisfy the wire format's rules.
    fn check(&self) -> Result<(), WireError> {
        if self.cum > MAX_BLOCK {
            return Err(WireError::BlockOutOfRange);
        }
        let rs = self.ranges();
        for (i, &(l, r)) in rs.iter().enumerate() {
            if l <= self.cum || r <= l || r > MAX_BLOCK + 1 || r - self.cum > u64::from(u32::MAX) {
                return Err(WireError::BadRange);
            }
            // Disjoint and not adjacent: two ranges that touch are one.
            if rs[..i].iter().any(|&(a, b)| l <= b && a <= r) {
                return Err(WireError::BadRange);
            }
        }
        Ok(())
    }
}

/// A datagram read back: a core packet, or a block ACK.
#[derive(Clone, Copy, Debug)]
pub enum Datagram {
    /// A packet of one of the core's kinds (1 to 7).
    Packet(Decoded),
    /// A block ACK (kind 8).
    BlockAck {
        /// The connection id of the header.
        conn_id: u32,
        /// The acknowledgement.
        ack: BlockAck,
    },
}

impl Datagram {
    /// The connection id of the header.
    pub fn conn_id(&self) -> u32 {
        match self {
            Datagram::Packet(d) => d.conn_id,
            Datagram::BlockAck { conn_id, .. } => *conn_id,
        }
    }

    /// The core packet, unless it is a block ACK.
    pub fn packet(&self) -> Option<&Packet> {
        match self {
            Datagram::Packet(d) => Some(&d.packet),
            Datagram::BlockAck { .. } => None,
        }
    }

    /// Write it again: the bytes [`decode`] read.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self {
            Datagram::Packet(d) => encode(&d.packet, d.conn_id, d.t_delay, out),
            Datagram::BlockAck { conn_id, ack } => encode_block_ack(ack, *conn_id, out),
        }
    }
}

/// The block number a TFRC data packet carries, if it carries one ([`FLAG_BLOCK`]).
pub fn block_of(p: &Packet) -> Option<u64> {
    (p.kind == Kind::TfrcData && p.flags & FLAG_BLOCK != 0).then(|| p.word(1))
}

/// Make TFRC data packet `p` carry block `block`.
pub fn set_block(p: &mut Packet, block: u64) {
    debug_assert_eq!(p.kind, Kind::TfrcData);
    p.flags |= FLAG_BLOCK;
    p.set_word(1, block);
}

/// Take the block number off `p` again: what the TFRC agent sees is the unreliable packet.
pub fn clear_block(p: &mut Packet) {
    if p.flags & FLAG_BLOCK != 0 {
        p.flags &= !FLAG_BLOCK;
        p.set_word(1, 0);
    }
}

fn kind_code(kind: Kind) -> Option<u8> {
    Some(match kind {
        Kind::Data => code::TCP_DATA,
        Kind::Ack => code::TCP_ACK,
        Kind::Syn => code::TCP_SYN,
        Kind::SynAck => code::TCP_SYNACK,
        Kind::Udp => code::UDP,
        Kind::TfrcData => code::TFRC_DATA,
        Kind::TfrcFeedback => code::TFRC_FEEDBACK,
        Kind::Cell => return None,
    })
}

fn kind_of(code: u8) -> Option<Kind> {
    Some(match code {
        code::TCP_DATA => Kind::Data,
        code::TCP_ACK => Kind::Ack,
        code::TCP_SYN => Kind::Syn,
        code::TCP_SYNACK => Kind::SynAck,
        code::UDP => Kind::Udp,
        code::TFRC_DATA => Kind::TfrcData,
        code::TFRC_FEEDBACK => Kind::TfrcFeedback,
        _ => return None,
    })
}

/// Kinds padded to their modelled size: they carry payload.
fn is_data(kind: Kind) -> bool {
    matches!(kind, Kind::Data | Kind::Udp | Kind::TfrcData)
}

/// The header and body of a kind, without padding; `block`: a TFRC data packet with a block
/// number.
fn min_len(kind: Kind, n_sack: usize, block: bool) -> usize {
    HEADER_LEN
        + match kind {
            Kind::TfrcData if block => DATA_BODY + BLOCK_FIELD,
            Kind::Data | Kind::TfrcData => DATA_BODY,
            Kind::Ack => ACK_BODY + SACK_BLOCK * n_sack,
            Kind::TfrcFeedback => FEEDBACK_BODY,
            Kind::Syn | Kind::SynAck | Kind::Udp | Kind::Cell => 0,
        }
}

/// The datagram length of a data packet of modelled size `size`.
fn data_len(kind: Kind, size: u32, block: bool) -> usize {
    min_len(kind, 0, block).max((size.saturating_sub(IP_UDP_OVERHEAD)) as usize)
}

/// The length [`encode`] writes for `p`.
pub fn encoded_len(p: &Packet) -> usize {
    let block = p.flags & FLAG_BLOCK != 0;
    if is_data(p.kind) {
        data_len(p.kind, p.size, block)
    } else {
        min_len(p.kind, usize::from(p.n_sack), block)
    }
}

/// Write `p` as the datagram of connection `conn_id` into `out` (cleared first). `t_delay` is a
/// TFRC report's elapsed time (RFC 5348 §6.2; ignored for other kinds): the report carries
/// `ts − t_delay` as its timestamp echo and `t_delay` apart.
pub fn encode(p: &Packet, conn_id: u32, t_delay: Time, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let code = kind_code(p.kind).ok_or(EncodeError::Cell)?;
    let block = block_of(p);
    if p.flags & FLAG_BLOCK != 0 && block.is_none() {
        return Err(EncodeError::BlockFlag);
    }
    if block.is_some_and(|b| b > MAX_BLOCK) {
        return Err(EncodeError::Block);
    }
    if p.size > MAX_SIZE {
        return Err(EncodeError::TooLarge(p.size));
    }
    if p.ts > MAX_TIME {
        return Err(EncodeError::Time);
    }
    let (stamp, t_delay) = match p.kind {
        Kind::TfrcFeedback if t_delay > p.ts => return Err(EncodeError::Elapsed),
        Kind::TfrcFeedback => (p.ts - t_delay, t_delay),
        _ => (p.ts, 0),
    };
    out.clear();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[VERSION, code, p.flags & FLAG_MASK, p.ecn & ECN_MASK, p.tag, 0]);
    out.extend_from_slice(&conn_id.to_be_bytes());
    out.extend_from_slice(&p.size.to_be_bytes());
    out.extend_from_slice(&p.seq.to_be_bytes());
    out.extend_from_slice(&stamp.to_be_bytes());
    match p.kind {
        Kind::Data | Kind::TfrcData => {
            let rtt = p.word(0);
            if rtt > MAX_TIME {
                return Err(EncodeError::Time);
            }
            out.extend_from_slice(&rtt.to_be_bytes());
            if let Some(b) = block {
                out.extend_from_slice(&b.to_be_bytes());
            }
        }
        Kind::Ack => {
            out.extend_from_slice(&[p.n_sack, 0, 0, 0, 0, 0, 0, 0]);
            for (a, b) in p.sack_blocks() {
                out.extend_from_slice(&a.to_be_bytes());
                out.extend_from_slice(&b.to_be_bytes());
            }
        }
        Kind::TfrcFeedback => {
            for w in 0..3 {
                out.extend_from_slice(&p.word(w).to_be_bytes());
            }
            out.extend_from_slice(&t_delay.to_be_bytes());
        }
        Kind::Syn | Kind::SynAck | Kind::Udp | Kind::Cell => {}
    }
    if is_data(p.kind) {
        out.resize(data_len(p.kind, p.size, block.is_some()), 0);
    }
    Ok(())
}

/// Write block ACK `ack` as the datagram of connection `conn_id` into `out` (cleared first).
pub fn encode_block_ack(ack: &BlockAck, conn_id: u32, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if ack.size > MAX_SIZE {
        return Err(EncodeError::TooLarge(ack.size));
    }
    if ack.echo > MAX_TIME {
        return Err(EncodeError::Time);
    }
    match ack.check() {
        Ok(()) => {}
        Err(WireError::BlockOutOfRange) => return Err(EncodeError::Block),
        Err(_) => return Err(EncodeError::Ranges),
    }
    out.clear();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[VERSION, code::BLOCK_ACK, 0, 0, 0, 0]);
    out.extend_from_slice(&conn_id.to_be_bytes());
    out.extend_from_slice(&ack.size.to_be_bytes());
    out.extend_from_slice(&ack.cum.to_be_bytes());
    out.extend_from_slice(&ack.echo.to_be_bytes());
    out.extend_from_slice(&[ack.n, 0, 0, 0, 0, 0, 0, 0]);
    for &(l, r) in ack.ranges() {
        out.extend_from_slice(&l.to_be_bytes());
        out.extend_from_slice(&r.to_be_bytes());
    }
    Ok(())
}

/// Big-endian `u64` at `at` (the caller has checked the length).
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(w)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_be_bytes(w)
}

fn time_at(b: &[u8], at: usize) -> Result<Time, WireError> {
    let t = u64_at(b, at);
    if t > MAX_TIME {
        return Err(WireError::TimeOutOfRange);
    }
    Ok(t)
}

/// Read a datagram. Checks, in order: length bounds, magic, version, kind, reserved bits and
/// the block flag, size, the length the kind fixes (and zero padding), then the kind's fields.
pub fn decode(b: &[u8]) -> Result<Datagram, WireError> {
    if b.len() > MAX_DATAGRAM {
        return Err(WireError::TooLong);
    }
    if b.len() < HEADER_LEN {
        return Err(WireError::TooShort);
    }
    if b[0..2] != MAGIC {
        return Err(WireError::BadMagic);
    }
    if b[2] != VERSION {
        return Err(WireError::BadVersion);
    }
    let block_ack = b[3] == code::BLOCK_ACK;
    let kind = if block_ack { None } else { Some(kind_of(b[3]).ok_or(WireError::UnknownKind)?) };
    let (flags, ecn, tag) = (b[4], b[5], b[6]);
    if flags & !FLAG_MASK != 0 || ecn & !ECN_MASK != 0 || b[7] != 0 {
        return Err(WireError::BadHeaderBits);
    }
    let has_block = flags & FLAG_BLOCK != 0;
    if (has_block && kind != Some(Kind::TfrcData)) || (block_ack && (flags | ecn | tag) != 0) {
        return Err(WireError::BadBlockFlag);
    }
    let conn_id = u32_at(b, 8);
    let size = u32_at(b, 12);
    if size > MAX_SIZE {
        return Err(WireError::SizeOutOfRange);
    }
    let seq = u64_at(b, 16);
    let stamp = time_at(b, 24)?;
    let Some(kind) = kind else {
        return decode_block_ack(b, conn_id, size, seq, stamp);
    };
    // The length the kind fixes; an ACK's depends on its SACK count.
    let n_sack = if kind == Kind::Ack {
        if b.len() < HEADER_LEN + ACK_BODY {
            return Err(WireError::TooShort);
        }
        let n = usize::from(b[HEADER_LEN]);
        if n > MAX_SACK_BLOCKS || b[HEADER_LEN + 1..HEADER_LEN + ACK_BODY].iter().any(|&x| x != 0) {
            return Err(WireError::BadSackCount);
        }
        n
    } else {
        0
    };
    let need = min_len(kind, n_sack, has_block);
    if b.len() < need {
        return Err(WireError::TooShort);
    }
    if is_data(kind) {
        if b.len() != data_len(kind, size, has_block) || b[need..].iter().any(|&x| x != 0) {
            return Err(WireError::PaddingMismatch);
        }
    } else if b.len() != need {
        return Err(WireError::LengthMismatch);
    }
    let mut p = Packet::new(conn_id, kind, seq, size, stamp);
    p.flags = flags;
    p.ecn = ecn;
    p.tag = tag;
    let mut t_delay = 0;
    match kind {
        Kind::Data | Kind::TfrcData => {
            p.set_word(0, time_at(b, HEADER_LEN)?);
            if has_block {
                let block = u64_at(b, HEADER_LEN + DATA_BODY);
                if block > MAX_BLOCK {
                    return Err(WireError::BlockOutOfRange);
                }
                p.set_word(1, block);
            }
        }
        Kind::Ack => {
            for i in 0..n_sack {
                let at = HEADER_LEN + ACK_BODY + SACK_BLOCK * i;
                let (start, end) = (u64_at(b, at), u64_at(b, at + 8));
                if start < seq || end <= start || end - seq > u64::from(u32::MAX) {
                    return Err(WireError::BadSackBlock);
                }
                p.push_sack_block(start, end);
            }
        }
        Kind::TfrcFeedback => {
            let x_recv = f64::from_bits(u64_at(b, HEADER_LEN));
            let loss = f64::from_bits(u64_at(b, HEADER_LEN + 8));
            let j = f64::from_bits(u64_at(b, HEADER_LEN + 16));
            if !(0.0..=MAX_X_RECV).contains(&x_recv) {
                return Err(WireError::BadXRecv);
            }
            if !(0.0..=1.0).contains(&loss) {
                return Err(WireError::BadLossRate);
            }
            if !(0.0..=MAX_J).contains(&j) {
                return Err(WireError::BadJ);
            }
            t_delay = time_at(b, HEADER_LEN + 24)?;
            p.ts = stamp.checked_add(t_delay).filter(|&t| t <= MAX_TIME).ok_or(WireError::TimeOutOfRange)?;
            p.set_word(0, x_recv.to_bits());
            p.set_word(1, loss.to_bits());
            p.set_word(2, j.to_bits());
        }
        Kind::Syn | Kind::SynAck | Kind::Udp | Kind::Cell => {}
    }
    Ok(Datagram::Packet(Decoded { conn_id, packet: p, t_delay }))
}

/// The body of a block ACK whose header passed.
fn decode_block_ack(b: &[u8], conn_id: u32, size: u32, cum: u64, echo: Time) -> Result<Datagram, WireError> {
    if b.len() < HEADER_LEN + BLOCK_ACK_BODY {
        return Err(WireError::TooShort);
    }
    let n = usize::from(b[HEADER_LEN]);
    if n > MAX_RANGES || b[HEADER_LEN + 1..HEADER_LEN + BLOCK_ACK_BODY].iter().any(|&x| x != 0) {
        return Err(WireError::BadRangeCount);
    }
    let need = HEADER_LEN + BLOCK_ACK_BODY + RANGE * n;
    if b.len() < need {
        return Err(WireError::TooShort);
    }
    if b.len() != need {
        return Err(WireError::LengthMismatch);
    }
    let mut ack = BlockAck::new(cum, echo, size);
    for i in 0..n {
        let at = HEADER_LEN + BLOCK_ACK_BODY + RANGE * i;
        ack.push_range(u64_at(b, at), u64_at(b, at + 8));
    }
    ack.check()?;
    Ok(Datagram::BlockAck { conn_id, ack })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(p: &Packet, t_delay: Time) -> Decoded {
        let mut buf = Vec::new();
        encode(p, 7, t_delay, &mut buf).unwrap();
        assert_eq!(buf.len(), encoded_len(p));
        let Datagram::Packet(d) = decode(&buf).unwrap() else { panic!("a packet") };
        let q = d.packet;
        assert_eq!(
            (d.conn_id, q.kind, q.dir, q.flags, q.ecn, q.tag, q.size, q.seq, q.ts, q.n_sack),
            (7, p.kind, p.dir, p.flags, p.ecn, p.tag, p.size, p.seq, p.ts, p.n_sack)
        );
        let mut again = Vec::new();
        encode(&q, 7, d.t_delay, &mut again).unwrap();
        assert_eq!(buf, again, "decode then encode gives the same bytes");
        d
    }

    #[test]
    fn every_kind_round_trips() {
        let mut data = Packet::new(3, Kind::Data, 41, 1500, 123_456);
        data.set_word(0, 20_000_000);
        data.ecn = 1 | 8;
        data.tag = 2;
        data.set_retx(true);
        assert_eq!(round_trip(&data, 0).packet.word(0), 20_000_000);
        let mut buf = Vec::new();
        encode(&data, 7, 0, &mut buf).unwrap();
        assert_eq!(buf.len(), 1472, "1500 bytes on the wire: 1472 of UDP payload");

        let mut ack = Packet::new(3, Kind::Ack, 100, 52, 99);
        ack.push_sack_block(105, 107);
        ack.push_sack_block(110, 111);
        ack.push_sack_block(100 + u64::from(u32::MAX) - 1, 100 + u64::from(u32::MAX));
        ack.ecn = 4;
        let d = round_trip(&ack, 0);
        assert_eq!(d.packet.sack_blocks().collect::<Vec<_>>(), ack.sack_blocks().collect::<Vec<_>>());
        round_trip(&Packet::new(3, Kind::Ack, 0, 40, 0), 0);

        round_trip(&Packet::new(3, Kind::Syn, 0, 40, 5), 0);
        round_trip(&Packet::new(3, Kind::SynAck, 0, 40, 5), 0);
        round_trip(&Packet::new(3, Kind::Udp, 9, 228, 5), 0);
        round_trip(&Packet::new(3, Kind::Udp, 9, 20, 5), 0);

        let mut td = Packet::new(3, Kind::TfrcData, 8, 1040, 77);
        td.set_word(0, 31_000_000);
        assert_eq!(round_trip(&td, 0).packet.word(0), 31_000_000);

        let mut fb = Packet::new(3, Kind::TfrcFeedback, 4, 40, 1_000_500);
        fb.set_word(0, 125_000.5f64.to_bits());
        fb.set_word(1, 0.0125f64.to_bits());
        fb.set_word(2, 1.75f64.to_bits());
        let d = round_trip(&fb, 500);
        assert_eq!(d.t_delay, 500);
        assert_eq!((0..3).map(|w| f64::from_bits(d.packet.word(w))).collect::<Vec<_>>(), vec![125_000.5, 0.0125, 1.75]);
    }

    #[test]
    fn cells_and_oversized_packets_are_not_written() {
        let mut buf = Vec::new();
        assert_eq!(encode(&Packet::new(0, Kind::Cell, 0, 53, 0), 0, 0, &mut buf), Err(EncodeError::Cell));
        assert_eq!(
            encode(&Packet::new(0, Kind::Udp, 0, 70_000, 0), 0, 0, &mut buf),
            Err(EncodeError::TooLarge(70_000))
        );
        assert_eq!(encode(&Packet::new(0, Kind::TfrcFeedback, 0, 40, 5), 0, 6, &mut buf), Err(EncodeError::Elapsed));
    }

    fn valid_feedback() -> Vec<u8> {
        let mut fb = Packet::new(3, Kind::TfrcFeedback, 4, 40, 1_000);
        fb.set_word(0, 1000.0f64.to_bits());
        fb.set_word(1, 0.5f64.to_bits());
        fb.set_word(2, 1.0f64.to_bits());
        let mut buf = Vec::new();
        encode(&fb, 1, 10, &mut buf).unwrap();
        buf
    }

    #[test]
    fn each_rule_has_its_reason() {
        let fb = valid_feedback();
        let with = |at: usize, bytes: &[u8]| {
            let mut b = fb.clone();
            b[at..at + bytes.len()].copy_from_slice(bytes);
            decode(&b).unwrap_err()
        };
        assert_eq!(decode(&fb[..31]).unwrap_err(), WireError::TooShort);
        assert_eq!(decode(&fb[..40]).unwrap_err(), WireError::TooShort);
        assert_eq!(decode(&vec![0; MAX_DATAGRAM + 1]).unwrap_err(), WireError::TooLong);
        assert_eq!(with(0, b"FT"), WireError::BadMagic);
        assert_eq!(with(2, &[2]), WireError::BadVersion);
        assert_eq!(with(3, &[0]), WireError::UnknownKind);
        assert_eq!(with(3, &[9]), WireError::UnknownKind);
        assert_eq!(with(4, &[16]), WireError::BadHeaderBits);
        assert_eq!(with(5, &[16]), WireError::BadHeaderBits);
        assert_eq!(with(7, &[1]), WireError::BadHeaderBits);
        assert_eq!(with(12, &65_536u32.to_be_bytes()), WireError::SizeOutOfRange);
        assert_eq!(with(24, &(MAX_TIME + 1).to_be_bytes()), WireError::TimeOutOfRange);
        assert_eq!(with(32, &f64::NAN.to_bits().to_be_bytes()), WireError::BadXRecv);
        assert_eq!(with(32, &(-1.0f64).to_bits().to_be_bytes()), WireError::BadXRecv);
        assert_eq!(with(40, &1.5f64.to_bits().to_be_bytes()), WireError::BadLossRate);
        assert_eq!(with(40, &f64::INFINITY.to_bits().to_be_bytes()), WireError::BadLossRate);
        assert_eq!(with(48, &(-0.5f64).to_bits().to_be_bytes()), WireError::BadJ);
        assert_eq!(with(56, &(MAX_TIME + 1).to_be_bytes()), WireError::TimeOutOfRange);
        let mut long = fb.clone();
        long.push(0);
        assert_eq!(decode(&long).unwrap_err(), WireError::LengthMismatch);

        let mut ack = Packet::new(3, Kind::Ack, 100, 40, 0);
        ack.push_sack_block(102, 104);
        let mut a = Vec::new();
        encode(&ack, 1, 0, &mut a).unwrap();
        let mut b = a.clone();
        b[32] = 4;
        assert_eq!(decode(&b).unwrap_err(), WireError::BadSackCount);
        b[32] = 1;
        b[33] = 1;
        assert_eq!(decode(&b).unwrap_err(), WireError::BadSackCount);
        let mut b = a.clone();
        b[40..48].copy_from_slice(&99u64.to_be_bytes());
        assert_eq!(decode(&b).unwrap_err(), WireError::BadSackBlock, "below the cumulative ACK");
        let mut b = a.clone();
        b[48..56].copy_from_slice(&102u64.to_be_bytes());
        assert_eq!(decode(&b).unwrap_err(), WireError::BadSackBlock, "empty");
        let mut b = a.clone();
        b[32] = 2;
        assert_eq!(decode(&b).unwrap_err(), WireError::TooShort);

        let mut d = Vec::new();
        encode(&Packet::new(3, Kind::Data, 1, 1500, 0), 1, 0, &mut d).unwrap();
        let mut b = d.clone();
        b[1000] = 1;
        assert_eq!(decode(&b).unwrap_err(), WireError::PaddingMismatch);
        assert_eq!(decode(&d[..1471]).unwrap_err(), WireError::PaddingMismatch);
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        // A small xorshift, so that the test needs no generator crate.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let seeds = [
            valid_feedback(),
            {
                let mut a = Vec::new();
                let mut ack = Packet::new(3, Kind::Ack, 100, 40, 0);
                ack.push_sack_block(102, 104);
                encode(&ack, 1, 0, &mut a).unwrap();
                a
            },
            valid_block_ack(),
            valid_block_data(),
        ];
        for i in 0..200_000 {
            let mut b: Vec<u8> = if i % 2 == 0 {
                let len = (next() % 96) as usize;
                (0..len).map(|_| next() as u8).collect()
            } else {
                seeds[i % 8 / 2].clone()
            };
            if !b.is_empty() {
                let k = (next() % 4) as usize;
                for _ in 0..k {
                    let at = (next() as usize) % b.len();
                    b[at] ^= 1 << (next() % 8);
                }
            }
            if let Ok(d) = decode(&b) {
                let mut again = Vec::new();
                d.encode(&mut again).unwrap();
                assert_eq!(b, again, "whatever decodes is what encode writes");
            }
        }
    }

    fn valid_block_ack() -> Vec<u8> {
        let mut ack = BlockAck::new(100, 5_000, 148);
        ack.push_range(110, 112);
        ack.push_range(102, 105);
        ack.push_range(120, 121);
        let mut b = Vec::new();
        encode_block_ack(&ack, 1, &mut b).unwrap();
        b
    }

    fn valid_block_data() -> Vec<u8> {
        let mut p = Packet::new(3, Kind::TfrcData, 8, 90, 77);
        p.set_word(0, 31_000_000);
        set_block(&mut p, 4_242);
        let mut b = Vec::new();
        encode(&p, 1, 0, &mut b).unwrap();
        b
    }

    #[test]
    fn blocks_and_block_acks_round_trip() {
        // A block number rides in TFRC data after the RTT field; the padding follows it.
        let mut td = Packet::new(3, Kind::TfrcData, 8, 1040, 77);
        td.set_word(0, 31_000_000);
        set_block(&mut td, MAX_BLOCK);
        let d = round_trip(&td, 0);
        assert_eq!((block_of(&d.packet), d.packet.word(0)), (Some(MAX_BLOCK), 31_000_000));
        let mut buf = Vec::new();
        encode(&td, 7, 0, &mut buf).unwrap();
        assert_eq!((buf.len(), u64_at(&buf, 40)), (1012, MAX_BLOCK));
        // Too small to pad: the block field is still there.
        let mut small = Packet::new(3, Kind::TfrcData, 8, 40, 77);
        set_block(&mut small, 5);
        assert_eq!(encoded_len(&small), 48);
        assert_eq!(block_of(&round_trip(&small, 0).packet), Some(5));
        let mut plain = d.packet;
        clear_block(&mut plain);
        assert_eq!((block_of(&plain), plain.word(1), encoded_len(&plain)), (None, 0, 1012));

        let mut ack = BlockAck::new(100, 5_000, 148);
        assert!(ack.push_range(110, 112) && ack.push_range(102, 105));
        for k in 0..MAX_RANGES - 2 {
            assert!(ack.push_range(200 + 10 * k as u64, 205 + 10 * k as u64));
        }
        assert!(!ack.push_range(1_000, 1_001), "at most {MAX_RANGES} ranges");
        let mut b = Vec::new();
        encode_block_ack(&ack, 9, &mut b).unwrap();
        assert_eq!(b.len(), ack.encoded_len());
        assert_eq!(b.len(), 40 + 16 * MAX_RANGES);
        let Datagram::BlockAck { conn_id, ack: back } = decode(&b).unwrap() else { panic!("a block ACK") };
        assert_eq!((conn_id, back), (9, ack));
        let mut again = Vec::new();
        decode(&b).unwrap().encode(&mut again).unwrap();
        assert_eq!(again, b);
        let edge = {
            let mut a = BlockAck::new(MAX_BLOCK - 2, 0, 68);
            a.push_range(MAX_BLOCK, MAX_BLOCK + 1);
            a
        };
        encode_block_ack(&edge, 9, &mut b).unwrap();
        assert!(matches!(decode(&b), Ok(Datagram::BlockAck { ack, .. }) if ack == edge));
        encode_block_ack(&BlockAck::new(0, 0, 68), 9, &mut b).unwrap();
        assert_eq!(b.len(), 40);
        assert!(decode(&b).unwrap().packet().is_none());
    }

    #[test]
    fn what_cannot_be_decoded_is_not_written() {
        let mut buf = Vec::new();
        let mut data = Packet::new(0, Kind::Data, 0, 1040, 0);
        data.flags |= FLAG_BLOCK;
        assert_eq!(encode(&data, 0, 0, &mut buf), Err(EncodeError::BlockFlag));
        let mut td = Packet::new(0, Kind::TfrcData, 0, 1040, 0);
        set_block(&mut td, MAX_BLOCK + 1);
        assert_eq!(encode(&td, 0, 0, &mut buf), Err(EncodeError::Block));
        assert_eq!(encode_block_ack(&BlockAck::new(MAX_BLOCK + 1, 0, 68), 0, &mut buf), Err(EncodeError::Block));
        for (l, r) in [(5, 6), (6, 6), (7, 6), (6, 6 + (1 << 32))] {
            let mut a = BlockAck::new(5, 0, 68);
            a.push_range(l, r);
            assert_eq!(encode_block_ack(&a, 0, &mut buf), Err(EncodeError::Ranges), "[{l}, {r})");
        }
        for (l, r) in [(8, 10), (10, 12), (7, 11), (12, 13)] {
            let mut a = BlockAck::new(5, 0, 68);
            a.push_range(10, 12);
            a.push_range(l, r);
            assert_eq!(encode_block_ack(&a, 0, &mut buf), Err(EncodeError::Ranges), "[{l}, {r}) beside [10, 12)");
        }
    }

    #[test]
    fn each_reliable_rule_has_its_reason() {
        let ack = valid_block_ack();
        let data = valid_block_data();
        let with = |b: &[u8], at: usize, bytes: &[u8]| {
            let mut b = b.to_vec();
            b[at..at + bytes.len()].copy_from_slice(bytes);
            decode(&b).unwrap_err()
        };
        assert_eq!(with(&ack, 3, &[9]), WireError::UnknownKind);
        assert_eq!(with(&ack, 4, &[16]), WireError::BadHeaderBits);
        for (at, v) in [(4, 1), (4, 8), (5, 1), (6, 1)] {
            assert_eq!(with(&ack, at, &[v]), WireError::BadBlockFlag, "byte {at} = {v}");
        }
        let fb = valid_feedback();
        assert_eq!(with(&fb, 4, &[8]), WireError::BadBlockFlag, "a block flag on feedback");
        assert_eq!(with(&ack, 12, &65_536u32.to_be_bytes()), WireError::SizeOutOfRange);
        assert_eq!(with(&ack, 24, &(MAX_TIME + 1).to_be_bytes()), WireError::TimeOutOfRange);
        assert_eq!(decode(&ack[..39]).unwrap_err(), WireError::TooShort);
        assert_eq!(with(&ack, 32, &[9]), WireError::BadRangeCount);
        assert_eq!(with(&ack, 39, &[1]), WireError::BadRangeCount);
        assert_eq!(with(&ack, 32, &[4]), WireError::TooShort);
        assert_eq!(with(&ack, 32, &[2]), WireError::LengthMismatch);
        assert_eq!(with(&ack, 16, &(MAX_BLOCK + 1).to_be_bytes()), WireError::BlockOutOfRange);
        assert_eq!(with(&ack, 16, &110u64.to_be_bytes()), WireError::BadRange, "a range at the cumulative ACK");
        assert_eq!(with(&ack, 48, &110u64.to_be_bytes()), WireError::BadRange, "empty");
        assert_eq!(with(&ack, 64, &111u64.to_be_bytes()), WireError::BadRange, "overlapping");
        assert_eq!(with(&ack, 64, &110u64.to_be_bytes()), WireError::BadRange, "adjacent: one range");
        assert_eq!(with(&ack, 56, &106u64.to_be_bytes()), WireError::BadRange, "reversed");
        assert_eq!(with(&ack, 80, &(1u64 << 48).to_be_bytes()), WireError::BadRange, "beyond 2^32 above");
        let mut far = BlockAck::new(MAX_BLOCK - 5, 0, 68);
        far.push_range(MAX_BLOCK - 2, MAX_BLOCK);
        let mut b = Vec::new();
        encode_block_ack(&far, 1, &mut b).unwrap();
        assert_eq!(with(&b, 48, &(MAX_BLOCK + 2).to_be_bytes()), WireError::BadRange, "beyond the last block");

        assert_eq!(with(&data, 40, &(MAX_BLOCK + 1).to_be_bytes()), WireError::BlockOutOfRange);
        assert_eq!(with(&data, 4, &[0]), WireError::PaddingMismatch, "without the flag the block is padding");
        assert_eq!(decode(&data[..47]).unwrap_err(), WireError::TooShort);
        assert_eq!(with(&data, 60, &[1]), WireError::PaddingMismatch);
    }
}
