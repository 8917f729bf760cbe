//! Response rate limiting per client subnet, in the manner of Knot's
//! `mod-rrl`: a token bucket per subnet (IPv4 /24, IPv6 /56 by default);
//! a response without a token is dropped, except every `slip`-th one, which
//! is sent truncated so that a real client behind a spoofed flood can still
//! retry over TCP. Pure: the caller passes the time.

use std::net::IpAddr;
use std::sync::Mutex;

use rustc_hash::FxHashMap;

/// Rate limiting settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RrlConfig {
    /// Responses per second per subnet; 0 turns limiting off.
    pub rate: u32,
    /// Bucket size (responses allowed in a burst).
    pub burst: u32,
    /// Every `slip`-th limited response is sent truncated; 0 drops all.
    pub slip: u32,
    /// IPv4 subnet length a bucket covers.
    pub v4_prefix: u8,
    /// IPv6 subnet length a bucket covers.
    pub v6_prefix: u8,
}

impl Default for RrlConfig {
    fn default() -> Self {
        Self {
            rate: 0,
            burst: 0,
            slip: 2,
            v4_prefix: 24,
            v6_prefix: 56,
        }
    }
}

/// What to do with one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send it.
    Send,
    /// Send a truncated response instead (TC set, no records).
    Slip,
    /// Send nothing.
    Drop,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Tokens, in millionths.
    micro: u64,
    /// Last refill, nanoseconds of the caller's clock.
    at_ns: u64,
    /// Limited responses so far (for slip).
    limited: u64,
}

/// Most buckets per shard before idle ones are dropped.
const SHARD_CAP: usize = 16_384;
const SHARDS: usize = 32;

/// The limiter: buckets in shards so that workers rarely share a lock.
#[derive(Debug)]
pub struct Limiter {
    cfg: RrlConfig,
    shards: Box<[Mutex<FxHashMap<u128, Bucket>>]>,
    /// The origin of `check`'s clock, one for every worker of both paths.
    epoch: std::time::Instant,
}

impl Limiter {
    /// A limiter; `None` when the rate is 0 (off).
    pub fn new(cfg: RrlConfig) -> Option<Self> {
        (cfg.rate > 0).then(|| Self {
            cfg,
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            epoch: std::time::Instant::now(),
        })
    }

    /// `at` on this limiter's clock, in nanoseconds.
    pub fn clock(&self, at: std::time::Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// The bucket key of a client: its subnet, tagged with the family.
    fn key(&self, client: IpAddr) -> u128 {
        match client {
            IpAddr::V4(a) => {
                let len = u32::from(self.cfg.v4_prefix.min(32));
                let bits = u32::from(a).checked_shr(32 - len).unwrap_or(0);
                (1 << 64) | u128::from(bits)
            }
            IpAddr::V6(a) => {
                let len = u32::from(self.cfg.v6_prefix.min(128));
                let bits = u128::from(a).checked_shr(128 - len).unwrap_or(0);
                // Prefix lengths up to 64 fit below the family tag.
                (2 << 64) | (bits & u128::from(u64::MAX))
            }
        }
    }

    /// Decide on one response to `client` at `now_ns`.
    pub fn check(&self, client: IpAddr, now_ns: u64) -> Verdict {
        let key = self.key(client);
        let shard = &self.shards[(key as usize ^ (key >> 64) as usize) % SHARDS];
        let mut buckets = shard.lock().unwrap_or_else(|e| e.into_inner());
        let full = u64::from(self.cfg.burst.max(1)) * 1_000_000;
        if buckets.len() >= SHARD_CAP && !buckets.contains_key(&key) {
            // Drop buckets that have refilled: they hold no state worth keeping.
            let rate = u64::from(self.cfg.rate);
            buckets.retain(|_, b| {
                b.micro + now_ns.saturating_sub(b.at_ns).saturating_mul(rate) / 1_000 < full
            });
        }
        let b = buckets.entry(key).or_insert(Bucket {
            micro: full,
            at_ns: now_ns,
            limited: 0,
        });
        let elapsed = now_ns.saturating_sub(b.at_ns);
        // rate tokens per second = rate millionths per microsecond.
        let refill = elapsed.saturating_mul(u64::from(self.cfg.rate)) / 1_000;
        b.micro = b.micro.saturating_add(refill).min(full);
        b.at_ns = now_ns;
        if b.micro >= 1_000_000 {
            b.micro -= 1_000_000;
            return Verdict::Send;
        }
        b.limited += 1;
        if self.cfg.slip > 0 && b.limited.is_multiple_of(u64::from(self.cfg.slip)) {
            Verdict::Slip
        } else {
            Verdict::Drop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(rate: u32, burst: u32, slip: u32) -> Limiter {
        Limiter::new(RrlConfig {
            rate,
            burst,
            slip,
            ..RrlConfig::default()
        })
        .unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn off_at_rate_zero() {
        assert!(Limiter::new(RrlConfig::default()).is_none());
    }

    #[test]
    fn a_burst_is_allowed_then_every_slip_th_limited_response_is_truncated() {
        let l = limiter(10, 5, 2);
        let verdicts: Vec<_> = (0..9).map(|_| l.check(ip("192.0.2.1"), 0)).collect();
        use Verdict::*;
        assert_eq!(
            verdicts,
            [Send, Send, Send, Send, Send, Drop, Slip, Drop, Slip]
        );
    }

    #[test]
    fn tokens_refill_at_the_rate() {
        let l = limiter(10, 1, 0);
        assert_eq!(l.check(ip("192.0.2.1"), 0), Verdict::Send);
        assert_eq!(l.check(ip("192.0.2.1"), 50_000_000), Verdict::Drop);
        // 100 ms at 10/s is one token.
        assert_eq!(l.check(ip("192.0.2.1"), 150_000_000), Verdict::Send);
    }

    #[test]
    fn one_bucket_per_subnet() {
        let l = limiter(1, 1, 0);
        assert_eq!(l.check(ip("192.0.2.1"), 0), Verdict::Send);
        assert_eq!(l.check(ip("192.0.2.200"), 0), Verdict::Drop, "same /24");
        assert_eq!(l.check(ip("192.0.3.1"), 0), Verdict::Send, "other /24");
        assert_eq!(l.check(ip("2001:db8:0:1::1"), 0), Verdict::Send);
        assert_eq!(l.check(ip("2001:db8:0:1::2"), 0), Verdict::Drop, "same /56");
        assert_eq!(
            l.check(ip("2001:db8:0:100::1"), 0),
            Verdict::Send,
            "other /56"
        );
    }

    #[test]
    fn the_table_stays_bounded() {
        let l = limiter(1000, 1000, 0);
        for i in 0..(SHARD_CAP * SHARDS * 2) as u32 {
            l.check(
                IpAddr::from((i << 8).to_be_bytes()),
                u64::from(i) * 10_000_000,
            );
        }
        let total: usize = l.shards.iter().map(|s| s.lock().unwrap().len()).sum();
        assert!(total <= SHARD_CAP * SHARDS, "{total}");
    }
}
