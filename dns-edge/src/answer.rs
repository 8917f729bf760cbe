//! Building a response: parse ([`request`]), find the name in the
//! compiled [`Table`], run the per-query part of selection for pool-backed
//! sets, and encode with `domain`'s message builder into a reused buffer.
//!
//! Sans-IO: bytes in, bytes out. A [`Responder`] holds one worker's scratch
//! state (buffers, RNG, round-robin counters), so a query allocates nothing.

pub mod compress;
pub mod prebuilt;
pub mod request;

use std::net::IpAddr;

use domain::base::iana::{Class, Opcode, OptRcode, Rcode, Rtype};
use domain::base::message_builder::{
    AdditionalBuilder, AnswerBuilder, MessageBuilder, PushError, StaticCompressor,
};
use domain::base::{Message, Question, Ttl};
use gslb_shared::RecordType;
use gslb_shared::selection::{Candidate, Outcome, steer};
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::geo::GeoTable;
use crate::table::{
    ChainEnd, Data, Delegation, Entry, Extra, SetData, Table, WireName, address_data,
};
use compress::Compressor;
use prebuilt::{GeoRoute, Prebuilt, Records, Template};
use request::{Edns, KEY_ROOM, Parsed, Query};

mod records;
mod replies;
mod signed;
mod summary;

use records::start;
pub use replies::truncated;
use replies::{badvers, error, opt_size, push_opt};
use signed::Negative;
pub use summary::{FORMERR_BUCKET, QTYPES, RCODES, REFUSED_BUCKET, Summary};
use summary::{qtype_bucket, rcode_bucket};

/// Our advertised EDNS UDP payload size (the DNS flag day 2020 value).
pub const EDNS_UDP_SIZE: u16 = 1232;
/// Largest message over TCP.
const TCP_MAX: usize = 65_535;

/// How the query arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// UDP: answers are limited to the client's payload size.
    Udp,
    /// TCP: answers up to 64 KiB.
    Tcp,
}

type Target<'b> = Compressor<'b>;

/// The geo branch (decision index) of `route`'s set that answers `client`,
/// found as encoding finds it.
fn branch_of(table: &Table, geo: &GeoTable, client: IpAddr, route: GeoRoute) -> Option<u16> {
    let dynamic = table.dynamic.get(route.slot as usize)?;
    let region = if route.region {
        geo.lookup(client).map(|m| m.region)
    } else {
        None
    };
    let place = if route.place {
        geo.place(client)
            .map_or(gslb_shared::Place::UNKNOWN, |l| l.place)
    } else {
        gslb_shared::Place::UNKNOWN
    };
    u16::try_from(dynamic.decision_index(region, &place)).ok()
}

/// `key` followed by `branch` (u16 BE), written into `room`.
fn branch_key<'r>(room: &'r mut [u8; KEY_ROOM + 2], key: &[u8], branch: u16) -> &'r [u8] {
    let k = key.len();
    room[..k].copy_from_slice(key);
    room[k..k + 2].copy_from_slice(&branch.to_be_bytes());
    &room[..k + 2]
}

/// The flags byte of a prebuilt key: EDNS present (bit 0), DO set (bit 1).
fn key_flags(edns: Option<Edns>) -> u8 {
    edns.map_or(0, |e| {
        1 | (u8::from(e.dnssec_ok) << 1) | (u8::from(e.nsid) << 2)
    })
}

/// Where a lookup landed.
enum Hit<'t> {
    /// An existing name (or the wildcard that synthesises it).
    Entry(&'t Entry),
    /// The name does not exist in this zone.
    NxDomain(u32),
    /// The name lies below a zone cut.
    Referral(&'t Delegation),
    /// No served zone contains it.
    Refused,
}

/// The decided content of an answer, before encoding.
struct Plan<'t> {
    rcode: Rcode,
    aa: bool,
    /// ECS scope prefix to echo (0: the answer does not depend on location).
    scope: u8,
    /// The delegation whose NS set goes in the authority section.
    referral: Option<&'t Delegation>,
    /// Addresses for the additional section.
    extra: &'t [Extra],
}

