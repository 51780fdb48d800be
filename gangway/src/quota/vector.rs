//! Fixed-size quota vectors indexed by interned resource keys.

use std::ops::{Index, IndexMut};

/// The most distinct resource keys one [`crate::quota::QuotaTree`] can hold: `cpu`,
/// `memory_mib`, `gpu` and up to 13 `gpu:MODEL` keys.
pub(crate) const MAX_KEYS: usize = 16;

/// An interned resource key: an index into every [`QuotaVec`] of one
/// [`crate::quota::QuotaTree`]. Look keys up with [`crate::quota::QuotaTree::key`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct KeyId(u8);

impl KeyId {
    /// The `cpu` key (always present).
    pub(crate) const CPU: KeyId = KeyId(0);
    /// The `memory_mib` key (always present).
    pub(crate) const MEMORY_MIB: KeyId = KeyId(1);
    /// The `gpu` key, GPUs of any model (always present).
    pub(crate) const GPU: KeyId = KeyId(2);

    /// The position of this key in a [`QuotaVec`].
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }

    /// The key at position `index`; `None` at or beyond 16 (`MAX_KEYS`).
    pub(crate) const fn from_index(index: usize) -> Option<KeyId> {
        if index < MAX_KEYS {
            Some(KeyId(index as u8))
        } else {
            None
        }
    }
}

/// Amounts per resource key, in thousandths of the key's unit: millicpus for `cpu`,
/// thousandths of a MiB for `memory_mib` (so `16000` MiB is `16_000_000`), thousandths of a GPU
/// for `gpu` and `gpu:MODEL`. This is the unit of [`crate::Milli::milli`], so quota
/// configuration values drop in unchanged.
///
/// A plain `Copy` array: adding, subtracting and comparing never allocate. Arithmetic saturates
/// rather than overflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct QuotaVec([u64; MAX_KEYS]);

impl QuotaVec {
    /// All zero.
    pub(crate) const ZERO: QuotaVec = QuotaVec([0; MAX_KEYS]);

    /// Every amount set to `value`.
    pub(crate) const fn filled(value: u64) -> QuotaVec {
        QuotaVec([value; MAX_KEYS])
    }

    /// True when every amount is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.0.iter().all(|&v| v == 0)
    }

    /// Adds `other` amount by amount (saturating).
    pub(crate) fn add(&mut self, other: &QuotaVec) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = a.saturating_add(*b);
        }
    }

    /// Subtracts `other` amount by amount, stopping at zero.
    pub(crate) fn sub(&mut self, other: &QuotaVec) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = a.saturating_sub(*b);
        }
    }

    /// The amounts in key order (all 16 (`MAX_KEYS`) of them; keys a tree does not use are zero).
    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.0
    }
}

impl Default for QuotaVec {
    fn default() -> Self {
        QuotaVec::ZERO
    }
}

impl Index<KeyId> for QuotaVec {
    type Output = u64;

    fn index(&self, key: KeyId) -> &u64 {
        &self.0[key.index()]
    }
}

impl IndexMut<KeyId> for QuotaVec {
    fn index_mut(&mut self, key: KeyId) -> &mut u64 {
        &mut self.0[key.index()]
    }
}

/// A set of keys as a bit mask (bit `i` for the key at index `i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeyMask(u32);

impl KeyMask {
    pub(crate) const EMPTY: KeyMask = KeyMask(0);

    pub(crate) fn insert(&mut self, key: KeyId) {
        self.0 |= 1 << key.index();
    }

    pub(crate) fn contains(self, key: KeyId) -> bool {
        self.0 & (1 << key.index()) != 0
    }

    pub(crate) fn union(self, other: KeyMask) -> KeyMask {
        KeyMask(self.0 | other.0)
    }

    /// The keys in the set, in index order.
    pub(crate) fn iter(self) -> impl Iterator<Item = KeyId> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let index = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            Some(KeyId(index))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(index: usize) -> KeyId {
        KeyId::from_index(index).unwrap()
    }

