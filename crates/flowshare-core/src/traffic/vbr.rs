//! A synthetic MPEG-like variable bit rate source: frames at a fixed frame rate following a
//! group-of-pictures pattern of I, P and B frames, each frame split into packets.
//!
//! Frame sizes (payload bytes). With `n_I`, `n_P`, `n_B` frames of each type in a GOP of
//! `n` frames, frame rate `f`, mean rate `m`, peak rate `p`, variation `v` and P/B ratio `r`:
//!
//! * the largest possible frame is an I frame at its upper bound: `S_I · (1 + v) = p / (8 f)`;
//! * the GOP carries the mean: `n_I·S_I + n_P·S_P + n_B·S_B = n · m / (8 f)`;
//! * `S_P = r · S_B`.
//!
//! Each frame's size is its type's nominal size times a factor uniform in `[1 − v, 1 + v]`
//! (mean 1), drawn from the source's own stream, so the long-run mean rate is `m` and no frame
//! exceeds `p / f` bits. A frame of `F` bytes becomes `⌈F / size⌉` packets, the last one
//! shorter; they leave either evenly spread over the frame interval or all at the frame's
//! start (back to back, serialized by the first link).

use super::{uniform, Stream};
use crate::units::Time;

/// Resolved parameters of a VBR source.
#[derive(Clone, Debug, PartialEq)]
pub struct VbrParams {
    /// Frames per second.
    pub fps: f64,
    /// Frame types of one GOP: 0 = I, 1 = P, 2 = B.
    pub gop: Vec<u8>,
    /// Nominal (mean) size of an I, P and B frame, payload bytes.
    pub sizes: [f64; 3],
    /// Relative variation of frame sizes, 0 ≤ v < 1.
    pub variation: f64,
    /// Spread each frame's packets over the frame interval.
    pub spread: bool,
}

impl VbrParams {
    /// Frame sizes for a mean and a peak rate (bits per second); an error message if the GOP
    /// cannot carry them.
    pub fn new(
        fps: f64,
        gop: Vec<u8>,
        mean_bps: f64,
        peak_bps: f64,
        pb_ratio: f64,
        variation: f64,
        spread: bool,
    ) -> Result<Self, String> {
        let count = |k: u8| gop.iter().filter(|&&t| t == k).count() as f64;
        let (n_i, n_p, n_b) = (count(0), count(1), count(2));
        let i = peak_bps / 8.0 / fps / (1.0 + variation);
        let rest = gop.len() as f64 * mean_bps / 8.0 / fps - n_i * i;
        if n_p + n_b == 0.0 {
            return Err("needs P or B frames to reach a mean below the peak".into());
        }
        let b = rest / (n_p * pb_ratio + n_b);
        let p = pb_ratio * b;
        if rest <= 0.0 || p.max(b) > i * (1.0 + 1e-12) {
            // Bounds on the mean: P and B frames empty, or the larger of them as large as I.
            let to_bps = |gop_bytes: f64| gop_bytes * 8.0 * fps / gop.len() as f64;
            let b_max = i / pb_ratio.max(1.0);
            let (low, high) = (to_bps(n_i * i), to_bps(n_i * i + (n_p * pb_ratio + n_b) * b_max));
            return Err(format!(
                "must be above {:.0}bps and at most {:.0}bps for this peak, gop, pb_ratio and variation",
                low, high
            ));
        }
        Ok(VbrParams { fps, gop, sizes: [i, p, b], variation, spread })
    }

    /// Largest frame, bytes.
    pub fn max_frame(&self) -> f64 {
        self.sizes[0] * (1.0 + self.variation)
    }
}

/// A VBR source.
#[derive(Clone, Debug)]
pub struct Vbr {
    p: VbrParams,
    /// Frame interval, ns.
    frame_ns: f64,
    start: Time,
    /// Index of the next frame (from the start), and its position in the GOP.
    frame: u64,
    gop_pos: usize,
    /// Current frame: start time, packets, packets sent, payload of the last packet.
    frame_at: Time,
    n: u32,
    sent: u32,
    last: u32,
    payload: u32,
    rng: Stream,
}

impl Vbr {
    /// A source of packets of up to `payload` bytes from `start`. The first frame's position
    /// in the GOP is drawn from `rng`, so sources started together are not in phase.
    pub fn new(p: VbrParams, payload: u32, start: Time, mut rng: Stream) -> Self {
        let gop_pos = ((uniform(&mut rng) * p.gop.len() as f64) as usize).min(p.gop.len() - 1);
        Vbr {
            frame_ns: 1e9 / p.fps,
            p,
            start,
            frame: 0,
            gop_pos,
            frame_at: start,
            n: 0,
            sent: 0,
            last: 0,
            payload,
            rng,
        }
    }

