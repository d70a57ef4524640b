//! A capture of the packets leaving the emulated link: libpcap format with nanosecond
//! timestamps and LINKTYPE_RAW records (the constants of the simulator's own captures,
//! `flowshare_core::trace::pcap`), whole packets, wall-clock time.

use crate::EmuError;
use flowshare_core::trace::pcap::{LINKTYPE_RAW, MAGIC_NS};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Snap length: an IPv4 packet is at most this long.
const SNAPLEN: u32 = 65_535;

/// A capture file being written.
#[derive(Debug)]
pub struct Capture {
    out: BufWriter<File>,
    path: PathBuf,
}

impl Capture {
    /// Create `path` and write the file header.
    pub fn create(path: &Path) -> Result<Capture, EmuError> {
        let fail = |source| EmuError::Pcap { path: path.to_path_buf(), source };
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path).map_err(fail)?);
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h).map_err(fail)?;
        Ok(Capture { out, path: path.to_path_buf() })
    }

    /// Append `packet`, written at `t_ns` (nanoseconds since the Unix epoch).
    pub fn write(&mut self, t_ns: u64, packet: &[u8]) -> Result<(), EmuError> {
        let len = packet.len().min(SNAPLEN as usize);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(packet.len() as u32).to_le_bytes());
        let fail = |source| EmuError::Pcap { path: self.path.clone(), source };
        self.out.write_all(&h).map_err(fail)?;
        self.out.write_all(&packet[..len]).map_err(|source| EmuError::Pcap { path: self.path.clone(), source })
    }

    /// Flush what is buffered.
    pub fn finish(mut self) -> Result<(), EmuError> {
        self.out.flush().map_err(|source| EmuError::Pcap { path: self.path.clone(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_and_records() {
        let path = std::env::temp_dir().join(format!("flowshare-emu-pcap-{}.pcap", std::process::id()));
        let mut c = Capture::create(&path).unwrap();
        c.write(1_500_000_123, &[0x45, 0, 0, 4]).unwrap();
        c.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(bytes.len(), 24 + 16 + 4);
        assert_eq!(&bytes[0..4], &MAGIC_NS.to_le_bytes());
        assert_eq!(&bytes[20..24], &101u32.to_le_bytes());
        assert_eq!(&bytes[24..28], &1u32.to_le_bytes());
        assert_eq!(&bytes[28..32], &500_000_123u32.to_le_bytes());
        assert_eq!(&bytes[32..36], &4u32.to_le_bytes());
        assert_eq!(&bytes[40..44], &[0x45, 0, 0, 4]);
    }
}
