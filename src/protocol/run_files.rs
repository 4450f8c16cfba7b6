//! The record formats of a run's folder that more than one process reads:
//! the supervisor writes them, the daemon and clients read them back. One
//! owner per format, here; bytes and values only.
//!
//! - `output.idx`: [`TimeSample`]s, when the log reached an offset (replay
//!   timing, asciicast export).
//! - `sizes`: [`SizeChange`]s, the screen's size from an offset on: the size
//!   at spawn, then every resize at the offset the supervisor's emulator
//!   had parsed when it took the new size. Replaying the log through an
//!   emulator that takes each size at its offset gives the screen the
//!   supervisor had (`agents logs`, asciicast `"r"` events).
//! - `checkpoints`: [`Checkpoint`]s, the screen every ~1 MiB of output, so
//!   a screen is rebuilt from the last one and the log after it.

use serde::{Deserialize, Serialize};

pub use crate::values::screen::SizeChange;

/// The log had reached `offset` at `at_ms` (ms since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeSample {
    pub offset: u64,
    pub at_ms: u64,
}

impl TimeSample {
    /// Bytes per record: offset, then time, each u64 little-endian.
    pub const LEN: usize = 16;

    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut rec = [0u8; Self::LEN];
        rec[..8].copy_from_slice(&self.offset.to_le_bytes());
        rec[8..].copy_from_slice(&self.at_ms.to_le_bytes());
        rec
    }

    /// Every whole record of `bytes`; a torn last one is left out.
    pub fn decode_all(bytes: &[u8]) -> Vec<TimeSample> {
        bytes
            .chunks_exact(Self::LEN)
            .map(|c| TimeSample {
                offset: u64_at(c, 0),
                at_ms: u64_at(c, 8),
            })
            .collect()
    }
}

impl SizeChange {
    /// Bytes per record: offset and time (u64), rows and cols (u16), all
    /// little-endian.
    pub const LEN: usize = 20;

    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut rec = [0u8; Self::LEN];
        rec[..8].copy_from_slice(&self.offset.to_le_bytes());
        rec[8..16].copy_from_slice(&self.at_ms.to_le_bytes());
        rec[16..18].copy_from_slice(&self.rows.to_le_bytes());
        rec[18..].copy_from_slice(&self.cols.to_le_bytes());
        rec
    }

    /// Every whole record of `bytes`, in offset order as written; a torn
    /// last one, and a record whose offset goes back (a file that is not
    /// one), are left out.
    pub fn decode_all(bytes: &[u8]) -> Vec<SizeChange> {
        let mut out: Vec<SizeChange> = Vec::new();
        for c in bytes.chunks_exact(Self::LEN) {
            let change = SizeChange {
                offset: u64_at(c, 0),
                at_ms: u64_at(c, 8),
                rows: u16::from_le_bytes([c[16], c[17]]),
                cols: u16::from_le_bytes([c[18], c[19]]),
            };
            if out.last().is_some_and(|last| change.offset < last.offset) || change.rows == 0 || change.cols == 0 {
                break;
            }
            out.push(change);
        }
        out
    }
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_round_trip_and_a_torn_one_is_left_out() {
        let checkpoints = [
            Checkpoint {
                offset: 1 << 20,
                scrolled: 7,
                rows: 40,
                cols: 120,
                screen: b"\x1b[Hhello".to_vec(),
            },
            Checkpoint {
                offset: 2 << 20,
                scrolled: 9,
                rows: 50,
                cols: 200,
                screen: Vec::new(),
            },
        ];
        let mut bytes: Vec<u8> = checkpoints.iter().flat_map(Checkpoint::encode).collect();
        assert_eq!(Checkpoint::decode_all(&bytes), checkpoints);
        bytes.extend_from_slice(&checkpoints[0].encode()[..30]);
        assert_eq!(Checkpoint::decode_all(&bytes), checkpoints);
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_is_left_out() {
        let samples = [
            TimeSample { offset: 0, at_ms: 5 },
            TimeSample {
                offset: 1 << 40,
                at_ms: u64::MAX,
            },
        ];
        let mut bytes: Vec<u8> = samples.iter().flat_map(|s| s.encode()).collect();
        bytes.extend_from_slice(&[1, 2, 3]);
        assert_eq!(TimeSample::decode_all(&bytes), samples);

        let sizes = [
            SizeChange {
                offset: 0,
                at_ms: 10,
                rows: 24,
                cols: 80,
            },
            SizeChange {
                offset: 4096,
                at_ms: 20,
                rows: 50,
                cols: 200,
            },
        ];
        let mut bytes: Vec<u8> = sizes.iter().flat_map(|s| s.encode()).collect();
        bytes.extend_from_slice(&[9; 7]);
        assert_eq!(SizeChange::decode_all(&bytes), sizes);
    }

    #[test]
    fn a_size_record_that_goes_back_ends_the_list() {
        let at = |offset| SizeChange {
            offset,
            at_ms: 0,
            rows: 2,
            cols: 2,
        };
        let bytes: Vec<u8> = [at(10), at(5), at(20)].iter().flat_map(|s| s.encode()).collect();
        assert_eq!(SizeChange::decode_all(&bytes), [at(10)]);
    }
}

/// The screen at log offset `offset`: its size, how many rows had
/// scrolled off, and the bytes that redraw it (`Terminal::snapshot`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub offset: u64,
    pub scrolled: u64,
    pub rows: u16,
    pub cols: u16,
    pub screen: Vec<u8>,
}

impl Checkpoint {
    /// Bytes before the screen: offset and scrolled rows (u64), rows and
    /// cols (u16), the screen's length (u32), all little-endian.
    pub const HEADER: usize = 24;

    pub fn encode(&self) -> Vec<u8> {
        let mut rec = Vec::with_capacity(Self::HEADER + self.screen.len());
        rec.extend_from_slice(&self.offset.to_le_bytes());
        rec.extend_from_slice(&self.scrolled.to_le_bytes());
        rec.extend_from_slice(&self.rows.to_le_bytes());
        rec.extend_from_slice(&self.cols.to_le_bytes());
        rec.extend_from_slice(&(self.screen.len() as u32).to_le_bytes());
        rec.extend_from_slice(&self.screen);
        rec
    }

    /// Every whole record of `bytes`; a torn last one is left out.
    pub fn decode_all(bytes: &[u8]) -> Vec<Checkpoint> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while rest.len() >= Self::HEADER {
            let len = u32::from_le_bytes([rest[20], rest[21], rest[22], rest[23]]) as usize;
            let Some(screen) = rest.get(Self::HEADER..Self::HEADER + len) else {
                break;
            };
            out.push(Checkpoint {
                offset: u64_at(rest, 0),
                scrolled: u64_at(rest, 8),
                rows: u16::from_le_bytes([rest[16], rest[17]]),
                cols: u16::from_le_bytes([rest[18], rest[19]]),
                screen: screen.to_vec(),
            });
            rest = &rest[Self::HEADER + len..];
        }
        out
    }
}
