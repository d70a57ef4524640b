//! What the link model needs from an IPv4 packet (RFC 791): its length, its ECN field
//! (RFC 3168 §5) and a hash of its 5-tuple naming its flow, and the one change a queue makes
//! to it, setting Congestion Experienced with the header checksum fixed.
//!
//! IPv6 and anything that is not a well-formed IPv4 header are not forwarded: the emulator
//! models an IPv4 link and counts such packets instead.

use flowshare_core::packet::ecn;

/// The RFC 3168 ECN codepoints of the IP header's two low TOS bits.
pub mod codepoint {
    /// Not ECN-capable transport.
    pub const NOT_ECT: u8 = 0b00;
    /// ECT(1).
    pub const ECT1: u8 = 0b01;
    /// ECT(0).
    pub const ECT0: u8 = 0b10;
    /// Congestion experienced.
    pub const CE: u8 = 0b11;
}

/// Why a packet is not forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejected {
    /// Not IPv4 (IPv6 above all).
    NotIpv4,
    /// An IPv4 header that is cut short or inconsistent with the packet's length.
    Malformed,
}

/// What the link model sees of an IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// Total length from the header, in bytes: the size the link serializes.
    pub total_len: u16,
    /// The ECN codepoint ([`codepoint`]).
    pub ecn: u8,
    /// Hash of (source, destination, protocol, source port, destination port); ports are 0
    /// for protocols without them and for non-first fragments.
    pub flow_hash: u32,
}

impl Ipv4Info {
    /// The ECN bits of a core [`Meta`](flowshare_core::packet::Meta): ECT for any ECN-capable
    /// codepoint, CE in addition for Congestion Experienced.
    pub fn meta_ecn(&self) -> u8 {
        match self.ecn {
            codepoint::NOT_ECT => 0,
            codepoint::CE => ecn::ECT | ecn::CE,
            _ => ecn::ECT,
        }
    }
}

/// Protocols whose first four payload bytes are source and destination ports: TCP, UDP,
/// DCCP, UDP-Lite and SCTP.
fn has_ports(proto: u8) -> bool {
    matches!(proto, 6 | 17 | 33 | 136 | 132)
}

/// FNV-1a over `bytes`, then a final avalanche so that nearby tuples spread over all bits.
fn hash(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^ (h >> 16)
}

/// Read the header of `packet` as a TUN device delivers it (no link-layer header).
pub fn parse(packet: &[u8]) -> Result<Ipv4Info, Rejected> {
    let Some(&first) = packet.first() else {
        return Err(Rejected::Malformed);
    };
    if first >> 4 != 4 {
        return Err(Rejected::NotIpv4);
    }
    let ihl = usize::from(first & 0x0f) * 4;
    if ihl < 20 || packet.len() < ihl {
        return Err(Rejected::Malformed);
    }
    let total_len = u16::from_be_bytes([packet[2], packet[3]]);
    if usize::from(total_len) < ihl || usize::from(total_len) > packet.len() {
        return Err(Rejected::Malformed);
    }
    let proto = packet[9];
    let fragment_offset = u16::from_be_bytes([packet[6], packet[7]]) & 0x1fff;
    let mut tuple = [0u8; 13];
    tuple[..8].copy_from_slice(&packet[12..20]);
    tuple[8] = proto;
    if has_ports(proto) && fragment_offset == 0 && usize::from(total_len) >= ihl + 4 {
        tuple[9..13].copy_from_slice(&packet[ihl..ihl + 4]);
    }
    Ok(Ipv4Info { total_len, ecn: packet[1] & 0b11, flow_hash: hash(&tuple) })
}

