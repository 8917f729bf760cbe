//! The records of an answer from an existing name: the CNAME chain, then
//! the final name's data (SOA and NS at the apex, minimal ANY, static sets,
//! or a pool-backed set steered per query).

use super::signed::Negative;
use super::*;

/// The record type a query asks for: a named one, or the generic form of
/// any other a record set may have (none for SOA, OPT, DNSSEC, query and
/// meta types).
fn record_type(t: Rtype) -> Option<RecordType> {
    RecordType::from_code(t.to_int())
}

impl Responder {
    /// Answer from an existing name. Returns what a negative answer must
    /// prove (its zone's SOA goes in the authority section).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn entry_answer<'t>(
        &mut self,
        table: &'t Table,
        geo: &GeoTable,
        q: &Query<'_>,
        client: IpAddr,
        entry: &'t Entry,
        answer: &mut AnswerBuilder<Target<'_>>,
        plan: &mut Plan<'t>,
    ) -> Result<Option<Negative<'t>>, PushError> {
        if refer(entry, q, plan) {
            return Ok(None);
        }
        // A CNAME owner asked for its CNAME, or for ANY (which matches
        // the CNAME, so the chain is not followed: RFC 1034 4.3.2, and one
        // record set per RFC 8482), answers the CNAME alone.
        if let Some(link) = &entry.cname_set
            && matches!(q.qtype, Rtype::CNAME | Rtype::ANY)
        {
            self.push_link(answer, table, q, None, link)?;
            return Ok(None);
        }
        let Some(chain) = &entry.cname else {
            return self.final_answer(table, geo, q, client, entry, None, answer, plan);
        };
        for link in chain.links.iter() {
            self.push_link(answer, table, q, link.owner.as_ref(), link)?;
        }
        match &chain.end {
            ChainEnd::Elsewhere => Ok(None),
            ChainEnd::NxDomain { zone } => {
                plan.rcode = Rcode::NXDOMAIN;
                // The name that does not exist: the last hop's target.
                let owner = chain.links.last().and_then(|l| match &l.data {
                    domain::rdata::ZoneRecordData::Cname(c) => Some(c.cname()),
                    _ => None,
                });
                Ok(Some(Negative {
                    zone: *zone,
                    owner,
                    entry: None,
                }))
            }
            ChainEnd::Referral { entry } => {
                plan.referral = table.entries[*entry as usize].cut.as_deref();
                Ok(None)
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
    fn final_answer<'t>(
        &mut self,
        table: &'t Table,
        geo: &GeoTable,
        q: &Query<'_>,
        client: IpAddr,
        entry: &'t Entry,
        owner: Option<&'t WireName>,
        answer: &mut AnswerBuilder<Target<'_>>,
        plan: &mut Plan<'t>,
    ) -> Result<Option<Negative<'t>>, PushError> {
        if refer(entry, q, plan) {
            return Ok(None);
        }
        let zone = &table.zones[entry.zone as usize];
        let push = |answer: &mut AnswerBuilder<Target<'_>>, ttl: Ttl, data: &Data| {
            push_rr(answer, q, owner, ttl, data)
        };
        let nodata = Some(Negative {
            zone: entry.zone,
            owner,
            entry: Some(entry),
        });
        if entry.apex && q.qtype == Rtype::SOA {
            self.push_soa(answer, table, q, owner, entry.zone)?;
            return Ok(None);
        }
        if entry.apex && q.qtype == Rtype::NS {
            for ns in zone.ns.iter() {
                push(answer, zone.ns_ttl, ns)?;
            }
            let sigs = zone.ns_sigs.as_ref();
            self.push_sigs(
                answer,
                table,
                entry.zone,
                q,
                owner,
                Rtype::NS,
                zone.ns_ttl,
                &zone.ns,
                sigs,
            )?;
            plan.extra = &zone.ns_extra;
            return Ok(None);
        }
        let set = match (q.qtype, record_type(q.qtype)) {
            // A CNAME pool is its name's only set and answers every type.
            _ if entry
                .sets
                .first()
                .is_some_and(|s| s.rtype == RecordType::Cname) =>
            {
                &entry.sets[0]
            }
            // RFC 8482: one record set answers ANY (the SOA at an empty apex).
            (Rtype::ANY, _) => match entry.sets.first() {
                Some(set) => set,
                None if entry.apex => {
                    self.push_soa(answer, table, q, owner, entry.zone)?;
                    return Ok(None);
                }
                None => return Ok(nodata),
            },
            // The generic form covers the key sets a signed apex holds
            // (DNSKEY is not a type record sets may have).
            (t, named) => {
                let t = named.unwrap_or(RecordType::Generic(t.to_int()));
                match entry.sets.iter().find(|s| s.rtype == t) {
                    Some(set) => set,
                    None => return Ok(nodata),
                }
            }
        };
        let rtype = gslb_shared::wire::rtype(set.rtype);
        match &set.data {
            SetData::Static(records) => {
                for data in records.iter() {
                    push(answer, set.ttl, data)?;
                }
                let sigs = set.sigs.as_ref();
                self.push_sigs(
                    answer, table, entry.zone, q, owner, rtype, set.ttl, records, sigs,
                )?;
                plan.extra = &set.extra;
                Ok(None)
            }
            SetData::Dynamic(slot) => {
                self.dynamic_used = true;
                self.dynamic_sets = self.dynamic_sets.saturating_add(1);
                let dynamic = &table.dynamic[*slot as usize];
                let (addr, source) = request::client_address(q.edns.as_ref(), client);
                let found = if dynamic.geo_region {
                    geo.lookup(addr)
                } else {
                    None
                };
                // A MaxMind answer only for branches that match on one.
                let located = if dynamic.geo_place {
                    geo.place(addr)
                } else {
                    None
                };
                if let (true, Some(source)) = (dynamic.geo(), source) {
                    // Scoped to the narrower of the networks that decided
                    // (a region's prefix, the MaxMind network); a client
                    // the table does not place is its own subnet.
                    let region = match found {
                        Some(m) => m.prefix_len,
                        None if dynamic.geo_region => source,
                        None => 0,
                    };
                    let place = located.map_or(0, |l| l.prefix_len);
                    plan.scope = region.max(place);
                }
                let place = located.map_or(gslb_shared::Place::UNKNOWN, |l| l.place);
                // A sticky answer is the client subnet's own: keyed on it,
                // never templated, scoped to it for resolvers' caches.
                let sticky = dynamic.record.steering == gslb_shared::Steering::Sticky;
                // A latency set answers the client region's fastest members:
                // never templated either (a template holds one member list).
                let latency = dynamic.record.steering == gslb_shared::Steering::Latency;
                let region = found.map(|m| m.region);
                let affinity = sticky.then(|| {
                    let (key, subnet) = gslb_shared::selection::affinity(addr, source);
                    if source.is_some() {
                        plan.scope = plan.scope.max(subnet);
                    }
                    key
                });
                let index = dynamic.decision_index(region, &place);
                let Some(decision) = dynamic.decisions.get(index) else {
                    return Ok(nodata);
                };
                // An answer that depends on the client's place is kept per
                // branch (sticky and latency answers are the client's own).
                self.geo_route = match u16::try_from(index) {
                    Ok(branch) if dynamic.geo() && !sticky && !latency => Some((
                        GeoRoute {
                            slot: *slot,
                            region: dynamic.geo_region,
                            place: dynamic.geo_place,
                        },
                        branch,
                    )),
                    _ => None,
                };
                let before = answer.counts().ancount();
                // A signed set is signed as answered, never spliced from a
                // template (its RRSIG covers exactly the records sent).
                let signing = self.signer(table, entry.zone).is_some();
                self.rrset.clear();
                let push = |answer: &mut AnswerBuilder<Target<'_>>,
                            rrset: &mut Vec<Data>,
                            ttl: Ttl,
                            data: &Data| {
                    if signing {
                        rrset.push(data.clone());
                    }
                    push(answer, ttl, data)
                };
                let mut ttl_used = set.ttl;
                match decision.outcome {
                    Outcome::Pool { .. } | Outcome::FailOpen { .. }
                        if !decision.expanded.is_empty() =>
                    {
                        // A CNAME pool answers one CNAME: the first member
                        // steering picks (its target is left to resolvers).
                        // A flattened record answers each steered member's
                        // addresses, once each, up to firstN, never kept
                        // longer than what they were resolved from.
                        self.templatable = false;
                        let rotation = &mut self.rotation[*slot as usize];
                        *rotation = rotation.wrapping_add(1);
                        self.chosen.clear();
                        self.chosen.extend_from_slice(decision.steered(region));
                        let r = &dynamic.record;
                        let cname = set.rtype == RecordType::Cname;
                        let keep = if cname { 1 } else { r.first_n };
                        steer(
                            &mut self.chosen,
                            r.steering,
                            keep,
                            *rotation,
                            affinity,
                            &mut self.rng,
                        );
                        let ttl = decision
                            .ttl_cap
                            .map_or(set.ttl, |cap| set.ttl.min(Ttl::from_secs(cap)));
                        let keep = if keep == 0 { usize::MAX } else { keep as usize };
                        ttl_used = ttl;
                        // Addresses seen, so one shared by two members is
                        // answered once (a hash set: answers can be large).
                        let mut seen = rustc_hash::FxHashSet::default();
                        let mut pushed = 0;
                        for c in &self.chosen {
                            let Some(records) = (decision.positions.get(&c.id))
                                .and_then(|&i| decision.expanded.get(i as usize))
                            else {
                                continue;
                            };
                            for data in records.iter() {
                                let address = match data {
                                    domain::rdata::ZoneRecordData::A(a) => {
                                        Some(IpAddr::V4(a.addr()))
                                    }
                                    domain::rdata::ZoneRecordData::Aaaa(a) => {
                                        Some(IpAddr::V6(a.addr()))
                                    }
                                    _ => None,
                                };
                                if pushed < keep && address.is_none_or(|a| seen.insert(a)) {
                                    push(answer, &mut self.rrset, ttl, data)?;
                                    pushed += 1;
                                }
                            }
                        }
                    }
                    Outcome::Pool { .. } | Outcome::FailOpen { .. }
                        if self.template_mode && !signing && !sticky && !latency =>
                    {
                        // Every candidate, in decision order, each record
                        // the same length (owners are pointers).
                        let at = answer.as_slice().len();
                        let mut len = None;
                        for c in decision.chosen.iter() {
                            let Some(address) = c.address else {
                                return Ok(None);
                            };
                            let start = answer.as_slice().len();
                            push(answer, &mut self.rrset, set.ttl, &address_data(address))?;
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
                                decided_in: dynamic.decided_in,
                                decision: index,
                                at,
                                len,
                                members: decision.chosen.iter().map(|c| c.id).collect(),
                                before,
                            });
                        }
                    }
                    Outcome::Pool { .. } | Outcome::FailOpen { .. } => {
                        // One set per template; a geo set's only for a
                        // query without a client subnet (ECS answers carry
                        // their own scope).
                        self.templatable = self.dynamic_sets == 1
                            && (!dynamic.geo() || source.is_none())
                            && !sticky
                            && !latency
                            && !decision.chosen.is_empty()
                            && !signing;
                        let rotation = &mut self.rotation[*slot as usize];
                        *rotation = rotation.wrapping_add(1);
                        self.chosen.clear();
                        self.chosen.extend_from_slice(decision.steered(region));
                        let r = &dynamic.record;
                        steer(
                            &mut self.chosen,
                            r.steering,
                            r.first_n,
                            *rotation,
                            affinity,
                            &mut self.rng,
                        );
                        for address in self.chosen.iter().filter_map(|c| c.address) {
                            push(answer, &mut self.rrset, set.ttl, &address_data(address))?;
                        }
                    }
                    Outcome::FailStatic { .. } => {
                        for a in decision.fixed.iter() {
                            push(answer, &mut self.rrset, set.ttl, &address_data(*a))?;
                        }
                    }
                    Outcome::NoData => {}
                }
                if answer.counts().ancount() == before {
                    // Nothing to answer (fail closed, or no member of the family).
                    return Ok(nodata);
                }
                if signing {
                    let rrset = std::mem::take(&mut self.rrset);
                    let signed = self.push_sigs(
                        answer, table, entry.zone, q, owner, rtype, ttl_used, &rrset, None,
                    );
                    self.rrset = rrset;
                    signed?;
                }
                Ok(None)
            }
        }
    }
}

