//! NOTIFY (RFC 1996): on each serial change of a zone, each of its targets
//! is told over UDP, from the DNS listener's address, signed with the
//! target's key when it names one. Unanswered, it is sent again after
//! 1, 2, 4 and 8 s ([`TRIES`] in all); a newer NOTIFY of the same zone to
//! the same target ends the older one's retries.
//!
//! The serial is the snapshot version, so it moves with every snapshot,
//! also when a zone's data did not change. A change of data is notified
//! at once; a serial that only moved is notified at most once per
//! [`COALESCE`] per target (the newest serial when the slot comes), so a
//! burst of snapshots costs a secondary one IXFR a second, not one each.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use domain::base::iana::{Class, Opcode, Rcode, Rtype};
use domain::base::message_builder::{MessageBuilder, StaticCompressor};
use domain::base::{Message, Question, Record, Ttl};
use domain::tsig::{ClientTransaction, Key};
use gslb_shared::wire::WireName;

use super::ZoneXfr;

/// Sends of one NOTIFY before giving up.
pub const TRIES: u32 = 5;
/// Wait for an answer to the first send; doubled after each.
pub const FIRST_WAIT: Duration = Duration::from_secs(1);
/// Least time between NOTIFYs of a serial that only moved, per zone and
/// target.
pub const COALESCE: Duration = Duration::from_secs(1);

type Slot = (WireName, SocketAddr);

/// Sends NOTIFY and keeps track of the newest per zone and target.
#[derive(Debug, Default)]
pub struct Notifier {
    /// The newest version notified per (zone, target).
    newest: Mutex<HashMap<Slot, u64>>,
    /// When each (zone, target) was last sent a NOTIFY.
    last_sent: Mutex<HashMap<Slot, tokio::time::Instant>>,
    /// Serial-only NOTIFYs waiting for their slot: the newest zone state.
    waiting: Mutex<HashMap<Slot, Arc<ZoneXfr>>>,
    /// NOTIFYs a target answered.
    pub answered: std::sync::atomic::AtomicU64,
    /// NOTIFYs no target answered after every try.
    pub unanswered: std::sync::atomic::AtomicU64,
}

impl Notifier {
    fn claim(&self, apex: &WireName, target: SocketAddr, version: u64) -> bool {
        let mut m = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        let newest = m.entry((apex.clone(), target)).or_insert(0);
        if *newest > version {
            return false;
        }
        *newest = version;
        true
    }

    fn superseded(&self, apex: &WireName, target: SocketAddr, version: u64) -> bool {
        let m = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        m.get(&(apex.clone(), target)).is_some_and(|&v| v > version)
    }

    /// Forget the zones `keep` says no to (deleted, or without transfer
    /// settings now), so the maps hold only zones that are served.
    pub fn forget(&self, keep: impl Fn(&WireName) -> bool) {
        (self.newest.lock().unwrap_or_else(|e| e.into_inner())).retain(|(apex, _), _| keep(apex));
        (self.last_sent.lock().unwrap_or_else(|e| e.into_inner()))
            .retain(|(apex, _), _| keep(apex));
    }

    fn sent(&self, slot: Slot) {
        let mut m = self.last_sent.lock().unwrap_or_else(|e| e.into_inner());
        m.insert(slot, tokio::time::Instant::now());
    }

    fn next_slot(&self, slot: &Slot) -> tokio::time::Instant {
        let m = self.last_sent.lock().unwrap_or_else(|e| e.into_inner());
        m.get(slot)
            .map_or_else(tokio::time::Instant::now, |t| *t + COALESCE)
    }
}

/// Notify the targets of `zone`, whose serial moved and nothing else: at
/// once when a target was not sent one in the last [`COALESCE`], else
/// when that time is up, with the newest serial by then.
pub fn send_coalesced(notifier: &Arc<Notifier>, zone: &Arc<ZoneXfr>, source: IpAddr) {
    for (target, key) in &zone.notify {
        let slot: Slot = (zone.apex.clone(), *target);
        {
            let mut waiting = notifier.waiting.lock().unwrap_or_else(|e| e.into_inner());
            if waiting.insert(slot.clone(), Arc::clone(zone)).is_some() {
                // Already waiting for its slot: it will send this state.
                continue;
            }
        }
        let notifier = Arc::clone(notifier);
        let key = key.clone();
        let target = *target;
        tokio::spawn(async move {
            tokio::time::sleep_until(notifier.next_slot(&slot)).await;
            let zone = {
                let mut waiting = notifier.waiting.lock().unwrap_or_else(|e| e.into_inner());
                waiting.remove(&slot)
            };
            if let Some(zone) = zone {
                notify_target(&notifier, &zone, target, key, source);
            }
        });
    }
}

/// The transaction that checks a signed answer.
pub type Transaction = ClientTransaction<Arc<Key>>;

