//! Byte-level mutations of a file, shared by the fuzz tests of the readers and of the
//! ONNX importer.

use tinyonnx_core::init::SplitMix64;

/// One mutation of `bytes`: flip bits, cut, repeat a run, or overwrite with a value
/// that makes a length field large or negative.
pub fn mutate(rng: &mut SplitMix64, bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let n = 1 + (rng.next_u64() % 4) as usize;
    for _ in 0..n {
        if b.is_empty() {
            break;
        }
        let at = (rng.next_u64() % b.len() as u64) as usize;
        match rng.next_u64() % 5 {
            0 => b[at] ^= 1 << (rng.next_u64() % 8),
            1 => b.truncate(at),
            2 => {
                let end = (at + 1 + (rng.next_u64() % 16) as usize).min(b.len());
                let run = b[at..end].to_vec();
                b.splice(at..at, run);
            }
            3 => b[at] = [0x00, 0xFF, 0x7F, 0x80, b'9'][(rng.next_u64() % 5) as usize],
            _ => {
                let end = (at + 8).min(b.len());
                for v in &mut b[at..end] {
                    *v = 0xFF;
                }
            }
        }
    }
    b
}
