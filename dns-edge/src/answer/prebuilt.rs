//! Prebuilt responses: the encoded answer to a class-IN (name, type, EDNS
//! presence, DO) kept by one worker, so the next such query costs a copy
//! instead of an encoding. A static answer is reused whole; only the id,
//! RD and the question are patched, and the question is always the
//! query's own bytes (name as sent, type, class), so a reply can never
//! carry another query's question. A pool-backed answer is kept as a template
//! holding one encoded record per candidate member, each owned by a pointer
//! to the question (so every record has the same length); per query the
//! members are steered and their records copied in that order, and ANCOUNT
//! set. Every byte copied was written by `domain`'s encoder; nothing here
//! composes DNS data.

use domain::base::{Header, HeaderCounts};
use gslb_shared::MemberId;
use rustc_hash::FxHashMap;

use super::Summary;

/// Most templates one worker keeps per table version.
const MAX: usize = 16_384;

/// Where the member records sit in a pool-backed template.
#[derive(Debug, Clone)]
pub struct Records {
    /// Index of the dynamic set in the table.
    pub slot: u32,
    /// The table that decided the set ([`crate::table::Dynamic::decided_in`]):
    /// once a refresh decides it anew, the template is stale.
    pub decided_in: u64,
    /// Which branch decision the records are of.
    pub decision: usize,
    /// Offset of the first member record.
    pub at: usize,
    /// Length of each member record.
    pub len: usize,
    /// Member of each record, in template order.
    pub members: Box<[MemberId]>,
    /// Answer records before the member records (a CNAME chain).
    pub before: u16,
}

/// One prebuilt response.
#[derive(Debug, Clone)]
pub struct Template {
    /// The encoded response.
    pub bytes: Vec<u8>,
    /// What it answers, for metrics.
    pub summary: Summary,
    /// The table version whose SOA it carries (a negative answer, an SOA
    /// query): stale at any other version.
    pub version: Option<u64>,
    /// For a pool-backed answer: where its member records are.
    pub records: Option<Records>,
}

/// Where a key's answer depends on the client's place: the dynamic set
/// whose geo branches decide it. Its templates are kept per branch, under
/// the key followed by the branch's decision index (u16 BE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeoRoute {
    /// Index of the dynamic set in the table.
    pub slot: u32,
    /// Its branches match on the geo file's regions.
    pub region: bool,
    /// Its branches match on MaxMind places.
    pub place: bool,
}

/// A worker's templates, for one table lineage ([`crate::table::Table::lineage`]).
#[derive(Debug, Default)]
pub struct Prebuilt {
    map: FxHashMap<Box<[u8]>, Template>,
    /// Keys whose templates are per geo branch.
    routes: FxHashMap<Box<[u8]>, GeoRoute>,
}

impl Prebuilt {
    /// Forget everything (a table of another lineage was installed).
    pub fn clear(&mut self) {
        self.map.clear();
        self.routes.clear();
    }

    /// The geo route of a key, when its templates are per branch.
    pub fn route(&self, key: &[u8]) -> Option<GeoRoute> {
        if self.routes.is_empty() {
            return None;
        }
        self.routes.get(key).copied()
    }

    /// Keep a branch's template (`branch_key`: `key` and the branch's
    /// index) and the route that finds it (ignored when full).
    pub fn insert_branch(
        &mut self,
        key: &[u8],
        route: GeoRoute,
        branch_key: &[u8],
        template: Template,
    ) {
        if self.has_room() {
            self.routes.insert(key.into(), route);
            self.map.insert(branch_key.into(), template);
        }
    }

    /// The template for a key.
    pub fn get(&self, key: &[u8]) -> Option<&Template> {
        self.map.get(key)
    }

    /// True when another template can be kept. When full, the templates
    /// already kept stay (until the next table): starting over would turn
    /// a working set larger than the store into constant re-encoding.
    pub fn has_room(&self) -> bool {
        self.map.len() < MAX
    }

    /// Forget one template (it went stale).
    pub fn remove(&mut self, key: &[u8]) {
        self.map.remove(key);
    }

    /// Keep a template (ignored when full).
    pub fn insert(&mut self, key: &[u8], template: Template) {
        if self.has_room() {
            self.map.insert(key.into(), template);
        }
    }
}

/// Copy `prebuilt` into `out` as the answer to a query with `id`, `rd` and
/// the question section `question` (the same name, maybe in another case;
/// answer owners point at the question, so they follow).
pub fn reuse(prebuilt: &[u8], id: u16, rd: bool, question: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(prebuilt);
    patch(out, id, rd, question);
}

/// Set the id and RD, and overwrite the question with the query's own
/// bytes. The key guarantees the same length (same canonical name, one
/// type and class); the check keeps that a local fact.
fn patch(out: &mut [u8], id: u16, rd: bool, question: &[u8]) {
    let h = Header::for_message_slice_mut(out);
    h.set_id(id);
    h.set_rd(rd);
    if let Some(q) = out.get_mut(12..12 + question.len()) {
        q.copy_from_slice(question);
    }
}

/// Build the answer from a pool-backed template: the records of `order`
/// (members, steered and trimmed), in that order. False when a member is
/// not in the template (the caller encodes instead).
pub fn splice(
    t: &Template,
    r: &Records,
    order: impl Iterator<Item = MemberId>,
    id: u16,
    rd: bool,
    question: &[u8],
    out: &mut Vec<u8>,
) -> bool {
    out.clear();
    out.extend_from_slice(&t.bytes[..r.at]);
    let mut n = 0u16;
    for member in order {
        let Some(i) = r.members.iter().position(|&m| m == member) else {
            return false;
        };
        let start = r.at + i * r.len;
        out.extend_from_slice(&t.bytes[start..start + r.len]);
        n += 1;
    }
    out.extend_from_slice(&t.bytes[r.at + r.members.len() * r.len..]);
    HeaderCounts::for_message_slice_mut(out).set_ancount(r.before + n);
    patch(out, id, rd, question);
    true
}
