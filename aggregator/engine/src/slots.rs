//! Dense slots of engine state that a reader can copy in O(1) of the
//! entries: fixed-size chunks behind an `Arc`, each entry behind its own.
//!
//! A status read takes a copy of the chunk list (an `Arc` per chunk) and
//! never touches an entry; ingest that then changes an entry copies its
//! chunk (pointers only) and the entry, once, and only while a reader
//! still holds the old one. A general persistent vector (`imbl::Vector`)
//! was measured at 76% more per ingest cycle; this costs one indirection
//! and one more atomic per change (about 20% of the engine's own cycle,
//! which is memory-bound: see docs/benchmarks.md).

use std::sync::Arc;

/// Entries per chunk: a reader's copy costs one `Arc` per this many slots,
/// a write after it copies this many pointers.
const CHUNK: usize = 256;

/// Slots of `T`, some empty (see the module docs).
#[derive(Debug)]
pub(super) struct Slots<T> {
    /// Chunks of `CHUNK` slots (the last one filled up to `len`); arrays,
    /// not `Vec`s, so an entry is one pointer away from its chunk's `Arc`.
    chunks: Vec<Arc<Chunk<T>>>,
    len: usize,
}

type Chunk<T> = [Option<Arc<T>>; CHUNK];

impl<T> Clone for Slots<T> {
    fn clone(&self) -> Self {
        Self {
            chunks: self.chunks.clone(),
            len: self.len,
        }
    }
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> Slots<T> {
    /// Number of slots, empty ones included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The entry in `slot`, if the slot exists and is filled.
    #[inline]
    pub fn get(&self, slot: usize) -> Option<&T> {
        self.chunks.get(slot / CHUNK)?[slot % CHUNK].as_deref()
    }

    /// The entry in `slot` to change (copied first if a reader holds it).
    #[inline]
    pub fn get_mut(&mut self, slot: usize) -> Option<&mut T> {
        let chunk = self.chunks.get_mut(slot / CHUNK)?;
        // An empty slot is not worth copying a chunk for.
        chunk[slot % CHUNK].as_ref()?;
        Arc::make_mut(chunk)[slot % CHUNK]
            .as_mut()
            .map(Arc::make_mut)
    }

    /// Fill or empty an existing slot.
    pub fn set(&mut self, slot: usize, value: Option<T>) {
        assert!(slot < self.len, "slot {slot} of {}", self.len);
        Arc::make_mut(&mut self.chunks[slot / CHUNK])[slot % CHUNK] = value.map(Arc::new);
    }

    /// Add a slot holding `value`; its index.
    pub fn push(&mut self, value: T) -> usize {
        let slot = self.len;
        if slot.is_multiple_of(CHUNK) {
            self.chunks.push(Arc::new(std::array::from_fn(|_| None)));
        }
        let last = self.chunks.last_mut().expect("a chunk was just ensured");
        Arc::make_mut(last)[slot % CHUNK] = Some(Arc::new(value));
        self.len += 1;
        slot
    }

    /// The filled entries, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks
            .iter()
            .flat_map(|chunk| chunk.iter().flatten().map(|e| &**e))
    }

    /// Change every entry `pick` selects; chunks and entries it does not
    /// select are left shared.
    pub fn update_where(&mut self, pick: impl Fn(&T) -> bool, mut change: impl FnMut(&mut T)) {
        for chunk in &mut self.chunks {
            if !chunk.iter().flatten().any(|e| pick(e)) {
                continue;
            }
            for entry in Arc::make_mut(chunk).iter_mut().flatten() {
                if pick(entry) {
                    change(Arc::make_mut(entry));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Push(u32),
        Set(usize, Option<u32>),
        Add(usize, u32),
        Snapshot,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            any::<u32>().prop_map(Op::Push),
            (0..1_000usize, proptest::option::of(any::<u32>())).prop_map(|(s, v)| Op::Set(s, v)),
            (0..1_000usize, 1..100u32).prop_map(|(s, v)| Op::Add(s, v)),
            Just(Op::Snapshot),
        ]
    }

    proptest! {
        /// Slots behave as a plain `Vec<Option<u32>>`, and every copy taken
        /// keeps showing what it showed when taken, whatever changes after.
        #[test]
        fn slots_match_a_vector_and_copies_never_change(
            ops in proptest::collection::vec(op(), 0..800)
        ) {
            let mut slots = Slots::default();
            let mut model: Vec<Option<u32>> = Vec::new();
            let mut copies: Vec<(Slots<u32>, Vec<Option<u32>>)> = Vec::new();
            for op in ops {
                match op {
                    Op::Push(v) => {
                        prop_assert_eq!(slots.push(v), model.len());
                        model.push(Some(v));
                    }
                    Op::Set(s, v) if s < model.len() => {
                        slots.set(s, v);
                        model[s] = v;
                    }
                    Op::Add(s, v) => {
                        if let Some(e) = slots.get_mut(s) {
                            *e = e.wrapping_add(v);
                        }
                        if let Some(Some(e)) = model.get_mut(s) {
                            *e = e.wrapping_add(v);
                        }
                    }
                    Op::Set(..) => {}
                    Op::Snapshot => copies.push((slots.clone(), model.clone())),
                }
            }
            copies.push((slots, model));
            for (copy, model) in &copies {
                prop_assert_eq!(copy.len(), model.len());
                for (s, want) in model.iter().enumerate() {
                    prop_assert_eq!(copy.get(s), want.as_ref());
                }
                prop_assert_eq!(copy.get(model.len()), None);
                let filled: Vec<u32> = model.iter().flatten().copied().collect();
                prop_assert_eq!(copy.iter().copied().collect::<Vec<_>>(), filled);
            }
        }
    }

    #[test]
    fn update_where_changes_only_what_it_picks_and_leaves_copies_alone() {
        let mut slots = Slots::default();
        for v in 0..1_000u32 {
            slots.push(v);
        }
        let copy = slots.clone();
        slots.update_where(|v| v % 600 == 7, |v| *v += 1_000_000);
        assert_eq!(slots.get(7), Some(&1_000_007));
        assert_eq!(slots.get(607), Some(&1_000_607));
        assert_eq!(slots.get(8), Some(&8));
        assert_eq!(copy.get(7), Some(&7));
        // Chunks with nothing picked (256..512, 768..) stay shared with the copy.
        assert!(!Arc::ptr_eq(&slots.chunks[0], &copy.chunks[0]));
        assert!(Arc::ptr_eq(&slots.chunks[1], &copy.chunks[1]));
        assert!(Arc::ptr_eq(&slots.chunks[3], &copy.chunks[3]));
    }
}
