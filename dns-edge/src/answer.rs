//! Building a response: parse ([`crate::request`]), find the name in the
//! compiled [`Table`], run the per-query part of selection for pool-backed
//! sets, and encode with `domain`'s message builder into a reused buffer.
//!
//! Sans-IO: bytes in, bytes out. A [`Responder`] holds one worker's scratch
//! state (buffers, RNG, round-robin counters), so a query allocates nothing.

use std::net::IpAddr;

use domain::base::iana::{Class, Opcode, OptRcode, Rcode, Rtype};
use domain::base::message_builder::{
    AdditionalBuilder, AnswerBuilder, MessageBuilder, PushError, StaticCompressor,
};

use crate::compress::Compressor;
use crate::prebuilt::{self, Prebuilt, Records, Template};
use domain::base::{Message, Question, Record, Ttl};
use gslb_shared::RecordType;
use gslb_shared::selection::{Candidate, Outcome, steer};
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::geo::GeoTable;
use crate::request::{self, Edns, KEY_ROOM, Parsed, Query};
use crate::table::{ChainEnd, Data, Entry, SetData, Table, WireName, address_data};

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

/// What was answered, for metrics and rate limiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Query type bucket (see [`QTYPES`]).
    pub qtype: usize,
    /// Response code bucket (see [`RCODES`]).
    pub rcode: usize,
    /// TC was set.
    pub truncated: bool,
}

/// Query type buckets for metrics.
pub const QTYPES: [&str; 11] = [
    "A", "AAAA", "CNAME", "TXT", "MX", "SRV", "CAA", "NS", "SOA", "ANY", "other",
];
/// Response code buckets for metrics.
pub const RCODES: [&str; 7] = [
    "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "BADVERS",
];

fn qtype_bucket(t: Rtype) -> usize {
    match t {
        Rtype::A => 0,
        Rtype::AAAA => 1,
        Rtype::CNAME => 2,
        Rtype::TXT => 3,
        Rtype::MX => 4,
        Rtype::SRV => 5,
        Rtype::CAA => 6,
        Rtype::NS => 7,
        Rtype::SOA => 8,
        Rtype::ANY => 9,
        _ => 10,
    }
}

fn rcode_bucket(r: OptRcode) -> usize {
    match r {
        OptRcode::NOERROR => 0,
        OptRcode::FORMERR => 1,
        OptRcode::SERVFAIL => 2,
        OptRcode::NXDOMAIN => 3,
        OptRcode::NOTIMP => 4,
        OptRcode::BADVERS => 6,
        _ => 5,
    }
}

fn record_type(t: Rtype) -> Option<RecordType> {
    Some(match t {
        Rtype::A => RecordType::A,
        Rtype::AAAA => RecordType::Aaaa,
        Rtype::CNAME => RecordType::Cname,
        Rtype::TXT => RecordType::Txt,
        Rtype::MX => RecordType::Mx,
        Rtype::SRV => RecordType::Srv,
        Rtype::CAA => RecordType::Caa,
        Rtype::NS => RecordType::Ns,
        _ => return None,
    })
}

type Target<'b> = Compressor<'b>;

/// Where a lookup landed.
enum Hit<'t> {
    /// An existing name (or the wildcard that synthesises it).
    Entry(&'t Entry),
    /// The name does not exist in this zone.
    NxDomain(u32),
    /// No served zone contains it.
    Refused,
}

/// The decided content of an answer, before encoding.
struct Plan {
    rcode: Rcode,
    aa: bool,
    /// ECS scope prefix to echo (0: the answer does not depend on location).
    scope: u8,
}

/// One worker's reusable answering state.
#[derive(Debug)]
pub struct Responder {
    /// Scratch for steering a decision's members.
    chosen: Vec<Candidate>,
    rng: SmallRng,
    /// Round-robin position per dynamic set of the current table.
    rotation: Vec<u64>,
    /// The table version `rotation` and `prebuilt` belong to.
    version: u64,
    /// The canonical query name, then (for `prebuilt`) type and flags.
    key: [u8; KEY_ROOM],
    /// Length of the name in `key`, and its label count.
    key_len: usize,
    labels: usize,
    offsets: [u8; 128],
    /// Responses to (name, type, EDNS presence) for queries without a
    /// client subnet, as first encoded: see [`crate::prebuilt`].
    prebuilt: Prebuilt,
    /// Set while encoding when a pool-backed set was answered.
    dynamic_used: bool,
    /// Set while encoding when that set can be templated (no geo branch,
    /// members to steer).
    templatable: bool,
    /// While encoding a template: push every candidate, unsteered, and
    /// say where their records went.
    template_mode: bool,
    records: Option<Records>,
}

