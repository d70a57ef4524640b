//! Packets and the arena they live in.
//!
//! A packet is created once by a sender or sink, moved between links by its arena index and
//! freed when it is delivered or dropped, so the steady state allocates nothing.

use crate::units::Time;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A TCP data segment; `seq` is its segment number.
    Data,
    /// A TCP acknowledgement; `seq` is the cumulative ACK (next segment expected).
    Ack,
    /// Connection request of the optional three-way handshake.
    Syn,
    /// Answer to a `Syn`.
    SynAck,
    /// A UDP datagram of a traffic source; `seq` numbers the flow's packets from 0.
    Udp,
    /// A TFRC data packet: `seq` numbers the flow's packets from 0, `ts` is its send time and
    /// word 0 the sender's RTT estimate in ns (RFC 5348 §3.2.1).
    TfrcData,
    /// A TFRC feedback report (RFC 5348 §3.2.2): `ts` echoes the timestamp of the latest data
    /// packet plus the time the receiver held it, `seq` counts the loss events the receiver
    /// has seen, and words 0, 1 and 2 hold `X_recv` (bytes/s), `p` and `j` as `f64` bits.
    TfrcFeedback,
    /// A 53-byte ATM cell carrying part of an AAL5 frame across a cell network (ADR 0013):
    /// `seq` is the arena index of the frame (the packet it belongs to, parked until it is
    /// reassembled), `dir` the frame's, and `FRAME_END` marks the frame's last cell. An ABR
    /// resource-management cell (flag `RM`) belongs to no frame.
    Cell,
}

impl Kind {
    /// The way packets of this kind travel: data from the connection's source to its
    /// destination, acknowledgements back. The only place that maps kinds to directions.
    #[inline]
    pub const fn dir(self) -> Dir {
        match self {
            // A cell's direction is its frame's, set when it is made.
            Kind::Data | Kind::Syn | Kind::Udp | Kind::TfrcData | Kind::Cell => Dir::Forward,
            Kind::Ack | Kind::SynAck | Kind::TfrcFeedback => Dir::Reverse,
        }
    }
}

/// Which way a packet travels on its connection: it picks the route and the endpoint that
/// receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Dir {
    /// From the connection's source host to its destination (data).
    Forward = 0,
    /// From the destination back to the source (acknowledgements, feedback).
    Reverse = 1,
}

/// Bits of [`Packet::flags`].
pub mod flags {
    /// Data: this segment is a retransmission. ACK: the segment it echoes was one (Karn).
    pub const RETX: u8 = 1;
    /// The last packet of an application frame (a message, an AAL5 frame's last cell): queue
    /// disciplines that discard whole frames (early packet discard) look for it.
    pub const FRAME_END: u8 = 2;
    /// A cell: an ABR resource-management cell, not part of any frame (ADR 0013). Forward RM
    /// cells are ECN-capable, so that a switch's marking threshold (EFCI) sets their CE bit,
    /// which a backward RM cell carries back as the congestion indication.
    pub const RM: u8 = 4;
}

/// Explicit Congestion Notification bits of [`Packet::ecn`] (RFC 3168).
pub mod ecn {
    /// ECN-capable transport (IP header): a router may mark instead of dropping.
    pub const ECT: u8 = 1;
    /// Congestion experienced (IP header): set by a marking router.
    pub const CE: u8 = 2;
    /// ECN-echo (TCP header of an ACK): the receiver saw CE.
    pub const ECE: u8 = 4;
    /// Congestion window reduced (TCP header of data): the sender reacted to ECE.
    pub const CWR: u8 = 8;
}

/// SACK blocks an ACK carries at most (three fit beside a timestamp option; ns-2's
/// `max_sack_blocks_`).
pub const MAX_SACK_BLOCKS: usize = 3;

/// Up to three SACK blocks `[start, end)`, stored as offsets from the ACK's cumulative
/// acknowledgement so that a packet stays small (RFC 2018 blocks lie within the receive window).
pub type SackBlocks = [(u32, u32); MAX_SACK_BLOCKS];