impl Responder {
    /// One CNAME hop at `owner` (or the query name), with its RRSIGs when
    /// signing.
    fn push_link(
        &mut self,
        answer: &mut AnswerBuilder<Target<'_>>,
        table: &Table,
        q: &Query<'_>,
        owner: Option<&WireName>,
        link: &crate::table::Link,
    ) -> Result<(), PushError> {
        push_rr(answer, q, owner, link.ttl, &link.data)?;
        let data = std::slice::from_ref(&link.data);
        let sigs = link.sigs.as_ref();
        self.push_sigs(
            answer,
            table,
            link.zone,
            q,
            owner,
            Rtype::CNAME,
            link.ttl,
            data,
            sigs,
        )
    }

    /// The zone's SOA as an answer, with its RRSIGs when signing.
    fn push_soa(
        &mut self,
        answer: &mut AnswerBuilder<Target<'_>>,
        table: &Table,
        q: &Query<'_>,
        owner: Option<&WireName>,
        zone: u32,
    ) -> Result<(), PushError> {
        let z = &table.zones[zone as usize];
        self.versioned = true;
        push_rr(answer, q, owner, z.soa_ttl, &z.soa)?;
        let soa = std::slice::from_ref(&z.soa);
        let sigs = z.soa_sigs.as_ref();
        self.push_sigs(
            answer,
            table,
            zone,
            q,
            owner,
            Rtype::SOA,
            z.soa_ttl,
            soa,
            sigs,
        )
    }
}

/// At a cut only the DS set is the parent's data: anything else is
/// referred to the child. True when `plan` now holds that referral.
fn refer<'t>(entry: &'t Entry, q: &Query<'_>, plan: &mut Plan<'t>) -> bool {
    match &entry.cut {
        Some(cut) if q.qtype != Rtype::DS => {
            plan.referral = Some(cut);
            true
        }
        _ => false,
    }
}

/// Header (id, QR, opcode, RD) and the question, pushed once from what the
/// request parsed.
pub(super) fn start<'b>(
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

/// Push one answer record owned by `owner`, or by the query name.
pub(super) fn push_rr(
    answer: &mut AnswerBuilder<Target<'_>>,
    q: &Query<'_>,
    owner: Option<&WireName>,
    ttl: Ttl,
    data: &Data,
) -> Result<(), PushError> {
    super::signed::push_at(answer, q, owner, ttl, data)
}
