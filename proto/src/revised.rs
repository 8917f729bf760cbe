//! The admin API's revision fields, common to every catalog object's
//! message: the revision a view shows, and an update's precondition and
//! field mask.

use crate::pb;

/// A catalog object's message with the admin API's revision fields.
pub trait Revised {
    /// The revision a view shows (0: not set).
    fn revision(&self) -> u64;
    /// Set the revision a view shows.
    fn set_revision(&mut self, revision: u64);
    /// Ask an update to change only `mask`'s fields (empty: the whole
    /// object), and only if the object is still at `expected` (0: any).
    fn guard(&mut self, expected: u64, mask: Vec<String>);
    /// Take an update's precondition (0: none) and field mask out.
    fn take_guard(&mut self) -> (u64, Vec<String>);
}

macro_rules! revised {
    ($($pb:ty),*) => {$(
        impl Revised for $pb {
            fn revision(&self) -> u64 {
                self.revision
            }
            fn set_revision(&mut self, revision: u64) {
                self.revision = revision;
            }
            fn guard(&mut self, expected: u64, mask: Vec<String>) {
                self.expected_revision = expected;
                self.update_mask = (!mask.is_empty()).then_some(prost_types::FieldMask { paths: mask });
            }
            fn take_guard(&mut self) -> (u64, Vec<String>) {
                let mask = self.update_mask.take().map(|m| m.paths).unwrap_or_default();
                (std::mem::take(&mut self.expected_revision), mask)
            }
        }
    )*};
}

revised!(
    pb::Zone,
    pb::RecordSet,
    pb::Pool,
    pb::Member,
    pb::Check,
    pb::TsigKey,
    pb::Notifier
);