/// One packet in flight.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Connection (flow) index.
    pub conn: u32,
    /// Index of the next link on the packet's route.
    pub hop: u16,
    /// Payload type.
    pub kind: Kind,
    /// Which way it travels (set from `kind` when the packet is made).
    pub dir: Dir,
    /// Bits of [`flags`].
    pub flags: u8,
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    /// ECN bits ([`ecn`]): ECT and CE in the IP header, ECE and CWR in the TCP header.
    pub ecn: u8,
    /// Congestion-control loop of a data segment (multi-loop controllers; 0 otherwise).
    pub tag: u8,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Data: segment number. ACK: cumulative acknowledgement.
    pub seq: u64,
    /// Data: send time. ACK: the send time of the segment that triggered it (timestamp echo).
    pub ts: Time,
    /// SACK blocks carried by an ACK (see [`Packet::sack_block`]).
    sack: SackBlocks,
}

impl Packet {
    /// A packet of `kind` on connection `conn`, starting at hop 0.
    pub fn new(conn: u32, kind: Kind, seq: u64, size: u32, ts: Time) -> Packet {
        Packet {
            conn,
            hop: 0,
            kind,
            dir: kind.dir(),
            flags: 0,
            n_sack: 0,
            ecn: 0,
            tag: 0,
            size,
            seq,
            ts,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    /// Data: a retransmission. ACK: it echoes one (Karn's rule).
    #[inline]
    pub fn retx(&self) -> bool {
        self.flags & flags::RETX != 0
    }

    /// Mark as a retransmission (or as echoing one).
    #[inline]
    pub fn set_retx(&mut self, retx: bool) {
        self.flags = (self.flags & !flags::RETX) | if retx { flags::RETX } else { 0 };
    }

    /// SACK block `i` (below `n_sack`) as segment numbers `[start, end)`.
    #[inline]
    pub fn sack_block(&self, i: usize) -> (u64, u64) {
        let (a, b) = self.sack[i];
        (self.seq + u64::from(a), self.seq + u64::from(b))
    }

    /// The SACK blocks as segment numbers.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.n_sack as usize).map(|i| self.sack_block(i))
    }

    /// Word `i` (0..3) of a TFRC packet. TFRC packets keep their fields in the room of the SACK
    /// blocks, which they never carry, so that a packet stays small.
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        let (hi, lo) = self.sack[i];
        (u64::from(hi) << 32) | u64::from(lo)
    }

    /// Set word `i` (0..3) of a TFRC packet (see [`Packet::word`]).
    #[inline]
    pub fn set_word(&mut self, i: usize, v: u64) {
        debug_assert_eq!(self.n_sack, 0, "a packet with SACK blocks has no words");
        self.sack[i] = ((v >> 32) as u32, v as u32);
    }

    /// Append a SACK block `[start, end)`, which must lie above the cumulative ACK and within
    /// 2³² segments of it.
    pub fn push_sack_block(&mut self, start: u64, end: u64) {
        let n = self.n_sack as usize;
        assert!(n < MAX_SACK_BLOCKS && start >= self.seq && end >= start, "invalid SACK block");
        let offset = |v: u64| u32::try_from(v - self.seq).expect("SACK block beyond 2^32 segments");
        self.sack[n] = (offset(start), offset(end));
        self.n_sack += 1;
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() == 56, "a packet stays within 56 bytes");

/// What a queue discipline sees of a packet: enough for per-flow or per-group scheduling and
/// AQM, ECN marking and frame-aware discard (early packet discard), without the headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The connection (its slot: static flows are numbered from 0 in scenario order).
    pub flow: u32,
    /// The flow group it belongs to (index of its `[[flows]]` table).
    pub group: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// ECN bits ([`ecn`]).
    pub ecn: u8,
    /// Bits of [`flags`] (a frame's last packet, a retransmission).
    pub flags: u8,
}

impl Meta {
    /// ECN-capable transport: a marking discipline may mark it instead of dropping it.
    #[inline]
    pub fn ect(&self) -> bool {
        self.ecn & ecn::ECT != 0
    }

    /// The last packet of an application frame.
    #[inline]
    pub fn frame_end(&self) -> bool {
        self.flags & flags::FRAME_END != 0
    }
}

/// Index of a packet in the [`Arena`].
pub type PacketId = u32;

/// Slab of packets with a free list.
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl Arena {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Store `p`, reusing a freed slot when there is one.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PacketId
        }
    }

    /// Release a slot. The caller must not use `id` afterwards.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(!self.free.contains(&id), "packet {id} freed twice");
        self.free.push(id);
    }

    /// The packet at `id`.
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    /// The packet at `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
}