impl Responder {
    /// A responder seeded with `seed` (weighted steering draws from it).
    pub fn new(seed: u64) -> Self {
        Self {
            chosen: Vec::new(),
            rng: SmallRng::seed_from_u64(seed),
            rotation: Vec::new(),
            version: u64::MAX,
            key: [0; KEY_ROOM],
            key_len: 0,
            labels: 0,
            offsets: [0; 128],
            prebuilt: Prebuilt::default(),
            dynamic_used: false,
            templatable: false,
            template_mode: false,
            records: None,
        }
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
        if self.version != table.version {
            self.rotation.clear();
            self.rotation.resize(table.dynamic.len(), 0);
            self.prebuilt.clear();
            self.version = table.version;
        }
        match request::canonical_key(&q.qname, &mut self.key, &mut self.offsets) {
            Some((len, labels)) => (self.key_len, self.labels) = (len, labels),
            None => (self.key_len, self.labels) = (0, 0),
        }
        let reusable = self.key_len > 0 && q.edns.is_none_or(|e| e.subnet.is_none());
        let cache_key = if reusable {
            let n = self.key_len;
            self.key[n..n + 2].copy_from_slice(&q.qtype.to_int().to_be_bytes());
            self.key[n + 2] = u8::from(q.edns.is_some());
            Some(n + 3)
        } else {
            None
        };
        if let Some(k) = cache_key
            && let Some(summary) = self.replay(table, k, q, limit, out)
        {
            return summary;
        }
        let summary = |rcode, truncated| Summary {
            qtype,
            rcode: rcode_bucket(rcode),
            truncated,
        };
        self.dynamic_used = false;
        self.templatable = false;
        match self.encode(table, geo, q, client, limit, out, false) {
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

    /// Answer from the template under key length `k`, if there is one that
    /// fits `limit`; `None` and the caller encodes.
    fn replay(
        &mut self,
        table: &Table,
        k: usize,
        q: &Query<'_>,
        limit: usize,
        out: &mut Vec<u8>,
    ) -> Option<Summary> {
        let t = self.prebuilt.get(&self.key[..k])?;
        if t.bytes.len() > limit {
            return None;
        }
        let (id, rd) = (q.message.header().id(), q.message.header().rd());
        let qname = q.flat_qname.as_slice();
        let Some(r) = &t.records else {
            prebuilt::reuse(&t.bytes, id, rd, qname, out);
            return Some(t.summary);
        };
        let dynamic = table.dynamic.get(r.slot as usize)?;
        let decision = dynamic.decisions.get(r.decision)?;
        let rotation = &mut self.rotation[r.slot as usize];
        *rotation = rotation.wrapping_add(1);
        self.chosen.clear();
        self.chosen.extend_from_slice(&decision.chosen);
        let d = &dynamic.record;
        steer(
            &mut self.chosen,
            d.steering,
            d.first_n,
            *rotation,
            &mut self.rng,
        );
        prebuilt::splice(t, r, self.chosen.iter().map(|c| c.id), id, rd, qname, out)
            .then_some(t.summary)
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
        if !self.dynamic_used {
            let t = Template {
                bytes: out.to_vec(),
                summary,
                records: None,
            };
            self.prebuilt.insert(&self.key[..k], t);
            return;
        }
        if !self.templatable {
            return;
        }
        let mut bytes = Vec::with_capacity(out.len() * 2);
        self.template_mode = true;
        self.records = None;
        let built = self.encode(table, geo, q, client, TCP_MAX, &mut bytes, false);
        self.template_mode = false;
        if let (Ok(_), Some(records)) = (built, self.records.take()) {
            let t = Template {
                bytes,
                summary,
                records: Some(records),
            };
            self.prebuilt.insert(&self.key[..k], t);
        }
    }

    /// Find the query name: exact, else the closest encloser's wildcard,
    /// else NXDOMAIN in the encloser's zone, else REFUSED.
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
        let opt_room = q.edns.map_or(0, |e| opt_size(e.subnet.as_ref()));
        let flat = q.flat_qname.as_slice();
        let Ok(mut builder) = MessageBuilder::from_target(Compressor::new(out, flat));
        builder.set_push_limit(limit.saturating_sub(opt_room));
        let mut answer = start(builder, q)?;
        let mut plan = Plan {
            rcode: Rcode::NOERROR,
            aa: true,
            scope: 0,
        };
        let mut negative_zone = None;
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
                    negative_zone = Some(zone);
                }
                Hit::Entry(entry) if !truncate => {
                    negative_zone =
                        self.entry_answer(table, geo, q, client, entry, &mut answer, &mut plan)?;
                }
                Hit::Entry(_) => {}
            }
        }
        if truncate {
            answer.header_mut().set_tc(true);
            negative_zone = None;
        }
        let header = answer.header_mut();
        header.set_aa(plan.aa);
        header.set_rcode(plan.rcode);
        header.set_ra(false);
        let mut authority = answer.authority();
        if let Some(zone) = negative_zone {
            let z = &table.zones[zone as usize];
            authority.push((&z.apex, Class::IN, z.negative_ttl, &z.soa))?;
        }
        let mut additional = authority.additional();
        additional.set_push_limit(limit);
        if let Some(edns) = q.edns {
            push_opt(
                &mut additional,
                &edns,
                OptRcode::from_rcode(plan.rcode),
                plan.scope,
            )?;
        }
        additional.finish();
        Ok(OptRcode::from_rcode(plan.rcode))
    }

    /// Answer from an existing name. Returns the zone whose SOA goes in
    /// the authority section when the answer is negative.
    #[allow(clippy::too_many_arguments)]
    fn entry_answer(
        &mut self,
        table: &Table,
        geo: &GeoTable,
        q: &Query<'_>,
        client: IpAddr,
        entry: &Entry,
        answer: &mut AnswerBuilder<Target<'_>>,
        plan: &mut Plan,
    ) -> Result<Option<u32>, PushError> {
        if q.qtype == Rtype::CNAME {
            if let Some(link) = &entry.cname_set {
                push_rr(answer, q, None, link.ttl, &link.data)?;
                return Ok(None);
            }
            return Ok(Some(entry.zone));
        }
        let Some(chain) = &entry.cname else {
            return self.final_answer(table, geo, q, client, entry, None, answer, plan);
        };
        for link in chain.links.iter() {
            push_rr(answer, q, link.owner.as_ref(), link.ttl, &link.data)?;
        }
        match &chain.end {
            ChainEnd::Elsewhere => Ok(None),
            ChainEnd::NxDomain { zone } => {
                plan.rcode = Rcode::NXDOMAIN;
                Ok(Some(*zone))
            }
            ChainEnd::Entry { entry, owner } => {
                let entry = &table.entries[*entry as usize];
                self.final_answer(table, geo, q, client, entry, Some(owner), answer, plan)
            }
        }
    }

    /// The data of the final name of a chain (or the query name itself when
    /// `owner` is `None`).
    #[allow(clippy::too_many_arguments)]
    fn final_answer(
        &mut self,
        table: &Table,
        geo: &GeoTable,
        q: &Query<'_>,
        client: IpAddr,
        entry: &Entry,
        owner: Option<&WireName>,
        answer: &mut AnswerBuilder<Target<'_>>,
        plan: &mut Plan,
    ) -> Result<Option<u32>, PushError> {
        let zone = &table.zones[entry.zone as usize];
        let push = |answer: &mut AnswerBuilder<Target<'_>>, ttl: Ttl, data: &Data| {
            push_rr(answer, q, owner, ttl, data)
        };
        if entry.apex && q.qtype == Rtype::SOA {
            push(answer, zone.soa_ttl, &zone.soa)?;
            return Ok(None);
        }
        if entry.apex && q.qtype == Rtype::NS {
            for ns in zone.ns.iter() {
                push(answer, zone.soa_ttl, ns)?;
            }
            return Ok(None);
        }
        let set = match (q.qtype, record_type(q.qtype)) {
            // RFC 8482: one record set answers ANY (the SOA at an empty apex).
            (Rtype::ANY, _) => match entry.sets.first() {
                Some(set) => set,
                None if entry.apex => {
                    push(answer, zone.soa_ttl, &zone.soa)?;
                    return Ok(None);
                }
                None => return Ok(Some(entry.zone)),
            },
            (_, Some(t)) => match entry.sets.iter().find(|s| s.rtype == t) {
                Some(set) => set,
                None => return Ok(Some(entry.zone)),
            },
            (_, None) => return Ok(Some(entry.zone)),
        };
        match &set.data {
            SetData::Static(records) => {
                for data in records.iter() {
                    push(answer, set.ttl, data)?;
                }
                Ok(None)
            }
            SetData::Dynamic(slot) => {
                self.dynamic_used = true;
                let dynamic = &table.dynamic[*slot as usize];
                let (addr, source) = request::client_address(q.edns.as_ref(), client);
                let found = if dynamic.geo { geo.lookup(addr) } else { None };
                if dynamic.geo && source.is_some() {
                    plan.scope = found.map_or(source.unwrap_or(0), |m| m.prefix_len);
                }
                let index = dynamic.decision_index(found.map(|m| m.region));
                let Some(decision) = dynamic.decisions.get(index) else {
                    return Ok(Some(entry.zone));
                };
                let before = answer.counts().ancount();
                match decision.outcome {
                    Outcome::Pool { .. } | Outcome::FailOpen { .. } if self.template_mode => {
                        // Every candidate, in decision order, each record
                        // the same length (owners are pointers).
                        let at = answer.as_slice().len();
                        let mut len = None;
                        for c in decision.chosen.iter() {
                            let start = answer.as_slice().len();
                            push(answer, set.ttl, &address_data(c.address))?;
                            let bytes = &answer.as_slice()[start..];
                            // The owner must be a pointer into what precedes
                            // the member records, or reordering breaks it.
                            let target =
                                usize::from(u16::from_be_bytes([bytes[0], bytes[1]]) & 0x3fff);
                            if bytes[0] & 0xc0 != 0xc0
                                || target >= at
                                || len.is_some_and(|l| l != bytes.len())
                            {
                                return Ok(None);
                            }
                            let n = bytes.len();
                            len = Some(n);
                        }
                        if let Some(len) = len {
                            self.records = Some(Records {
                                slot: *slot,
                                decision: index,
                                at,
                                len,
                                members: decision.chosen.iter().map(|c| c.id).collect(),
                                before,
                            });
                        }
                    }
                    Outcome::Pool { .. } | Outcome::FailOpen { .. } => {
                        self.templatable = !dynamic.geo && !decision.chosen.is_empty();
                        let rotation = &mut self.rotation[*slot as usize];
                        *rotation = rotation.wrapping_add(1);
                        self.chosen.clear();
                        self.chosen.extend_from_slice(&decision.chosen);
                        let r = &dynamic.record;
                        steer(
                            &mut self.chosen,
                            r.steering,
                            r.first_n,
                            *rotation,
                            &mut self.rng,
                        );
                        for c in &self.chosen {
                            push(answer, set.ttl, &address_data(c.address))?;
                        }
                    }
                    Outcome::FailStatic { .. } => {
                        for a in decision.fixed.iter() {
                            push(answer, set.ttl, &address_data(*a))?;
                        }
                    }
                    Outcome::NoData => {}
                }
                if answer.counts().ancount() == before {
                    // Nothing to answer (fail closed, or no member of the family).
                    return Ok(Some(entry.zone));
                }
                Ok(None)
            }
        }
    }
}

