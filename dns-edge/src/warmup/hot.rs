//! Hot query keys (seed 001): each UDP worker and TCP connection offers
//! one answered query in `every` (default: every one, as the seed) to a
//! bounded channel, copying its key into a fixed-size value (no lock, no
//! allocation on the query path; a key offered in the last second is not
//! offered again, and a full channel drops the sample); one thread moves
//! the samples into a bounded LRU. A key is what a reply depends on: the
//! canonical name, the type, EDNS presence and DO, and, for an answer
//! kept per geo branch, the branch; it carries the client's region and
//! subnet (the ECS source, or the resolver's /24 or /56), never a full
//! client address.

use std::hash::Hasher;
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lru::LruCache;

use crate::answer::request::KEY_ROOM;
use crate::answer::{Responder, Summary};
use crate::geo::GeoTable;

/// Samples in flight between the workers and the LRU at most.
const CHANNEL: usize = 4_096;
/// How often the samples are moved into the LRU: at 16,384 offers a
/// second, a worker queues about 800 between two moves.
const DRAIN_EVERY: Duration = Duration::from_millis(50);
/// Longest region name kept (the geo file's rule: 1 to 32 characters).
const REGION_ROOM: usize = 32;
/// Keys a sampler remembers having offered (direct-mapped by hash).
const RECENT: usize = 256;
/// How long a sampler skips a key it offered: it is in the LRU already,
/// and one offer a second keeps it recent.
const RECENT_FOR: Duration = Duration::from_secs(1);
/// Offers one sampler makes a second at most: every answered query is
/// looked at, but past this many distinct keys a second (a workload wider
/// than the LRU turns over) the rest wait for the next second, so the
/// thread that feeds the LRU never competes with the workers for a core.
pub const OFFERS_PER_SECOND: u32 = 16_384;
/// The client subnet kept for a resolver that sent no ECS option: its
/// /24 (IPv4) or /56 (IPv6), as RFC 7871 advises resolvers to send.
pub const RESOLVER_V4: u8 = 24;
/// See [`RESOLVER_V4`].
pub const RESOLVER_V6: u8 = 56;

/// A client subnet: the address with the host bits cleared, and the
/// prefix length.
pub type Subnet = (IpAddr, u8);

/// One sampled key, copied by value.
#[derive(Clone, Copy)]
struct Sample {
    key: [u8; KEY_ROOM],
    len: u16,
    branch: Option<u16>,
    region: [u8; REGION_ROOM],
    region_len: u8,
    subnet: Subnet,
}

/// A hot key: the responder's reply key (canonical wire name, type,
/// flags), the client's region and subnet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotKey {
    /// The reply key.
    pub key: Box<[u8]>,
    /// The client's region, when the geo file placed it.
    pub region: Option<Box<str>>,
    /// The client's subnet (ECS source, or the resolver's /24 or /56).
    pub subnet: Option<Subnet>,
}

/// What the LRU keeps of a key besides the key.
#[derive(Debug, Clone)]
struct Meta {
    region: Option<Box<str>>,
    subnet: Option<Subnet>,
    /// The LRU key ends with a geo branch's index (u16 BE).
    branched: bool,
}

/// Reply keys (followed by the geo branch, for answers kept per branch)
/// and their clients, least recently seen evicted.
type Lru = LruCache<Box<[u8]>, Meta>;

/// The LRU of recent keys, shared by the samplers and the endpoint.
#[derive(Debug)]
pub struct HotKeys {
    lru: Mutex<Lru>,
    tx: SyncSender<Sample>,
    every: u32,
}

impl std::fmt::Debug for Sample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sample").field("len", &self.len).finish()
    }
}

impl HotKeys {
    /// An LRU of `capacity` keys fed with one query in `every`; the thread
    /// that feeds it runs for the life of the process.
    pub fn start(capacity: NonZeroUsize, every: u32) -> std::io::Result<Arc<Self>> {
        let (tx, rx) = sync_channel(CHANNEL);
        let hot = Arc::new(Self {
            lru: Mutex::new(LruCache::new(capacity)),
            tx,
            every: every.max(1),
        });
        let weak = Arc::downgrade(&hot);
        std::thread::Builder::new()
            .name("hot-keys".into())
            .spawn(move || drain(&rx, &weak))?;
        Ok(hot)
    }

    /// A sampler for one worker (or one TCP connection).
    pub fn sampler(&self) -> Sampler {
        Sampler {
            every: self.every,
            seen: 0,
            tx: self.tx.clone(),
            recent: Box::new([0; RECENT]),
            since: Instant::now(),
            budget: OFFERS_PER_SECOND,
        }
    }

    /// One query in how many is sampled.
    pub fn every(&self) -> u32 {
        self.every
    }