/// One worker's reusable answering state.
#[derive(Debug)]
pub struct Responder {
    /// Scratch for steering a decision's members.
    chosen: Vec<Candidate>,
    rng: SmallRng,
    /// Round-robin position per dynamic set of the current table.
    rotation: Vec<u64>,
    /// The table (its [`Table::serial`]) last answered from: not its
    /// version, which a deliberate reset can repeat.
    serial: u64,
    /// Its [`Table::lineage`]: `rotation` and `prebuilt` carry over to a
    /// table of the same lineage (a health-only refresh).
    lineage: u64,
    /// The canonical query name, then (for `prebuilt`) type and flags.
    key: [u8; KEY_ROOM],
    /// Length of the name in `key`, and its label count.
    key_len: usize,
    labels: usize,
    offsets: [u8; 128],
    /// Responses to (name, type, EDNS presence) for queries without a
    /// client subnet, as first encoded: see [`prebuilt`].
    prebuilt: Prebuilt,
    /// Set while encoding when a pool-backed set was answered.
    dynamic_used: bool,
    /// How many pool-backed sets the answer holds (a template holds one).
    dynamic_sets: u8,
    /// Set while encoding when the templatable set has geo branches: its
    /// route and the index of the branch answered.
    geo_route: Option<(GeoRoute, u16)>,
    /// Scratch: a reply key followed by a geo branch's index.
    branch_key: [u8; KEY_ROOM + 2],
    /// Set while encoding when the zone's SOA was pushed: the answer
    /// holds the table's version.
    versioned: bool,
    /// Set while encoding when that set can be templated (no geo branch,
    /// members to steer).
    templatable: bool,
    /// While encoding a template: push every candidate, unsteered, and
    /// say where their records went.
    template_mode: bool,
    records: Option<Records>,
    /// Length of the reply key of the last query answered (0: it had
    /// none), for the hot-key sampler.
    last_key: usize,
    /// The geo branch the last query was answered from, when its answer
    /// is kept per branch: the sampler keeps one key per branch.
    last_branch: Option<u16>,
    /// The address that placed the last query (the ECS address, else the
    /// resolver's) and the ECS source prefix, if one was sent.
    last_client: Option<(IpAddr, Option<u8>)>,
    /// Set on a TCP connection while the edge drains: answers carry
    /// edns-tcp-keepalive 0 and are never kept or reused.
    closing: bool,
    /// The query set DO: answers from signed zones carry DNSSEC records.
    dnssec_ok: bool,
    /// Set while encoding when an RRSIG was pushed.
    signed: bool,
    /// Scratch for a record set's canonical form (the signature cache key).
    sig_key: Vec<u8>,
    /// Scratch for the records of a pool-backed set, to sign them.
    rrset: Vec<Data>,
    /// Seconds since the Unix epoch, for signatures made while answering.
    clock: fn() -> u64,
    /// The edge's NSID (RFC 5001), when configured.
    nsid: Option<Box<[u8]>>,
}

impl Responder {
    /// Mark the answers that follow as sent while draining (TCP): their
    /// OPT record tells the client to close the connection (RFC 7828).
    pub fn set_closing(&mut self, closing: bool) {
        self.closing = closing;
    }

    /// A responder seeded with `seed` (weighted steering draws from it).
    pub fn new(seed: u64) -> Self {
        Self {
            chosen: Vec::new(),
            rng: SmallRng::seed_from_u64(seed),
            rotation: Vec::new(),
            serial: u64::MAX,
            lineage: u64::MAX,
            key: [0; KEY_ROOM],
            key_len: 0,
            labels: 0,
            offsets: [0; 128],
            prebuilt: Prebuilt::default(),
            dynamic_used: false,
            dynamic_sets: 0,
            geo_route: None,
            branch_key: [0; KEY_ROOM + 2],
            versioned: false,
            templatable: false,
            template_mode: false,
            records: None,
            last_key: 0,
            last_branch: None,
            last_client: None,
            closing: false,
            dnssec_ok: false,
            signed: false,
            sig_key: Vec::new(),
            rrset: Vec::new(),
            clock: gslb_shared::clock::now_secs,
            nsid: None,
        }
    }

