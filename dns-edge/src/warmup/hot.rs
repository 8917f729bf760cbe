//! Hot query keys (seed 001): each UDP worker offers one answered query in
//! `every` to a bounded channel, copying its key into a fixed-size value
//! (no lock, no allocation on the query path; a full channel drops the
//! sample); one thread moves the samples into a bounded LRU. A key is what
//! a reply depends on: the canonical name, the type, EDNS presence and
//! DO, and the client's region. Never the client's address.

use std::num::NonZeroUsize;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use lru::LruCache;

use crate::answer::request::KEY_ROOM;

/// Samples in flight between the workers and the LRU at most.
const CHANNEL: usize = 4_096;
/// Longest region name kept (the geo file's rule: 1 to 32 characters).
const REGION_ROOM: usize = 32;

/// One sampled key, copied by value.
#[derive(Clone, Copy)]
struct Sample {
    key: [u8; KEY_ROOM],
    len: u16,
    region: [u8; REGION_ROOM],
    region_len: u8,
}

/// A hot key: the responder's reply key (canonical wire name, type,
/// flags) and the client's region.
pub type Key = (Box<[u8]>, Option<Box<str>>);

/// Reply keys and their clients' regions, least recently seen evicted.
type Lru = LruCache<Box<[u8]>, Option<Box<str>>>;

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

    /// A sampler for one worker.
    pub fn sampler(&self) -> Sampler {
        Sampler {
            every: self.every,
            seen: 0,
            tx: self.tx.clone(),
        }
    }

    /// One query in how many is sampled.
    pub fn every(&self) -> u32 {
        self.every
    }

    /// Keep `key` as just seen (a replayed key enters the LRU too).
    pub fn touch(&self, key: &[u8], region: Option<&str>) {
        let mut lru = self.lru.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = lru.get_mut(key) {
            *r = region.map(Into::into);
        } else {
            lru.put(key.into(), region.map(Into::into));
        }
    }

    /// Every key, most recent first: copied under the lock, which the
    /// feeding thread alone contends for.
    pub fn keys(&self) -> Vec<Key> {
        let lru = self.lru.lock().unwrap_or_else(|p| p.into_inner());
        lru.iter().map(|(k, r)| (k.clone(), r.clone())).collect()
    }
}

/// Move samples into the LRU until the keys are dropped.
fn drain(rx: &Receiver<Sample>, hot: &std::sync::Weak<HotKeys>) {
    while let Ok(s) = rx.recv() {
        let Some(hot) = hot.upgrade() else { return };
        let region = std::str::from_utf8(&s.region[..usize::from(s.region_len)]).ok();
        hot.touch(
            &s.key[..usize::from(s.len)],
            region.filter(|r| !r.is_empty()),
        );
    }
}

/// One worker's sampler.
#[derive(Debug)]
pub struct Sampler {
    every: u32,
    seen: u32,
    tx: SyncSender<Sample>,
}

impl Sampler {
    /// Count a query; true for the one in `every` to sample.
    pub fn due(&mut self) -> bool {
        self.seen = self.seen.wrapping_add(1);
        self.seen.is_multiple_of(self.every)
    }

    /// Offer a key (dropped when the channel is full or the key too long).
    pub fn offer(&self, key: &[u8], region: Option<&str>) {
        let region = region.unwrap_or("").as_bytes();
        if key.len() > KEY_ROOM || region.len() > REGION_ROOM {
            return;
        }
        let mut s = Sample {
            key: [0; KEY_ROOM],
            len: key.len() as u16,
            region: [0; REGION_ROOM],
            region_len: region.len() as u8,
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
        for k in [b"a", b"b", b"c", b"d"] {
            s.offer(k, Some("eu"));
        }
        wait(|| hot.keys().first().is_some_and(|k| &*k.0 == b"d"));
        let keys = hot.keys();
        assert_eq!(keys.len(), 3, "bounded");
        assert_eq!(&*keys[0].0, b"d");
        assert_eq!(keys[0].1.as_deref(), Some("eu"));
        hot.touch(b"x", None);
        assert_eq!(&*hot.keys()[0].0, b"x");
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