    /// Keep `key` as just seen (a replayed key enters the LRU too): one
    /// entry per reply key, or per reply key and geo branch when its
    /// answer depends on the client's place.
    pub fn touch(
        &self,
        key: &[u8],
        branch: Option<u16>,
        region: Option<&str>,
        subnet: Option<Subnet>,
    ) {
        let meta = Meta {
            region: region.map(Into::into),
            subnet,
            branched: branch.is_some(),
        };
        let mut room = [0u8; KEY_ROOM + 2];
        let Some(at) = room.get_mut(..key.len()) else {
            return;
        };
        at.copy_from_slice(key);
        let mut len = key.len();
        if let Some(b) = branch {
            room[len..len + 2].copy_from_slice(&b.to_be_bytes());
            len += 2;
        }
        let lru_key = &room[..len];
        let mut lru = self.lru.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = lru.get_mut(lru_key) {
            *m = meta;
        } else {
            lru.put(lru_key.into(), meta);
        }
    }

    /// Every key, most recent first: copied under the lock, which the
    /// feeding thread alone contends for.
    pub fn keys(&self) -> Vec<HotKey> {
        let lru = self.lru.lock().unwrap_or_else(|p| p.into_inner());
        (lru.iter())
            .map(|(k, m)| HotKey {
                key: k[..k.len() - if m.branched { 2 } else { 0 }].into(),
                region: m.region.clone(),
                subnet: m.subnet,
            })
            .collect()
    }
}