    /// Draw the next frame's size and split it into packets.
    fn next_frame(&mut self) {
        let kind = self.p.gop[self.gop_pos] as usize;
        self.gop_pos = (self.gop_pos + 1) % self.p.gop.len();
        let factor = 1.0 + self.p.variation * (2.0 * uniform(&mut self.rng) - 1.0);
        let bytes = ((self.p.sizes[kind] * factor).round() as u64).max(1);
        let size = u64::from(self.payload);
        let n = bytes.div_ceil(size);
        self.n = n as u32;
        self.last = (bytes - (n - 1) * size) as u32;
        self.sent = 0;
        self.frame_at = self.start + (self.frame as f64 * self.frame_ns).round() as Time;
        self.frame += 1;
    }

    /// The next packet: nominal send time and payload bytes.
    #[inline]
    pub fn next_packet(&mut self) -> Option<(Time, u32)> {
        if self.sent == self.n {
            self.next_frame();
        }
        let j = self.sent;
        self.sent += 1;
        let offset = if self.p.spread { (f64::from(j) * self.frame_ns / f64::from(self.n)).round() as Time } else { 0 };
        let bytes = if self.sent == self.n { self.last } else { self.payload };
        Some((self.frame_at + offset, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn ibbp() -> Vec<u8> {
        "IBBPBBPBBPBB".bytes().map(|c| [b'I', b'P', b'B'].iter().position(|&k| k == c).unwrap() as u8).collect()
    }

    #[test]
    fn hasegawa_sizes() {
        // 4.5 Mbit/s mean, 14.84 Mbit/s peak, 30 frames/s, P = 2 B, ±20 %.
        let p = VbrParams::new(30.0, ibbp(), 4.5e6, 14.84e6, 2.0, 0.2, true).unwrap();
        assert!((p.max_frame() - 14.84e6 / 8.0 / 30.0).abs() < 1e-6);
        let gop: f64 = p.sizes[0] + 3.0 * p.sizes[1] + 8.0 * p.sizes[2];
        assert!((gop - 12.0 * 4.5e6 / 8.0 / 30.0).abs() < 1e-6);
        assert!((p.sizes[1] / p.sizes[2] - 2.0).abs() < 1e-12);
        assert!(VbrParams::new(30.0, ibbp(), 14e6, 14.84e6, 2.0, 0.2, true).is_err());
        assert!(VbrParams::new(30.0, vec![0], 1e6, 2e6, 2.0, 0.2, true).is_err());
    }

    /// Per frame (grouped by frame interval): total bytes.
    fn frames(spread: bool, variation: f64, n_frames: usize) -> (Vec<f64>, Vbr) {
        let p = VbrParams::new(30.0, ibbp(), 4.5e6, 14.84e6, 2.0, variation, spread).unwrap();
        let mut s = Vbr::new(p, 1000, 1_000_000, stream(4, "vbr"));
        let frame_ns = 1e9 / 30.0;
        let mut bytes = vec![0.0; n_frames];
        loop {
            let (t, b) = s.next_packet().unwrap();
            // Frame starts are rounded to the nanosecond: allow for it.
            let k = ((t + 1 - 1_000_000) as f64 / frame_ns).floor() as usize;
            if k >= n_frames {
                break;
            }
            assert!((1..=1000).contains(&b));
            if !spread {
                assert!(((t - 1_000_000) as f64 - k as f64 * frame_ns).abs() < 1.0, "back to back at the frame start");
            }
            bytes[k] += f64::from(b);
        }
        (bytes, s)
    }

    #[test]
    fn long_run_mean_and_peak_frame_rate() {
        let (bytes, _) = frames(true, 0.2, 30 * 600);
        let mean = bytes.iter().sum::<f64>() * 8.0 / 600.0;
        assert!((mean / 4.5e6 - 1.0).abs() < 0.01, "mean {mean}");
        let peak = bytes.iter().cloned().fold(0.0, f64::max) * 8.0 * 30.0;
        assert!(peak <= 14.84e6 + 8.0 * 30.0 && peak > 0.99 * 14.84e6, "peak {peak}");
        // Without variation every I frame is exactly at the peak.
        let (bytes, _) = frames(false, 0.0, 30 * 10);
        let peak = bytes.iter().cloned().fold(0.0, f64::max) * 8.0 * 30.0;
        assert!((peak - 14.84e6).abs() <= 8.0 * 30.0, "peak {peak}");
    }
}
