//! A fast non-cryptographic hasher for the per-event maps (names, flow ids,
//! pids): the default SipHash costs more than the rest of the per-event
//! work. The same hasher as mergetrace's `fasthash`, kept apart until it
//! moves into core. Inputs are local trace files, so hash flooding is not
//! a concern. Same mixing as rustc's FxHasher (rotate, xor, multiply).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work_with_strings_and_ints() {
        let mut m: FastMap<Box<str>, u32> = FastMap::default();
        for i in 0..1000u32 {
            m.insert(format!("kernel_{i}").into(), i);
        }
        assert_eq!(m.get("kernel_517"), Some(&517));
        assert_eq!(m.get("kernel_5170"), None);
        let mut n: FastMap<u64, u64> = FastMap::default();
        n.insert(4294967295, 1);
        assert_eq!(n[&4294967295], 1);
    }
}
