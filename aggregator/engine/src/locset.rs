//! A fixed-size set of location slots (at most 256 locations), so that a
//! cycle's tally is two bit sets and closing a cycle is a few word operations.

/// Most locations the engine tracks.
pub const MAX_LOCATIONS: usize = 256;

/// A set of location slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct LocationSet([u64; MAX_LOCATIONS / 64]);

impl LocationSet {
    /// The empty set.
    pub const EMPTY: LocationSet = LocationSet([0; MAX_LOCATIONS / 64]);

    /// Add a slot.
    pub fn insert(&mut self, slot: usize) {
        self.0[slot / 64] |= 1 << (slot % 64);
    }

    /// Remove a slot.
    pub fn remove(&mut self, slot: usize) {
        self.0[slot / 64] &= !(1 << (slot % 64));
    }

    /// Membership.
    pub fn contains(&self, slot: usize) -> bool {
        self.0[slot / 64] & (1 << (slot % 64)) != 0
    }

    /// Number of slots in the set.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// Intersection.
    pub fn and(&self, other: &LocationSet) -> LocationSet {
        let mut out = *self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a &= b;
        }
        out
    }

    /// Difference `self \ other`.
    pub fn minus(&self, other: &LocationSet) -> LocationSet {
        let mut out = *self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a &= !b;
        }
        out
    }

    /// Union.
    pub fn or(&self, other: &LocationSet) -> LocationSet {
        let mut out = *self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        out
    }

    /// True when every slot of `other` is in `self`.
    pub fn is_superset(&self, other: &LocationSet) -> bool {
        self.0.iter().zip(other.0).all(|(a, b)| b & !a == 0)
    }

    /// Slots in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(word_index, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(word_index * 64 + bit)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut a = LocationSet::EMPTY;
        for s in [0, 63, 64, 200, 255] {
            a.insert(s);
        }
        assert_eq!(a.len(), 5);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![0, 63, 64, 200, 255]);
        let mut b = LocationSet::EMPTY;
        b.insert(64);
        b.insert(7);
        assert_eq!(a.and(&b).iter().collect::<Vec<_>>(), vec![64]);
        assert_eq!(b.minus(&a).iter().collect::<Vec<_>>(), vec![7]);
        assert!(a.or(&b).is_superset(&a) && !a.is_superset(&b));
        a.remove(255);
        assert!(!a.contains(255) && a.contains(200));
    }
}
