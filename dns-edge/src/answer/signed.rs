//! DNSSEC records in answers (RFC 4035 3.1): when the query sets DO and
//! the zone is signed, each record set is followed by its RRSIGs, and a
//! negative answer proves itself with compact denial of existence
//! (RFC 9824): one NSEC at the name, made and signed online, that covers
//! nothing but the name itself (so the zone cannot be walked).

use domain::base::iana::{Class, Rtype};
use domain::base::message_builder::{PushError, RecordSectionBuilder};
use domain::base::{Name, Record, Ttl};
use domain::rdata::dnssec::RtypeBitmap;
use domain::rdata::{Nsec, ZoneRecordData};

use super::request::Query;
use super::{Responder, Target};
use crate::table::signing::{Sigs, ZoneSigner, next_name, rrset_key};
use crate::table::{Data, Delegation, Entry, SetData, Table, WireName};

/// NXNAME (RFC 9824 2): in a compact-denial NSEC's bitmap, says the name
/// does not exist.
const NXNAME: u16 = 128;

/// Why an answer is negative, and where its proof goes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Negative<'t> {
    /// Index into [`Table::zones`]: its SOA goes in the authority section.
    pub zone: u32,
    /// The name without the data: `None` for the query name.
    pub owner: Option<&'t WireName>,
    /// Its entry when the name exists (NODATA), `None` when it does not.
    pub entry: Option<&'t Entry>,
}

/// Push one record owned by `owner`, or by the query name (as sent).
pub(super) fn push_at<'b>(
    section: &mut impl RecordSectionBuilder<Target<'b>>,
    q: &Query<'_>,
    owner: Option<&WireName>,
    ttl: Ttl,
    data: &Data,
) -> Result<(), PushError> {
    // A `Record` by value: the tuple form would hand the compressor a
    // reference, which hides the flat name it recognises the query name by.
    match owner {
        Some(o) => section.push(Record::new(o, Class::IN, ttl, data)),
        None => section.push(Record::new(q.flat_qname.clone(), Class::IN, ttl, data)),
    }
}

