//! Packets and the arena they live in.
//!
//! A packet is created once by a sender or sink, moved between links by its arena index and
//! freed when it is delivered or dropped, so the steady state allocates nothing.

use crate::units::Time;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A TCP data segment; `seq` is its segment number.
    Data,
    /// A TCP acknowledgement; `seq` is the cumulative ACK (next segment expected).
    Ack,
    /// Connection request of the optional three-way handshake.
    Syn,
    /// Answer to a `Syn`.
    SynAck,
}

/// Up to three SACK blocks `[start, end)` in segment numbers (RFC 2018).
pub type SackBlocks = [(u64, u64); 3];

/// One packet in flight.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Connection (flow) index.
    pub conn: u32,
    /// Index of the next link on the packet's route.
    pub hop: u16,
    /// Payload type.
    pub kind: Kind,
    /// Data: this segment is a retransmission. ACK: the segment it echoes was one (Karn).
    pub retx: bool,
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Data: segment number. ACK: cumulative acknowledgement.
    pub seq: u64,
    /// Data: send time. ACK: the send time of the segment that triggered it (timestamp echo).
    pub ts: Time,
    /// SACK blocks carried by an ACK.
    pub sack: SackBlocks,
}

impl Packet {
    /// A packet of `kind` on connection `conn`, starting at hop 0.
    pub fn new(conn: u32, kind: Kind, seq: u64, size: u32, ts: Time) -> Packet {
        Packet { conn, hop: 0, kind, retx: false, n_sack: 0, size, seq, ts, sack: [(0, 0); 3] }
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

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
