//! Answer the hot keys' queries before DNS is bound: in each UDP worker's
//! responder (in parallel, one thread each), so each keeps the replies as
//! prebuilt ones and a first query costs a copy. Each query is asked from
//! its key's client subnet, so an answer kept per geo branch is warmed
//! for the branch its clients fall in.

use std::time::Instant;

use super::keys::Replayable;
use crate::answer::{Responder, Transport};
use crate::geo::GeoTable;
use crate::table::Table;

/// Answer `keys` in every responder until `deadline`: how many each
/// responder answered (the fewest, when one was cut short), and the geo
/// branch each answered key fell in (the first responder's).
pub fn replay(
    table: &Table,
    geo: &GeoTable,
    keys: &[Replayable],
    responders: &mut [Responder],
    deadline: Instant,
) -> (usize, Vec<Option<u16>>) {
    std::thread::scope(|s| {
        let handles: Vec<_> = (responders.iter_mut())
            .enumerate()
            .map(|(i, r)| {
                s.spawn(move || {
                    let mut out = Vec::with_capacity(1232);
                    let mut branches = Vec::new();
                    let mut done = 0;
                    for k in keys {
                        if done % 64 == 0 && Instant::now() >= deadline {
                            break;
                        }
                        r.respond(table, geo, &k.query, k.client, Transport::Udp, &mut out);
                        if i == 0 {
                            branches.push(r.last_branch());
                        }
                        done += 1;
                    }
                    (done, branches)
                })
            })
            .collect();
        let mut answered = None::<usize>;
        let mut first = Vec::new();
        for (i, h) in handles.into_iter().enumerate() {
            let (done, branches) = h.join().unwrap_or_default();
            answered = Some(answered.map_or(done, |a| a.min(done)));
            if i == 0 {
                first = branches;
            }
        }
        let answered = answered.unwrap_or(0);
        first.truncate(answered);
        (answered, first)
    })
}