impl Responder {
    /// The signer of zone `zone` when this answer carries DNSSEC records.
    pub(super) fn signer<'t>(&self, table: &'t Table, zone: u32) -> Option<&'t ZoneSigner> {
        if !self.dnssec_ok {
            return None;
        }
        table.zones.get(zone as usize)?.signer.as_deref()
    }

    /// Push the RRSIGs over the set just pushed (`data`, type `rtype`, at
    /// `owner` or the query name) when the answer is signed: `fixed` when
    /// the table holds them, else from the cache, else made now.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_sigs<'b>(
        &mut self,
        section: &mut impl RecordSectionBuilder<Target<'b>>,
        table: &Table,
        zone: u32,
        q: &Query<'_>,
        owner: Option<&WireName>,
        rtype: Rtype,
        ttl: Ttl,
        data: &[Data],
        fixed: Option<&Sigs>,
    ) -> Result<(), PushError> {
        let Some(signer) = self.signer(table, zone) else {
            return Ok(());
        };
        let sigs = match fixed {
            Some(s) => s.clone(),
            None => match self.made(table, signer, owner, rtype, ttl, data) {
                Some(s) => s,
                None => return Ok(()),
            },
        };
        self.signed = true;
        for rrsig in sigs.records.iter() {
            push_at(section, q, owner, ttl, rrsig)?;
        }
        Ok(())
    }

    /// The signatures of a set answered per query: cached, or made now and
    /// cached (a miss is signed inline).
    fn made(
        &mut self,
        table: &Table,
        signer: &ZoneSigner,
        owner: Option<&WireName>,
        rtype: Rtype,
        ttl: Ttl,
        data: &[Data],
    ) -> Option<Sigs> {
        let owner_bytes = match owner {
            Some(o) => o.as_slice(),
            None => &self.key[..self.key_len],
        };
        rrset_key(signer.id, owner_bytes, rtype, ttl, data, &mut self.sig_key);
        let now = (self.clock)();
        let cache = &table.signatures.cache;
        if let Some(s) = cache.get(&self.sig_key, now) {
            return Some(s);
        }
        let name = match owner {
            Some(o) => o.clone(),
            None => Name::from_octets(owner_bytes.to_vec()).ok()?,
        };
        let sigs = signer.sign(&name, rtype, ttl, data, now)?;
        cache.put(&self.sig_key, sigs.clone());
        Some(sigs)
    }

    /// The compact-denial proof of `negative` (its NSEC and RRSIGs), after
    /// the SOA and its RRSIGs, when its zone is signed and DO is set.
    pub(super) fn push_denial<'b>(
        &mut self,
        section: &mut impl RecordSectionBuilder<Target<'b>>,
        table: &Table,
        q: &Query<'_>,
        negative: &Negative<'_>,
    ) -> Result<(), PushError> {
        let zone = &table.zones[negative.zone as usize];
        if self.signer(table, negative.zone).is_none() {
            return Ok(());
        }
        self.push_sigs(
            section,
            table,
            negative.zone,
            q,
            Some(&zone.apex),
            Rtype::SOA,
            zone.negative_ttl,
            std::slice::from_ref(&zone.soa),
            // Signed with the SOA's own TTL, the upper bound of the
            // shorter one negative answers give it (RFC 4035 5.3.3).
            zone.soa_sigs.as_ref(),
        )?;
        let owner_bytes = match negative.owner {
            Some(o) => o.as_slice(),
            None => &self.key[..self.key_len],
        };
        let mut types = RtypeBitmap::<Vec<u8>>::builder();
        let mut add = |t: Rtype| {
            if t != q.qtype {
                // Into a Vec, which cannot run out of room.
                let _ = types.add(t);
            }
        };
        add(Rtype::RRSIG);
        add(Rtype::NSEC);
        match negative.entry {
            None => add(Rtype::from_int(NXNAME)),
            Some(entry) => {
                if entry.apex {
                    add(Rtype::SOA);
                    add(Rtype::NS);
                }
                if entry.cut.is_some() {
                    add(Rtype::NS);
                }
                if entry.cname_set.is_some() || entry.cname.is_some() {
                    add(Rtype::CNAME);
                }
                for set in entry.sets.iter() {
                    add(gslb_shared::wire::rtype(set.rtype));
                }
            }
        }
        let nsec = ZoneRecordData::Nsec(Nsec::new(next_name(owner_bytes), types.finalize()));
        push_at(section, q, negative.owner, zone.negative_ttl, &nsec)?;
        self.push_sigs(
            section,
            table,
            negative.zone,
            q,
            negative.owner,
            Rtype::NSEC,
            zone.negative_ttl,
            std::slice::from_ref(&nsec),
            None,
        )
    }

    /// After a referral's NS set from a signed zone: its DS set and their
    /// RRSIGs, or an NSEC proving there is none (an insecure delegation).
    pub(super) fn push_referral_proof<'b>(
        &mut self,
        section: &mut impl RecordSectionBuilder<Target<'b>>,
        table: &Table,
        q: &Query<'_>,
        cut: &Delegation,
    ) -> Result<(), PushError> {
        let entry = &table.entries[cut.entry as usize];
        if self.signer(table, entry.zone).is_none() {
            return Ok(());
        }
        let ds = entry
            .sets
            .iter()
            .find(|s| s.rtype == gslb_shared::RecordType::Ds);
        if let Some(set) = ds
            && let SetData::Static(records) = &set.data
        {
            for r in records.iter() {
                push_at(section, q, Some(&cut.owner), set.ttl, r)?;
            }
            return self.push_sigs(
                section,
                table,
                entry.zone,
                q,
                Some(&cut.owner),
                Rtype::DS,
                set.ttl,
                records,
                set.sigs.as_ref(),
            );
        }
        let zone = &table.zones[entry.zone as usize];
        let mut types = RtypeBitmap::<Vec<u8>>::builder();
        for t in [Rtype::NS, Rtype::RRSIG, Rtype::NSEC] {
            // Into a Vec, which cannot run out of room.
            let _ = types.add(t);
        }
        let nsec =
            ZoneRecordData::Nsec(Nsec::new(next_name(cut.owner.as_slice()), types.finalize()));
        push_at(section, q, Some(&cut.owner), zone.negative_ttl, &nsec)?;
        self.push_sigs(
            section,
            table,
            entry.zone,
            q,
            Some(&cut.owner),
            Rtype::NSEC,
            zone.negative_ttl,
            std::slice::from_ref(&nsec),
            None,
        )
    }
}