    /// Answer NSID queries with `nsid` (`None`: the option is never sent).
    pub fn set_nsid(&mut self, nsid: Option<Box<[u8]>>) {
        // Kept replies were built with the old one (a warmed responder
        // keeps its replies when it is the same).
        if self.nsid != nsid {
            self.prebuilt.clear();
            self.nsid = nsid;
        }
    }

    /// The NSID to send with a reply to a query with `edns`.
    fn nsid_for(&self, edns: &Edns) -> Option<&[u8]> {
        self.nsid.as_deref().filter(|_| edns.nsid)
    }

    /// The reply key of the last query answered (canonical name, type,
    /// flags), if it had one: what the hot-key sampler keeps.
    pub fn last_key(&self) -> Option<&[u8]> {
        (self.last_key > 0).then(|| &self.key[..self.last_key])
    }

    /// The geo branch (its decision index) the last answer came from,
    /// when the answer depends on the client's place.
    pub fn last_branch(&self) -> Option<u16> {
        self.last_branch
    }

    /// The address that placed the last query answered, and the ECS
    /// source prefix it came with, if any.
    pub fn last_client(&self) -> Option<(IpAddr, Option<u8>)> {
        self.last_client
    }

    /// Read time from `clock` (seconds since the Unix epoch) when signing
    /// while answering: tests run signatures at a time they choose.
    pub fn set_clock(&mut self, clock: fn() -> u64) {
        self.clock = clock;
    }

    /// Answer `query` from `client` into `out`. `None`: send nothing.
    pub fn respond(
        &mut self,
        table: &Table,
        geo: &GeoTable,
        query: &[u8],
        client: IpAddr,
        transport: Transport,
        out: &mut Vec<u8>,
    ) -> Option<Summary> {
        self.last_key = 0;
        self.last_branch = None;
        self.last_client = None;
        match request::parse(query) {
            Parsed::Drop => None,
            Parsed::Error { message, rcode } => Some(error(message, rcode, out)),
            Parsed::Query(q) => Some(self.answer(table, geo, &q, client, transport, out)),
        }
    }