    /// A mask holds the keys inserted, and only those; it yields them in index order, each
    /// once, whatever the order they came in.
    #[test]
    fn a_key_mask_holds_what_was_inserted_and_yields_it_in_index_order() {
        let mut mask = KeyMask::EMPTY;
        assert_eq!(mask.iter().count(), 0);
        for i in [15, 2, 0, 2] {
            mask.insert(key(i));
        }
        assert_eq!(mask.iter().collect::<Vec<_>>(), [key(0), key(2), key(15)]);
        let held: Vec<usize> = (0..MAX_KEYS).filter(|&i| mask.contains(key(i))).collect();
        assert_eq!(held, [0, 2, 15]);
        assert_ne!(mask, KeyMask::EMPTY);
        let mut other = KeyMask::EMPTY;
        other.insert(key(1));
        other.insert(key(2));
        let both = mask.union(other);
        assert_eq!(
            both.iter().map(KeyId::index).collect::<Vec<_>>(),
            [0, 1, 2, 15]
        );
        assert_eq!(both, other.union(mask));
        assert_eq!(mask.union(KeyMask::EMPTY), mask);
    }

    /// Adding and subtracting go amount by amount, saturating at `u64::MAX` and at zero.
    #[test]
    fn quota_vectors_add_and_subtract_key_by_key_and_saturate() {
        let mut a = QuotaVec::ZERO;
        a[KeyId::CPU] = 3;
        a[KeyId::GPU] = u64::MAX - 1;
        let mut b = QuotaVec::ZERO;
        b[KeyId::CPU] = 5;
        b[KeyId::GPU] = 2;
        b[key(15)] = 7;
        let mut sum = a;
        sum.add(&b);
        assert_eq!(
            (sum[KeyId::CPU], sum[KeyId::GPU], sum[key(15)]),
            (8, u64::MAX, 7)
        );
        assert_eq!(sum[KeyId::MEMORY_MIB], 0);
        let mut diff = a;
        diff.sub(&b);
        assert_eq!((diff[KeyId::CPU], diff[KeyId::GPU]), (0, u64::MAX - 3));
        assert_eq!(diff[key(15)], 0);
        assert!(!diff.is_zero());
        diff[KeyId::GPU] = 0;
        assert!(diff.is_zero());
        assert_eq!(QuotaVec::default(), QuotaVec::ZERO);
        assert_eq!(QuotaVec::filled(4).as_slice(), [4; MAX_KEYS]);
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn max_keys() {
        assert_eq!(crate::quota::MAX_KEYS, 16);
    }

    #[test]
    fn key_id() {
        use crate::quota::KeyId;
        assert_eq!(KeyId::CPU.index(), 0);
        assert_eq!(KeyId::MEMORY_MIB.index(), 1);
        assert_eq!(KeyId::GPU.index(), 2);
    }

    #[test]
    fn index() {
        assert_eq!(crate::quota::KeyId::GPU.index(), 2);
    }

    #[test]
    fn from_index() {
        use crate::quota::KeyId;
        assert_eq!(KeyId::from_index(0), Some(KeyId::CPU));
        assert_eq!(KeyId::from_index(16), None);
    }

    #[test]
    fn quota_vec() {
        use crate::quota::{KeyId, QuotaVec};
        let mut a = QuotaVec::ZERO;
        a[KeyId::CPU] = 2000;
        let mut b = a;
        b.add(&a);
        assert_eq!(b[KeyId::CPU], 4000);
        b.sub(&a);
        assert_eq!(b, a);
        assert!(!a.is_zero());
    }

    #[test]
    fn filled() {
        use crate::quota::{KeyId, QuotaVec};
        assert_eq!(QuotaVec::filled(7)[KeyId::GPU], 7);
    }

    #[test]
    fn is_zero() {
        assert!(crate::quota::QuotaVec::ZERO.is_zero());
    }

    #[test]
    fn add() {
        use crate::quota::{KeyId, QuotaVec};
        let mut a = QuotaVec::ZERO;
        a[KeyId::GPU] = 1000;
        a.add(&a.clone());
        assert_eq!(a[KeyId::GPU], 2000);
    }

    #[test]
    fn sub() {
        use crate::quota::{KeyId, QuotaVec};
        let mut a = QuotaVec::ZERO;
        a[KeyId::CPU] = 1000;
        let mut b = QuotaVec::ZERO;
        b[KeyId::CPU] = 3000;
        a.sub(&b);
        assert!(a.is_zero());
    }

    #[test]
    fn as_slice() {
        assert_eq!(
            crate::quota::QuotaVec::ZERO.as_slice().len(),
            crate::quota::MAX_KEYS
        );
    }
}