/// Header (id, QR, opcode, RD) and the question, pushed once from what the
/// request parsed.
fn start<'b>(
    mut builder: MessageBuilder<Target<'b>>,
    q: &Query<'_>,
) -> Result<AnswerBuilder<Target<'b>>, PushError> {
    let h = builder.header_mut();
    h.set_id(q.message.header().id());
    h.set_qr(true);
    h.set_opcode(Opcode::QUERY);
    h.set_rd(q.message.header().rd());
    let mut question = builder.question();
    // A `Question` by value, for the same reason as in `push_rr`.
    question.push(Question::new(q.flat_qname.clone(), q.qtype, q.qclass))?;
    Ok(question.answer())
}

/// Push one record owned by `owner`, or by the query name (as sent).
fn push_rr(
    answer: &mut AnswerBuilder<Target<'_>>,
    q: &Query<'_>,
    owner: Option<&WireName>,
    ttl: Ttl,
    data: &Data,
) -> Result<(), PushError> {
    // A `Record` by value: the tuple form would hand the compressor a
    // reference, which hides the flat name it recognises the query name by.
    match owner {
        Some(o) => answer.push(Record::new(o, Class::IN, ttl, data)),
        None => answer.push(Record::new(q.flat_qname.clone(), Class::IN, ttl, data)),
    }
}

