//! Step 8: order the chosen members and trim to `firstN`.
//!
//! Members are ordered by priority tier (lower first); inside a tier,
//! `roundrobin` rotates by the query counter, `weighted` draws a weighted
//! random order without replacement, and `sticky` orders by weighted
//! rendezvous hashing of the client's subnet, so a subnet gets the same
//! members while the set is unchanged and only the clients of a member that
//! leaves move. Only as many positions as `firstN` needs are drawn, so a
//! 16-member pool with `firstN = 2` costs two draws.

use std::net::IpAddr;

use rand::RngExt;

use super::Candidate;
use crate::model::Steering;

/// The IPv4 prefix that makes a sticky client subnet.
pub const STICKY_V4_PREFIX: u8 = 24;
/// The IPv6 prefix that makes a sticky client subnet.
pub const STICKY_V6_PREFIX: u8 = 56;

/// A client subnet's key for sticky steering: the client address cut to
/// [`STICKY_V4_PREFIX`] or [`STICKY_V6_PREFIX`] (or to `source_prefix`, an
/// ECS source prefix, when shorter), hashed. The same on every edge and
/// across restarts. Returns the key and the prefix length used.
pub fn affinity(client: IpAddr, source_prefix: Option<u8>) -> (u64, u8) {
    match client {
        IpAddr::V4(v4) => {
            let prefix = source_prefix.map_or(STICKY_V4_PREFIX, |p| p.min(STICKY_V4_PREFIX));
            let bits = u32::from(v4) & mask32(prefix);
            (
                mix(u64::from(bits) ^ (u64::from(prefix) << 40) ^ (4 << 56)),
                prefix,
            )
        }
        IpAddr::V6(v6) => {
            let prefix = source_prefix.map_or(STICKY_V6_PREFIX, |p| p.min(STICKY_V6_PREFIX));
            let bits = u128::from(v6) & mask128(prefix);
            let high = (bits >> 64) as u64;
            let low = bits as u64;
            (
                mix(mix(high) ^ low ^ (u64::from(prefix) << 48) ^ (6 << 56)),
                prefix,
            )
        }
    }
}

fn mask32(prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix.min(32)))
    }
}

fn mask128(prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(prefix.min(128)))
    }
}

/// A fixed 64-bit finalizer (SplitMix64's): stable everywhere, so every
/// edge orders a subnet's members alike.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Weighted rendezvous score of a member for a subnet: `weight / -log(u)`
/// with `u` uniform in (0, 1) from the pair's hash. The highest wins; a
/// member's chance of being first is its share of the weights (the base of
/// the logarithm does not change the order).
fn score(affinity: u64, member: u64, weight: u32) -> f64 {
    let h = mix(affinity ^ mix(member));
    // 53 bits into (0, 1): never 0, so the logarithm is finite.
    let u = ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    f64::from(weight) / neg_log2(u)
}

/// `-log2(u)` for `u` in (0, 1): the exponent plus a degree-5 polynomial
/// for the mantissa's logarithm (within 3e-5: a bias far below the weights'
/// resolution), several times cheaper than `f64::ln`, which was most of a
/// sticky answer's cost. Never 0 or negative, so a score stays finite and
/// positive.
fn neg_log2(u: f64) -> f64 {
    const C: [f64; 5] = [
        1.441_825_496_467,
        -0.708_678_911_739,
        0.415_411_185_927,
        -0.194_408_322_825,
        0.045_878_950_116,
    ];
    let bits = u.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as f64 - 1023.0;
    let t = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000) - 1.0;
    let log2_mantissa = t * (C[0] + t * (C[1] + t * (C[2] + t * (C[3] + t * C[4]))));
    (-(exponent + log2_mantissa)).max(1e-12)
}