/// Move samples into the LRU every [`DRAIN_EVERY`] until the keys are
/// dropped. Polled, never woken per sample: a wake-up per offer would be a
/// system call and a context switch on the worker's core for each.
fn drain(rx: &Receiver<Sample>, hot: &std::sync::Weak<HotKeys>) {
    loop {
        std::thread::sleep(DRAIN_EVERY);
        let Some(hot) = hot.upgrade() else { return };
        loop {
            match rx.try_recv() {
                Ok(s) => {
                    let region = std::str::from_utf8(&s.region[..usize::from(s.region_len)]).ok();
                    hot.touch(
                        &s.key[..usize::from(s.len)],
                        s.branch,
                        region.filter(|r| !r.is_empty()),
                        Some(s.subnet),
                    );
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
    }
}

/// `addr` with the bits past `prefix` cleared.
pub fn subnet(addr: IpAddr, prefix: u8) -> Subnet {
    match addr {
        IpAddr::V4(v4) => {
            let p = prefix.min(32);
            let mask = u32::MAX.checked_shl(32 - u32::from(p)).unwrap_or(0);
            (
                IpAddr::V4(std::net::Ipv4Addr::from(u32::from(v4) & mask)),
                p,
            )
        }
        IpAddr::V6(v6) => {
            let p = prefix.min(128);
            let mask = u128::MAX.checked_shl(128 - u32::from(p)).unwrap_or(0);
            (
                IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & mask)),
                p,
            )
        }
    }
}

/// The subnet a query is kept with: the ECS option's source, else the
/// resolver's /24 or /56.
pub fn client_subnet(addr: IpAddr, ecs_source: Option<u8>) -> Subnet {
    let prefix = ecs_source.unwrap_or(match addr {
        IpAddr::V4(_) => RESOLVER_V4,
        IpAddr::V6(_) => RESOLVER_V6,
    });
    subnet(addr, prefix)
}

/// One worker's sampler.
#[derive(Debug)]
pub struct Sampler {
    every: u32,
    seen: u32,
    tx: SyncSender<Sample>,
    /// Hashes of the keys offered since `since`.
    recent: Box<[u64; RECENT]>,
    since: Instant,
    /// Offers left until `since` is a second old.
    budget: u32,
}

impl Sampler {
    /// Count a query; true for the one in `every` to sample.
    pub fn due(&mut self) -> bool {
        self.seen = self.seen.wrapping_add(1);
        self.seen.is_multiple_of(self.every)
    }

    /// Sample the query `responder` just answered into `out` (at `now`;
    /// its client as the responder saw it) when it is due and answered
    /// with data: a flood of random names (NXDOMAIN, or a signed zone's
    /// NOERROR denial) must not push the real hot keys out.
    pub fn answered(
        &mut self,
        responder: &Responder,
        summary: &Summary,
        out: &[u8],
        geo: &GeoTable,
        now: Instant,
    ) {
        if !self.due()
            || summary.rcode != 0
            || summary.truncated
            || out.get(6..8).is_none_or(|ancount| ancount == [0, 0])
        {
            return;
        }
        let Some(key) = responder.last_key() else {
            return;
        };
        let branch = responder.last_branch();
        if !self.admit(key, branch, now) {
            return;
        }
        let Some((addr, ecs_source)) = responder.last_client() else {
            return;
        };
        let region = geo.lookup(addr).map(|m| m.region.as_str());
        self.send(key, branch, region, client_subnet(addr, ecs_source));
    }

    /// Offer a key (dropped when offered within the last second, past
    /// [`OFFERS_PER_SECOND`], when the channel is full, or when the key is
    /// too long): [`Self::answered`] without a responder, for tests.
    #[cfg(test)]
    fn offer(
        &mut self,
        key: &[u8],
        branch: Option<u16>,
        region: Option<&str>,
        subnet: Subnet,
        now: Instant,
    ) {
        if self.admit(key, branch, now) {
            self.send(key, branch, region, subnet);
        }
    }

    /// True when `key` (of `branch`) is to be offered at `now`: not
    /// offered by this sampler within the second, and within its budget.
    fn admit(&mut self, key: &[u8], branch: Option<u16>, now: Instant) -> bool {
        if now.saturating_duration_since(self.since) >= RECENT_FOR {
            self.recent.fill(0);
            self.since = now;
            self.budget = OFFERS_PER_SECOND;
        }
        if self.budget == 0 {
            return false;
        }
        let mut h = rustc_hash::FxHasher::default();
        h.write(key);
        h.write_u32(branch.map_or(u32::MAX, u32::from));
        let hash = h.finish().max(1);
        let slot = &mut self.recent[(hash % RECENT as u64) as usize];
        if *slot == hash {
            return false;
        }
        *slot = hash;
        self.budget -= 1;
        true
    }

    /// Hand a key to the feeding thread.
    fn send(&self, key: &[u8], branch: Option<u16>, region: Option<&str>, subnet: Subnet) {
        let region = region.unwrap_or("").as_bytes();
        if key.len() > KEY_ROOM || region.len() > REGION_ROOM {
            return;
        }
        let mut s = Sample {
            key: [0; KEY_ROOM],
            len: key.len() as u16,
            branch,
            region: [0; REGION_ROOM],
            region_len: region.len() as u8,
            subnet,
        };
        s.key[..key.len()].copy_from_slice(key);
        s.region[..region.len()].copy_from_slice(region);
        // A full channel means the feeding thread is behind: the sample is
        // one of many, and losing it costs nothing.
        let _ = self.tx.try_send(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_in_every_is_sampled_and_the_lru_keeps_the_most_recent() {
        let hot = HotKeys::start(NonZeroUsize::new(3).unwrap_or(NonZeroUsize::MIN), 4).unwrap();
        let mut s = hot.sampler();
        let due: Vec<bool> = (0..8).map(|_| s.due()).collect();
        assert_eq!(due, [false, false, false, true, false, false, false, true]);
        let net = subnet("192.0.2.77".parse().unwrap(), 24);
        let now = Instant::now();
        for k in [b"a", b"b", b"c", b"d"] {
            s.offer(k, None, Some("eu"), net, now);
        }
        wait(|| hot.keys().first().is_some_and(|k| &*k.key == b"d"));
        let keys = hot.keys();
        assert_eq!(keys.len(), 3, "bounded");
        assert_eq!(&*keys[0].key, b"d");
        assert_eq!(keys[0].region.as_deref(), Some("eu"));
        assert_eq!(keys[0].subnet, Some(("192.0.2.0".parse().unwrap(), 24)));
        hot.touch(b"x", None, None, None);
        assert_eq!(&*hot.keys()[0].key, b"x");
    }

    #[test]
    fn a_key_is_offered_once_a_second_and_kept_once_per_geo_branch() {
        let hot = HotKeys::start(NonZeroUsize::new(10).unwrap_or(NonZeroUsize::MIN), 1).unwrap();
        let mut s = hot.sampler();
        let net = subnet("2001:db8:1:2ab:3::1".parse().unwrap(), 56);
        assert_eq!(net, ("2001:db8:1:200::".parse().unwrap(), 56));
        let t0 = Instant::now();
        s.offer(b"k", Some(1), Some("eu"), net, t0);
        s.offer(b"k", Some(2), Some("us"), net, t0);
        wait(|| hot.keys().len() == 2);
        // Offered again within the second: skipped (the region is not
        // updated); after it, taken.
        s.offer(
            b"k",
            Some(1),
            Some("asia"),
            net,
            t0 + Duration::from_millis(500),
        );
        s.offer(b"z", None, None, net, t0 + Duration::from_millis(600));
        wait(|| hot.keys().len() == 3);
        let eu = |hot: &HotKeys| {
            (hot.keys().into_iter())
                .filter(|k| &*k.key == b"k")
                .filter_map(|k| k.region)
                .collect::<Vec<_>>()
        };
        assert_eq!(eu(&hot).len(), 2, "one key per branch, the branch stripped");
        assert!(!eu(&hot).iter().any(|r| &**r == "asia"));
        s.offer(
            b"k",
            Some(1),
            Some("asia"),
            net,
            t0 + Duration::from_millis(1_700),
        );
        wait(|| eu(&hot).iter().any(|r| &**r == "asia"));
        assert_eq!(hot.keys().len(), 3);
        assert_eq!(
            client_subnet("198.51.100.9".parse().unwrap(), None),
            ("198.51.100.0".parse().unwrap(), 24)
        );
        assert_eq!(
            client_subnet("198.51.100.9".parse().unwrap(), Some(20)),
            ("198.51.96.0".parse().unwrap(), 20)
        );
        assert_eq!(
            subnet("10.1.2.3".parse().unwrap(), 0).0,
            IpAddr::from([0, 0, 0, 0])
        );
    }

    /// Poll `done` for up to 5 s.
    pub(crate) fn wait(mut done: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "timed out");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}