/// Bytes the OPT record takes: 11, plus the ECS option when echoed.
fn opt_size(subnet: Option<&domain::base::opt::ClientSubnet>) -> usize {
    11 + subnet.map_or(0, |s| {
        4 + 4 + usize::from(s.source_prefix_len().div_ceil(8))
    })
}

fn push_opt(
    additional: &mut AdditionalBuilder<Target<'_>>,
    edns: &Edns,
    rcode: OptRcode,
    scope: u8,
) -> Result<(), PushError> {
    additional.opt(|opt| {
        opt.set_udp_payload_size(EDNS_UDP_SIZE);
        opt.set_rcode(rcode);
        if let Some(s) = edns.subnet {
            opt.client_subnet(s.source_prefix_len(), scope, s.addr())?;
        }
        Ok(())
    })
}

/// A response with `rcode` and the question (when it parses), no records.
fn error(message: &Message<[u8]>, rcode: Rcode, out: &mut Vec<u8>) -> Summary {
    let Ok(mut builder) = MessageBuilder::from_target(StaticCompressor::new(&mut *out));
    let h = builder.header_mut();
    h.set_id(message.header().id());
    h.set_qr(true);
    h.set_opcode(message.header().opcode());
    h.set_rd(message.header().rd());
    h.set_rcode(rcode);
    // The question is echoed only when there is exactly one and it parses:
    // an error reply is never longer than the query.
    let question = message
        .sole_question()
        .ok()
        .filter(|q| !q.qname().is_compressed());
    let mut section = builder.question();
    if let Some(q) = &question
        && section.push(q).is_err()
    {
        section.rewind();
    }
    section.finish();
    let qtype = question.map_or(Rtype::NULL, |q| q.qtype());
    summary_of(qtype, OptRcode::from_rcode(rcode))
}