/// The Internet checksum (RFC 1071) of an IPv4 header whose checksum field is zero.
pub fn header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in header.chunks(2) {
        sum += u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Set Congestion Experienced on an ECN-capable packet `parse` accepted and recompute its
/// header checksum. Returns false, changing nothing, for a packet that is not ECN-capable
/// (RFC 3168 §5: only ECT packets may be marked) or already marked.
pub fn set_ce(packet: &mut [u8]) -> bool {
    let field = packet[1] & 0b11;
    if field == codepoint::NOT_ECT || field == codepoint::CE {
        return false;
    }
    packet[1] |= codepoint::CE;
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    packet[10..12].copy_from_slice(&[0, 0]);
    let sum = header_checksum(&packet[..ihl]);
    packet[10..12].copy_from_slice(&sum.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UDP packet of `total` bytes from 10.0.0.1:`sport` to 10.0.0.2:`dport` with TOS `tos`
    /// and a valid header checksum.
    fn udp(tos: u8, sport: u16, dport: u16, total: u16) -> Vec<u8> {
        let mut p = vec![0u8; usize::from(total)];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p[6] = 0x40;
        p[8] = 64;
        p[9] = 17;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let sum = header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    #[test]
    fn parse_reads_length_ecn_and_flow() {
        let p = udp(codepoint::ECT0, 4000, 5001, 1500);
        let info = parse(&p).unwrap();
        assert_eq!(info.total_len, 1500);
        assert_eq!(info.ecn, codepoint::ECT0);
        assert_eq!(info.meta_ecn(), ecn::ECT);
        // The same 5-tuple hashes alike whatever the payload or TOS; another port differs.
        let mut q = udp(0, 4000, 5001, 100);
        q[50] = 7;
        assert_eq!(parse(&q).unwrap().flow_hash, info.flow_hash);
        assert_eq!(parse(&q).unwrap().meta_ecn(), 0);
        assert_ne!(parse(&udp(0, 4001, 5001, 100)).unwrap().flow_hash, info.flow_hash);
    }

    #[test]
    fn ce_maps_to_ect_and_ce() {
        let info = parse(&udp(codepoint::CE, 1, 2, 40)).unwrap();
        assert_eq!(info.meta_ecn(), ecn::ECT | ecn::CE);
        assert_eq!(parse(&udp(codepoint::ECT1, 1, 2, 40)).unwrap().meta_ecn(), ecn::ECT);
    }

    #[test]
    fn fragments_after_the_first_hash_without_ports() {
        let mut a = udp(0, 1, 2, 100);
        let mut b = udp(0, 3, 4, 100);
        for p in [&mut a, &mut b] {
            p[7] = 10; // fragment offset 80 bytes
        }
        assert_eq!(parse(&a).unwrap().flow_hash, parse(&b).unwrap().flow_hash);
    }

    #[test]
    fn rejects_ipv6_and_malformed_headers() {
        let mut v6 = vec![0u8; 60];
        v6[0] = 0x60;
        assert_eq!(parse(&v6), Err(Rejected::NotIpv4));
        assert_eq!(parse(&[]), Err(Rejected::Malformed));
        assert_eq!(parse(&[0x45, 0, 0]), Err(Rejected::Malformed));
        let mut short_ihl = udp(0, 1, 2, 40);
        short_ihl[0] = 0x44;
        assert_eq!(parse(&short_ihl), Err(Rejected::Malformed));
        // Total length beyond what was read.
        let p = udp(0, 1, 2, 100);
        assert_eq!(parse(&p[..80]), Err(Rejected::Malformed));
        // Total length shorter than the header.
        let mut q = udp(0, 1, 2, 100);
        q[2..4].copy_from_slice(&10u16.to_be_bytes());
        assert_eq!(parse(&q), Err(Rejected::Malformed));
    }

    #[test]
    fn set_ce_marks_ect_packets_and_keeps_the_checksum_valid() {
        for ect in [codepoint::ECT0, codepoint::ECT1] {
            let mut p = udp(0xb8 | ect, 1, 2, 60);
            assert!(set_ce(&mut p));
            assert_eq!(p[1], 0xb8 | codepoint::CE, "DSCP kept");
            // A header with a valid checksum sums to zero.
            assert_eq!(header_checksum(&p[..20]), 0);
            assert_eq!(parse(&p).unwrap().ecn, codepoint::CE);
        }
    }

    #[test]
    fn set_ce_leaves_non_ect_and_marked_packets_alone() {
        for cp in [codepoint::NOT_ECT, codepoint::CE] {
            let mut p = udp(cp, 1, 2, 60);
            let before = p.clone();
            assert!(!set_ce(&mut p));
            assert_eq!(p, before);
        }
    }

    #[test]
    fn checksum_matches_a_known_header() {
        // RFC 1071-style example: a header captured with checksum 0xb861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
            0x00, 0xc7,
        ];
        assert_eq!(header_checksum(&h), 0xb861);
    }
}
