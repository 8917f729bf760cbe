//! Step 8: order the chosen members and trim to `firstN`.
//!
//! Members are ordered by priority tier (lower first); inside a tier,
//! `roundrobin` rotates by the query counter and `weighted` draws a weighted
//! random order without replacement. Only as many positions as `firstN`
//! needs are drawn, so a 16-member pool with `firstN = 2` costs two draws.

use rand::RngExt;

use super::Candidate;
use crate::model::Steering;

/// Order `set` in place and truncate it to `first_n` (0 keeps all).
pub fn steer<R: rand::Rng + ?Sized>(
    set: &mut Vec<Candidate>,
    steering: Steering,
    first_n: u32,
    rotation: u64,
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
        match steering {
            Steering::RoundRobin => {
                let len = tier_slice.len();
                tier_slice.rotate_left((rotation % len as u64) as usize);
            }
            Steering::Weighted => weighted_prefix(tier_slice, want, rng),
        }
        start = end;
    }
    set.truncate(keep);
}

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