/// Order `set` in place and truncate it to `first_n` (0 keeps all).
/// `affinity` is the client subnet's key ([`affinity`]); sticky steering
/// without one (no client address) orders as `weighted`.
pub fn steer<R: rand::Rng + ?Sized>(
    set: &mut Vec<Candidate>,
    steering: Steering,
    first_n: u32,
    rotation: u64,
    affinity: Option<u64>,
    rng: &mut R,
) {
    let keep = if first_n == 0 {
        set.len()
    } else {
        set.len().min(first_n as usize)
    };
    let tiered = set.windows(2).any(|w| w[0].priority != w[1].priority);
    if tiered {
        set.sort_by_key(|c| c.priority);
    }
    let mut start = 0;
    while start < keep {
        let tier = set[start].priority;
        let end = if tiered {
            start
                + set[start..]
                    .iter()
                    .take_while(|c| c.priority == tier)
                    .count()
        } else {
            set.len()
        };
        let tier_slice = &mut set[start..end];
        let want = (keep - start).min(tier_slice.len());
        match (steering, affinity) {
            // Latency steering has already kept the fastest: it rotates them.
            (Steering::RoundRobin | Steering::Latency, _) => {
                let len = tier_slice.len();
                tier_slice.rotate_left((rotation % len as u64) as usize);
            }
            (Steering::Sticky, Some(key)) => sticky_prefix(tier_slice, want, key),
            (Steering::Weighted | Steering::Sticky, _) => weighted_prefix(tier_slice, want, rng),
        }
        start = end;
    }
    set.truncate(keep);
}

/// Put the `want` highest rendezvous scores first, highest first (ties,
/// vanishingly rare, go to the lower member id). Each member's score is
/// computed once (on the stack for tiers of up to [`SCORED`] members).
fn sticky_prefix(slice: &mut [Candidate], want: usize, key: u64) {
    let n = slice.len();
    let mut scores = [0f64; SCORED];
    let cached = n <= SCORED;
    if cached {
        for (s, c) in scores.iter_mut().zip(slice.iter()) {
            *s = score(key, c.id.0, c.weight);
        }
    }
    let score_at = |slice: &[Candidate], scores: &[f64; SCORED], i: usize| {
        if cached {
            scores[i]
        } else {
            score(key, slice[i].id.0, slice[i].weight)
        }
    };
    for pos in 0..want.min(n.saturating_sub(1)) {
        let mut best = pos;
        let mut best_score = score_at(slice, &scores, pos);
        for i in pos + 1..n {
            let s = score_at(slice, &scores, i);
            if s > best_score || (s == best_score && slice[i].id < slice[best].id) {
                best = i;
                best_score = s;
            }
        }
        slice.swap(pos, best);
        if cached {
            scores.swap(pos, best);
        }
    }
}

/// Tier size up to which sticky scores are kept on the stack.
const SCORED: usize = 64;

/// Put a weighted random draw without replacement into the first `want`
/// positions of `slice` (weights are > 0 by construction of candidates).
fn weighted_prefix<R: rand::Rng + ?Sized>(slice: &mut [Candidate], want: usize, rng: &mut R) {
    let mut total: u64 = slice.iter().map(|c| u64::from(c.weight)).sum();
    for pos in 0..want.min(slice.len().saturating_sub(1)) {
        if total == 0 {
            return;
        }
        let mut ticket = rng.random_range(0..total);
        let mut pick = pos;
        for (offset, c) in slice[pos..].iter().enumerate() {
            let w = u64::from(c.weight);
            if ticket < w {
                pick = pos + offset;
                break;
            }
            ticket -= w;
        }
        slice.swap(pos, pick);
        total -= u64::from(slice[pos].weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_logarithm_is_close_and_positive() {
        for i in 1..10_000u32 {
            let u = f64::from(i) / 10_000.0;
            let exact = -u.log2();
            assert!((neg_log2(u) - exact).abs() < 4e-5, "{u}");
            assert!(neg_log2(u) > 0.0);
        }
        assert!(neg_log2(1.0 - f64::EPSILON) > 0.0);
    }
}
