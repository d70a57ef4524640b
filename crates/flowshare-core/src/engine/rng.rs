//! Named random streams derived from (master seed, stream name).
//!
//! Each random aspect of a run (a loss model on one link, the start times of one flow group)
//! asks for its own stream by a stable name, so adding a component never shifts the numbers
//! another component draws, and two runs that differ only in the algorithm under test see the
//! same random inputs (common random numbers).

use crate::units::Time;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator type of every stream.
pub type Stream = Xoshiro256PlusPlus;

/// FNV-1a over the name, mixed with the master seed; stable across platforms and releases.
fn stream_seed(seed: u64, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.to_le_bytes().iter().chain(name.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A uniform number in [0, 1) from the top 53 bits of one draw.
#[inline]
pub fn uniform(rng: &mut Stream) -> f64 {
    use rand_core::RngCore;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform whole number of nanoseconds in [0, `max`] (a random delay of at most `max`).
#[inline]
pub fn uniform_delay(rng: &mut Stream, max: Time) -> Time {
    ((uniform(rng) * (max + 1) as f64) as Time).min(max)
}

/// The stream called `name` of a run with master seed `seed`.
pub fn stream(seed: u64, name: &str) -> Stream {
    Xoshiro256PlusPlus::seed_from_u64(stream_seed(seed, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;

    #[test]
    fn same_seed_and_name_give_the_same_numbers() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut s = stream(7, "link/3/loss");
                move |_| s.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut s = stream(7, "link/3/loss");
                move |_| s.next_u64()
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn names_and_seeds_separate_streams() {
        let x = stream(7, "link/3/loss").next_u64();
        assert_ne!(x, stream(7, "link/4/loss").next_u64());
        assert_ne!(x, stream(8, "link/3/loss").next_u64());
    }
}
