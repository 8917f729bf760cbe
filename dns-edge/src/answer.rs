//! Building a response: parse ([`crate::request`]), find the name in the
//! compiled [`Table`], run the per-query part of selection for pool-backed
//! sets, and encode with `domain`'s message builder into a reused buffer.
//!
//! Sans-IO: bytes in, bytes out. A [`Responder`] holds one worker's scratch
//! state (buffers, RNG, round-robin counters), so a query allocates nothing.

use std::net::IpAddr;

use domain::base::iana::{Class, OptRcode, Rcode, Rtype};
use domain::base::message_builder::{
    AdditionalBuilder, AnswerBuilder, MessageBuilder, PushError, StaticCompressor,
};
use domain::base::{Message, Ttl};
use gslb_shared::RecordType;
use gslb_shared::selection::{Query as SelectionQuery, Selector};
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::geo::GeoTable;
use crate::request::{self, Edns, MAX_WIRE_NAME, Parsed, Query};
use crate::table::{ChainEnd, Data, Entry, SetData, Table, WireName, address_data, family_of};

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

type Target<'b> = StaticCompressor<&'b mut Vec<u8>>;

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
    selector: Selector,
    rng: SmallRng,
    /// Round-robin position per dynamic set of the current table.
    rotation: Vec<u64>,
    rotation_version: u64,
    key: [u8; MAX_WIRE_NAME],
    offsets: [u8; 128],
}

impl Responder {
    /// A responder seeded with `seed` (weighted steering draws from it).
    pub fn new(seed: u64) -> Self {
        Self {
            selector: Selector::new(),
            rng: SmallRng::seed_from_u64(seed),
            rotation: Vec::new(),
            rotation_version: u64::MAX,
            key: [0; MAX_WIRE_NAME],
            offsets: [0; 128],
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
        if self.rotation_version != table.version {
            self.rotation.clear();
            self.rotation.resize(table.dynamic.len(), 0);
            self.rotation_version = table.version;
        }
        let summary = |rcode, truncated| Summary {
            qtype,
            rcode: rcode_bucket(rcode),
            truncated,
        };
        match self.encode(table, geo, q, client, limit, out, false) {
            Ok(rcode) => summary(rcode, false),
            // It did not fit: the question alone, with TC, tells the
            // resolver to retry over TCP.
            Err(_) => match self.encode(table, geo, q, client, limit, out, true) {
                Ok(rcode) => summary(rcode, true),
                Err(_) => error(q.message, Rcode::SERVFAIL, out),
            },
        }
    }

    /// Find the query name: exact, else the closest encloser's wildcard,
    /// else NXDOMAIN in the encloser's zone, else REFUSED.
    fn lookup<'t>(&mut self, table: &'t Table, q: &Query<'_>) -> Hit<'t> {
        let Ok(question) = q.message.sole_question() else {
            return Hit::Refused;
        };
        let Some((len, labels)) =
            request::canonical_key(question.qname(), &mut self.key, &mut self.offsets)
        else {
            return Hit::Refused;
        };
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
        let Ok(mut builder) = MessageBuilder::from_target(StaticCompressor::new(out));
        builder.set_push_limit(limit.saturating_sub(opt_room));
        let mut answer = builder.start_answer(q.message, Rcode::NOERROR)?;
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
            match self.lookup(table, q) {
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
        let qname = q
            .message
            .sole_question()
            .map_err(|_| PushError::ShortBuf)?
            .into_qname();
        if q.qtype == Rtype::CNAME {
            if let Some(link) = &entry.cname_set {
                answer.push((qname, Class::IN, link.ttl, &link.data))?;
                return Ok(None);
            }
            return Ok(Some(entry.zone));
        }
        let Some(chain) = &entry.cname else {
            return self.final_answer(table, geo, q, client, entry, None, answer, plan);
        };
        for link in chain.links.iter() {
            match &link.owner {
                None => answer.push((qname, Class::IN, link.ttl, &link.data))?,
                Some(owner) => answer.push((owner, Class::IN, link.ttl, &link.data))?,
            }
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
        let qname = q
            .message
            .sole_question()
            .map_err(|_| PushError::ShortBuf)?
            .into_qname();
        let zone = &table.zones[entry.zone as usize];
        let push = |answer: &mut AnswerBuilder<Target<'_>>, ttl: Ttl, data: &Data| match owner {
            None => answer.push((qname, Class::IN, ttl, data)),
            Some(o) => answer.push((o, Class::IN, ttl, data)),
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
                let dynamic = &table.dynamic[*slot as usize];
                let Some(family) = family_of(set.rtype) else {
                    return Ok(Some(entry.zone));
                };
                let (addr, source) = request::client_address(q.edns.as_ref(), client);
                let found = if dynamic.geo { geo.lookup(addr) } else { None };
                if dynamic.geo && source.is_some() {
                    plan.scope = found.map_or(source.unwrap_or(0), |m| m.prefix_len);
                }
                let rotation = &mut self.rotation[*slot as usize];
                *rotation = rotation.wrapping_add(1);
                let query = SelectionQuery {
                    family,
                    region: found.map(|m| m.region),
                    rotation: *rotation,
                };
                let (_, answers) =
                    self.selector
                        .select(&table.pools, &dynamic.record, query, &mut self.rng, None);
                if answers.is_empty() {
                    return Ok(Some(entry.zone));
                }
                for a in answers {
                    push(answer, set.ttl, &address_data(a.address))?;
                }
                Ok(None)
            }
        }
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
    let Ok(builder) = MessageBuilder::from_target(StaticCompressor::new(&mut *out));
    // A question that does not parse is left out rather than echoed.
    let mut answer = builder.start_error(message, rcode);
    answer.header_mut().set_rcode(rcode);
    answer.header_mut().set_ra(false);
    answer.finish();
    let qtype = message.sole_question().map_or(Rtype::NULL, |q| q.qtype());
    summary_of(qtype, OptRcode::from_rcode(rcode))
}

fn badvers(q: &Query<'_>, out: &mut Vec<u8>, qtype: usize) -> Summary {
    let built = (|| -> Result<(), PushError> {
        let Ok(builder) = MessageBuilder::from_target(StaticCompressor::new(&mut *out));
        let mut answer = builder.start_answer(q.message, Rcode::NOERROR)?;
        answer.header_mut().set_ra(false);
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