/// The NOTIFY message for `zone` at its current version, signed with
/// `key` when given; and the transaction that checks a signed answer.
pub fn message(
    zone: &ZoneXfr,
    id: u16,
    key: Option<&Arc<Key>>,
) -> Result<(Vec<u8>, Option<Transaction>), String> {
    let mut builder = MessageBuilder::from_target(StaticCompressor::new(Vec::new()))
        .map_err(|e| e.to_string())?;
    let h = builder.header_mut();
    h.set_id(id);
    h.set_opcode(Opcode::NOTIFY);
    h.set_aa(true);
    let mut q = builder.question();
    q.push(Question::new(&zone.apex, Rtype::SOA, Class::IN))
        .map_err(|e| e.to_string())?;
    // RFC 1996 3.7: the new SOA may ride along, a hint of the serial.
    let mut answer = q.answer();
    let soa = zone.soa(zone.history.version).map_err(|e| e.to_string())?;
    answer
        .push(Record::new(
            &zone.apex,
            Class::IN,
            Ttl::from_secs(zone.zone.default_ttl),
            soa,
        ))
        .map_err(|e| e.to_string())?;
    let mut additional = answer.additional();
    let tx = match key {
        Some(key) => Some(
            ClientTransaction::request(
                Arc::clone(key),
                &mut additional,
                domain::rdata::tsig::Time48::now(),
            )
            .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    Ok((additional.finish().into_target(), tx))
}

/// Whether `reply` answers NOTIFY `id` (and, when signed, verifies).
pub fn is_answer(reply: &[u8], id: u16, tx: Option<&Transaction>) -> Result<bool, String> {
    let Ok(mut message) = Message::from_octets(reply.to_vec()) else {
        return Ok(false);
    };
    let h = message.header();
    if h.id() != id || !h.qr() || h.opcode() != Opcode::NOTIFY {
        return Ok(false);
    }
    if h.rcode() != Rcode::NOERROR {
        return Err(format!("answered {}", h.rcode()));
    }
    if let Some(tx) = tx {
        tx.answer(&mut message, domain::rdata::tsig::Time48::now())
            .map_err(|e| format!("answer's TSIG does not verify: {e}"))?;
    }
    Ok(true)
}

/// Notify every target of `zone`, from `source` (the DNS listener's
/// address), each in its own task.
pub fn send_all(notifier: &Arc<Notifier>, zone: &Arc<ZoneXfr>, source: IpAddr) {
    for (target, key) in &zone.notify {
        notify_target(notifier, zone, *target, key.clone(), source);
    }
}

/// Notify one target (with retries) unless a newer NOTIFY went to it.
fn notify_target(
    notifier: &Arc<Notifier>,
    zone: &Arc<ZoneXfr>,
    target: SocketAddr,
    key: Option<Arc<Key>>,
    source: IpAddr,
) {
    if !notifier.claim(&zone.apex, target, zone.history.version) {
        return;
    }
    notifier.sent((zone.apex.clone(), target));
    let notifier = Arc::clone(notifier);
    let zone = Arc::clone(zone);
    tokio::spawn(async move {
        let outcome = notify_one(&notifier, &zone, target, key.as_ref(), source).await;
        let apex = zone.zone.apex.as_str();
        let serial = zone.history.version as u32;
        match outcome {
            Ok(Some(tries)) => {
                notifier
                    .answered
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::info!(zone = apex, %target, serial, tries, "NOTIFY answered");
            }
            Ok(None) => {
                tracing::debug!(zone = apex, %target, serial, "NOTIFY superseded by a newer one");
            }
            Err(e) => {
                notifier
                    .unanswered
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::warn!(zone = apex, %target, serial, error = %e, "NOTIFY not answered");
            }
        }
    });
}

/// Send until answered: the tries it took, `None` when superseded.
async fn notify_one(
    notifier: &Notifier,
    zone: &ZoneXfr,
    target: SocketAddr,
    key: Option<&Arc<Key>>,
    source: IpAddr,
) -> Result<Option<u32>, String> {
    // Send from the listener's address (secondaries allow NOTIFY by the
    // primary's address); from the unspecified one of the target's family
    // when the listener's family differs.
    let bind = match (source, target) {
        (IpAddr::V4(_), SocketAddr::V4(_)) | (IpAddr::V6(_), SocketAddr::V6(_)) => source,
        (_, SocketAddr::V4(_)) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        (_, SocketAddr::V6(_)) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let socket = tokio::net::UdpSocket::bind(SocketAddr::new(bind, 0))
        .await
        .map_err(|e| format!("bind {bind}: {e}"))?;
    let version = zone.history.version;
    let mut wait = FIRST_WAIT;
    let mut last = String::from("no answer");
    for attempt in 1..=TRIES {
        if notifier.superseded(&zone.apex, target, version) {
            return Ok(None);
        }
        let id = rand::random::<u16>();
        let (bytes, tx) = message(zone, id, key)?;
        socket
            .send_to(&bytes, target)
            .await
            .map_err(|e| format!("send to {target}: {e}"))?;
        let deadline = tokio::time::Instant::now() + wait;
        let mut buf = vec![0u8; 4096];
        loop {
            let got = tokio::time::timeout_at(deadline, socket.recv_from(&mut buf)).await;
            let Ok(got) = got else { break };
            let (n, from) = got.map_err(|e| format!("receive: {e}"))?;
            if from != target {
                continue;
            }
            match is_answer(&buf[..n], id, tx.as_ref()) {
                Ok(true) => return Ok(Some(attempt)),
                Ok(false) => continue,
                Err(e) => {
                    // Refused or unverifiable: try again after the wait.
                    last = e;
                    tokio::time::sleep_until(deadline).await;
                    break;
                }
            }
        }
        wait *= 2;
    }
    Err(format!("{last} after {TRIES} tries"))
}