fn badvers(q: &Query<'_>, out: &mut Vec<u8>, qtype: usize) -> Summary {
    let built = (|| -> Result<(), PushError> {
        let flat = q.flat_qname.as_slice();
        let Ok(builder) = MessageBuilder::from_target(Compressor::new(&mut *out, flat));
        let answer = start(builder, q)?;
        let mut additional = answer.additional();
        let edns = Edns {
            subnet: None,
            ..q.edns.unwrap_or(Edns {
                udp_size: 512,
                version: 0,
                dnssec_ok: false,
                subnet: None,
            })
        };
        push_opt(&mut additional, &edns, OptRcode::BADVERS, 0)?;
        additional.finish();
        Ok(())
    })();
    if built.is_err() {
        return error(q.message, Rcode::SERVFAIL, out);
    }
    Summary {
        qtype,
        rcode: rcode_bucket(OptRcode::BADVERS),
        truncated: false,
    }
}

fn summary_of(qtype: Rtype, rcode: OptRcode) -> Summary {
    Summary {
        qtype: qtype_bucket(qtype),
        rcode: rcode_bucket(rcode),
        truncated: false,
    }
}

/// A truncated reply to `query` (TC set, the question only): what rate
/// limiting sends instead of an answer it withholds. False when the query
/// cannot be echoed.
pub fn truncated(query: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(message) = Message::from_slice(query) else {
        return false;
    };
    let Ok(builder) = MessageBuilder::from_target(StaticCompressor::new(&mut *out));
    let mut answer = builder.start_error(message, Rcode::NOERROR);
    answer.header_mut().set_tc(true);
    answer.header_mut().set_ra(false);
    answer.finish();
    true
}