    fn answer(
        &mut self,
        table: &Table,
        geo: &GeoTable,
        q: &Query<'_>,
        client: IpAddr,
        transport: Transport,
        out: &mut Vec<u8>,
    ) -> Summary {
        let qtype = qtype_bucket(q.qtype);
        let limit = match (transport, q.edns) {
            (Transport::Tcp, _) => TCP_MAX,
            (Transport::Udp, None) => 512,
            (Transport::Udp, Some(e)) => usize::from(e.udp_size.clamp(512, EDNS_UDP_SIZE)),
        };
        if let Some(e) = q.edns
            && e.version != 0
        {
            return badvers(q, out, qtype);
        }
        if self.serial != table.serial {
            // A refresh keeps the names and static data: what was built
            // for them stays, and `replay` finds what went stale.
            if self.lineage != table.lineage || self.rotation.len() != table.dynamic.len() {
                self.rotation.clear();
                self.rotation.resize(table.dynamic.len(), 0);
                self.prebuilt.clear();
                self.lineage = table.lineage;
            }
            self.serial = table.serial;
        }
        match request::canonical_key(&q.qname, &mut self.key, &mut self.offsets) {
            Some((len, labels)) => (self.key_len, self.labels) = (len, labels),
            None => (self.key_len, self.labels) = (0, 0),
        }
        // Only a class-IN query reads or fills the store: every other class
        // is refused, and a reply of one class must never answer another.
        // The key holds every other field the reply depends on (name, type,
        // EDNS presence, the DO bit it echoes); an ECS query is never kept
        // (its scope and echoed subnet are its own), and the size limit is
        // checked against each reuse.
        let keyed = q.qclass == Class::IN && self.key_len > 0;
        self.last_client = Some(request::client_address(q.edns.as_ref(), client));
        let reusable = keyed && !self.closing && q.edns.is_none_or(|e| e.subnet.is_none());
        if keyed {
            let n = self.key_len;
            self.key[n..n + 2].copy_from_slice(&q.qtype.to_int().to_be_bytes());
            self.key[n + 2] = key_flags(q.edns);
            // The sampler keeps an ECS query's key too (with its subnet).
            self.last_key = n + 3;
        }
        let cache_key = reusable.then_some(self.key_len + 3);
        if let Some(k) = cache_key
            && let Some(summary) = self.replay(table, geo, client, k, q, limit, out)
        {
            return summary;
        }
        let summary = |rcode, truncated| Summary {
            qtype,
            rcode: rcode_bucket(rcode),
            truncated,
            prebuilt: false,
        };
        self.dynamic_used = false;
        self.dynamic_sets = 0;
        self.geo_route = None;
        self.versioned = false;
        self.templatable = false;
        self.dnssec_ok = q.edns.is_some_and(|e| e.dnssec_ok);
        let encoded = self.encode(table, geo, q, client, limit, out, false);
        self.last_branch = self.geo_route.map(|(_, branch)| branch);
        match encoded {
            Ok(rcode) => {
                let s = summary(rcode, false);
                if let Some(k) = cache_key
                    && self.prebuilt.has_room()
                {
                    self.remember(table, geo, q, client, k, s, out);
                }
                s
            }
            // It did not fit: the question alone, with TC, tells the
            // resolver to retry over TCP.
            Err(_) => match self.encode(table, geo, q, client, limit, out, true) {
                Ok(rcode) => summary(rcode, true),
                Err(_) => error(q.message, Rcode::SERVFAIL, out),
            },
        }
    }

    /// Answer from the template under key length `k` (and, for an answer
    /// kept per geo branch, the branch `client` falls in), if there is one
    /// that fits `limit`; `None` and the caller encodes.
    #[allow(clippy::too_many_arguments)]
    fn replay(
        &mut self,
        table: &Table,
        geo: &GeoTable,
        client: IpAddr,
        k: usize,
        q: &Query<'_>,
        limit: usize,
        out: &mut Vec<u8>,
    ) -> Option<Summary> {
        let key: &[u8] = match self.prebuilt.route(&self.key[..k]) {
            None => &self.key[..k],
            Some(route) => {
                let branch = branch_of(table, geo, client, route)?;
                self.last_branch = Some(branch);
                branch_key(&mut self.branch_key, &self.key[..k], branch)
            }
        };
        let t = self.prebuilt.get(key)?;
        // Made before a refresh changed what it holds: the caller encodes
        // anew (and keeps that).
        let stale = t.version.is_some_and(|v| v != table.version)
            || t.records.as_ref().is_some_and(|r| {
                (table.dynamic.get(r.slot as usize)).is_none_or(|d| d.decided_in != r.decided_in)
            });
        if stale {
            self.prebuilt.remove(key);
            return None;
        }
        let (id, rd) = (q.message.header().id(), q.message.header().rd());
        let question = q.question_bytes()?;
        let Some(r) = &t.records else {
            if t.bytes.len() > limit {
                return None;
            }
            prebuilt::reuse(&t.bytes, id, rd, question, out);
            return Some(Summary {
                prebuilt: true,
                ..t.summary
            });
        };
        let dynamic = table.dynamic.get(r.slot as usize)?;
        let decision = dynamic.decisions.get(r.decision)?;
        let rotation = &mut self.rotation[r.slot as usize];
        *rotation = rotation.wrapping_add(1);
        self.chosen.clear();
        self.chosen.extend_from_slice(&decision.chosen);
        let d = &dynamic.record;
        // Sticky and latency sets are never templated: their members are
        // the client's.
        steer(
            &mut self.chosen,
            d.steering,
            d.first_n,
            *rotation,
            None,
            &mut self.rng,
        );
        // The template holds every candidate; the answer only the kept ones.
        let size = t.bytes.len() - (r.members.len() - self.chosen.len()) * r.len;
        if size > limit {
            return None;
        }
        prebuilt::splice(
            t,
            r,
            self.chosen.iter().map(|c| c.id),
            id,
            rd,
            question,
            out,
        )
        .then_some(Summary {
            prebuilt: true,
            ..t.summary
        })
    }

