//! A quick hash for keys the engine makes itself (node states, task shapes), and hash maps
//! that use it. Such maps are looked up by key only, never walked: their order is not
//! observable.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hash map keyed by engine data, hashed with [`WordHasher`].
pub(crate) type WordHashMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// A quick multiply-and-rotate hash of a key's words: the keys are engine data, not input an
/// adversary picks, and SipHash over a state key's 17 words costs more than the work a lookup
/// spares.
#[derive(Default)]
pub(crate) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    /// A slice of integers (the state key's arrays) arrives as its bytes: hashed eight at a
    /// time, as the words they were.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut full = [0; 8];
            full.copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(full));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(last));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, word: u32) {
        self.write_u64(u64::from(word));
    }

    fn write_u16(&mut self, word: u16) {
        self.write_u64(u64::from(word));
    }

    fn write_u8(&mut self, word: u8) {
        self.write_u64(u64::from(word));
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash of a sequence of writes.
    fn hash_of(write: impl Fn(&mut WordHasher)) -> u64 {
        let mut hasher = WordHasher::default();
        write(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn the_hash_changes_with_every_word_and_byte_written() {
        use std::collections::HashSet;
        // One word after another: each of its bits changes the hash (the mix is a bijection
        // of the word), whatever came before.
        for first in [0_u64, 1, 0x51_7c, u64::MAX] {
            let mut seen = HashSet::new();
            for bit in 0..64 {
                assert!(seen.insert(hash_of(|h| {
                    h.write_u64(first);
                    h.write_u64(1 << bit);
                })));
            }
            assert!(seen.insert(hash_of(|h| {
                h.write_u64(first);
                h.write_u64(0);
            })));
        }
        // Every width is read, and bytes one by one.
        let mut widths = HashSet::new();
        for value in [1_u8, 2] {
            widths.insert(hash_of(|h| h.write_u8(value)));
            widths.insert(hash_of(|h| h.write_u16(u16::from(value) << 8)));
            widths.insert(hash_of(|h| h.write_u32(u32::from(value) << 16)));
            widths.insert(hash_of(|h| h.write_usize(usize::from(value) << 24)));
            widths.insert(hash_of(|h| h.write(&[3, value])));
        }
        assert_eq!(widths.len(), 10);
    }
}