    /// Keep what was just answered in `out` for the next query of the key:
    /// as is when it used no pool, as a template of all candidates when it
    /// used one that can be templated.
    #[allow(clippy::too_many_arguments)]
    fn remember(
        &mut self,
        table: &Table,
        geo: &GeoTable,
        q: &Query<'_>,
        client: IpAddr,
        k: usize,
        summary: Summary,
        out: &[u8],
    ) {
        let version = self.versioned.then_some(table.version);
        if !self.dynamic_used {
            let t = Template {
                bytes: out.to_vec(),
                summary,
                version,
                records: None,
            };
            self.prebuilt.insert(&self.key[..k], t);
            return;
        }
        if !self.templatable {
            return;
        }
        let route = self.geo_route;
        let mut bytes = Vec::with_capacity(out.len() * 2);
        self.template_mode = true;
        self.records = None;
        let built = self.encode(table, geo, q, client, TCP_MAX, &mut bytes, false);
        self.template_mode = false;
        if let (Ok(_), Some(records)) = (built, self.records.take()) {
            let t = Template {
                bytes,
                summary,
                version,
                records: Some(records),
            };
            match route {
                None => self.prebuilt.insert(&self.key[..k], t),
                Some((route, branch)) => {
                    let key = &self.key[..k];
                    let branched = branch_key(&mut self.branch_key, key, branch);
                    self.prebuilt.insert_branch(key, route, branched, t);
                }
            }
        }
    }

    /// Find the query name: exact, else a referral when the closest
    /// encloser is a zone cut, else its wildcard, else NXDOMAIN in its
    /// zone, else REFUSED.
    fn lookup<'t>(&self, table: &'t Table) -> Hit<'t> {
        let (len, labels) = (self.key_len, self.labels);
        if len == 0 {
            return Hit::Refused;
        }
        if let Some(entry) = table.entry(&self.key[..len]) {
            return Hit::Entry(entry);
        }
        for i in 1..labels {
            let start = usize::from(self.offsets[i]);
            if let Some(encloser) = table.entry(&self.key[start..len]) {
                if let Some(cut) = &encloser.cut {
                    return Hit::Referral(cut);
                }
                return match encloser.wildcard {
                    Some(w) => Hit::Entry(&table.entries[w as usize]),
                    None => Hit::NxDomain(encloser.zone),
                };
            }
        }
        Hit::Refused
    }

    #[allow(clippy::too_many_arguments)]
    fn encode(
        &mut self,
        table: &Table,
        geo: &GeoTable,
        q: &Query<'_>,
        client: IpAddr,
        limit: usize,
        out: &mut Vec<u8>,
        truncate: bool,
    ) -> Result<OptRcode, PushError> {
        let opt_room = q.edns.map_or(0, |e| {
            opt_size(e.subnet.as_ref(), self.closing, self.nsid_for(&e))
        });
        let flat = q.flat_qname.as_slice();
        let Ok(mut builder) = MessageBuilder::from_target(Compressor::new(out, flat));
        builder.set_push_limit(limit.saturating_sub(opt_room));
        let mut answer = start(builder, q)?;
        let mut plan = Plan {
            rcode: Rcode::NOERROR,
            aa: true,
            scope: 0,
            referral: None,
            extra: &[],
        };
        self.signed = false;
        let mut negative: Option<Negative<'_>> = None;
        if q.qclass != Class::IN || matches!(q.qtype, Rtype::AXFR | Rtype::IXFR) {
            plan.rcode = Rcode::REFUSED;
            plan.aa = false;
        } else {
            match self.lookup(table) {
                Hit::Refused => {
                    plan.rcode = Rcode::REFUSED;
                    plan.aa = false;
                }
                Hit::NxDomain(zone) => {
                    plan.rcode = Rcode::NXDOMAIN;
                    negative = Some(Negative {
                        zone,
                        owner: None,
                        entry: None,
                    });
                }
                Hit::Referral(cut) => plan.referral = Some(cut),
                Hit::Entry(entry) if !truncate => {
                    negative =
                        self.entry_answer(table, geo, q, client, entry, &mut answer, &mut plan)?;
                }
                Hit::Entry(_) => {}
            }
        }
        // Compact denial (RFC 9824 3.2): a signed "no such name" is NOERROR
        // with an NSEC that says NXNAME (a truncated reply too, as its TCP
        // retry will).
        if plan.rcode == Rcode::NXDOMAIN
            && negative.is_some_and(|n| self.signer(table, n.zone).is_some())
        {
            plan.rcode = Rcode::NOERROR;
        }
        // A referral is not authoritative (RFC 1034 4.3.2), truncated or
        // not, unless the answer section holds our own data (a CNAME chain
        // that led below a cut).
        if plan.referral.is_some() && answer.counts().ancount() == 0 {
            plan.aa = false;
        }
        if truncate {
            answer.header_mut().set_tc(true);
            negative = None;
            plan.referral = None;
            plan.extra = &[];
        }
        let header = answer.header_mut();
        header.set_aa(plan.aa);
        header.set_rcode(plan.rcode);
        header.set_ra(false);
        let mut authority = answer.authority();
        if let Some(n) = &negative {
            let z = &table.zones[n.zone as usize];
            self.versioned = true;
            authority.push((&z.apex, Class::IN, z.negative_ttl, &z.soa))?;
            self.push_denial(&mut authority, table, q, n)?;
        }
        if let Some(cut) = plan.referral {
            for ns in cut.ns.iter() {
                authority.push((&cut.owner, Class::IN, cut.ttl, ns))?;
            }
            self.push_referral_proof(&mut authority, table, q, cut)?;
        }
        let mut additional = authority.additional();
        // In-domain glue must all fit, else the referral keeps what fits
        // and says TC (RFC 9471), as Knot does, and the resolver retries
        // over TCP; the addresses of other servers in the zone are a
        // courtesy. Each address that does not fit is skipped and the next
        // (perhaps a shorter A) is tried.
        if let Some(cut) = plan.referral {
            let (required, courtesy) = cut.glue.split_at(cut.required.min(cut.glue.len()));
            let mut short = false;
            for g in required {
                short |= additional
                    .push((&g.owner, Class::IN, g.ttl, &g.data))
                    .is_err();
            }
            for g in courtesy {
                let _ = additional.push((&g.owner, Class::IN, g.ttl, &g.data));
            }
            if short {
                additional.header_mut().set_tc(true);
            }
        }
        // Unsigned courtesy addresses would only fill a signed answer.
        let extra = if self.signed { &[][..] } else { plan.extra };
        for e in extra {
            let _ = additional.push((&e.owner, Class::IN, e.ttl, &e.data));
        }
        additional.set_push_limit(limit);
        if let Some(edns) = q.edns {
            push_opt(
                &mut additional,
                &edns,
                OptRcode::from_rcode(plan.rcode),
                plan.scope,
                self.closing,
                self.nsid_for(&edns),
            )?;
        }
        additional.finish();
        Ok(OptRcode::from_rcode(plan.rcode))
    }
}
