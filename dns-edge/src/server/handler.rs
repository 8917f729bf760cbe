//! The one request handler of UDP queries, fed by both paths: the kernel's
//! UDP sockets (`udp.rs`) and the AF_XDP sockets (`xdp.rs`). A datagram in,
//! the reply out (or nothing): answer, zone-transfer checks for an IXFR
//! over UDP, response rate limiting, counters, and hot-key sampling. So
//! both paths answer byte for byte alike.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use crate::answer::{self, Responder, Transport};
use crate::metrics::Counters;
use crate::rrl::{Limiter, Verdict};
use crate::state::Shared;
use crate::table::Table;
use crate::warmup::hot::Sampler;

/// One worker's handler: its responder, counters and sampler.
pub struct Handler<'a> {
    counters: Arc<Counters>,
    responder: Responder,
    /// Offers answered queries to the hot keys (seed 001).
    sampler: Option<Sampler>,
    shared: &'a Shared,
    rrl: Option<&'a Limiter>,
}

impl<'a> Handler<'a> {
    /// A handler with its own counters.
    pub fn new(shared: &'a Shared, rrl: Option<&'a Limiter>, mut responder: Responder) -> Self {
        responder.set_nsid(shared.nsid.get().cloned());
        Handler {
            counters: shared.metrics.worker(),
            responder,
            sampler: shared.warmup.hot.get().map(|h| h.sampler()),
            shared,
            rrl,
        }
    }

    /// The edge's shared state.
    pub fn shared(&self) -> &'a Shared {
        self.shared
    }

    /// This worker's counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Answer one datagram into `out`; false when nothing is to be sent.
    /// `path` names the path in the drain's query log.
    pub fn answer(
        &mut self,
        table: &Table,
        query: &[u8],
        peer: SocketAddr,
        path: &'static str,
        out: &mut Vec<u8>,
    ) -> bool {
        let started = Instant::now();
        let _busy = self.counters.begin();
        let client: IpAddr = peer.ip();
        self.shared.log_drain_query(query, peer, path);
        let Some(mut summary) =
            self.responder
                .respond(table, &self.shared.geo, query, client, Transport::Udp, out)
        else {
            self.counters.dropped();
            return false;
        };
        // The responder refuses transfers (and an IXFR, with its SOA in
        // the authority section, is FORMERR to it); an IXFR over UDP from
        // a secondary gets the transfer checks and, if it passes, our SOA.
        if matches!(
            summary.rcode,
            answer::FORMERR_BUCKET | answer::REFUSED_BUCKET
        ) && let Some((reply, verdict)) =
            crate::xfr::serve::respond_udp(&self.shared.transfers, query, client)
        {
            match verdict {
                crate::xfr::serve::Verdict::Transfer(kind) => {
                    self.shared.transfers.count_served(kind);
                    summary.rcode = 0;
                }
                _ => self.shared.transfers.count_refused(),
            }
            out.clear();
            out.extend_from_slice(&reply);
        }
        if let Some(limiter) = self.rrl {
            let now = limiter.clock(started);
            match limiter.check(client, now) {
                Verdict::Send => {}
                Verdict::Slip => {
                    self.counters.rrl_slipped();
                    if !answer::truncated(query, out) {
                        return false;
                    }
                }
                Verdict::Drop => {
                    self.counters.rrl_dropped();
                    return false;
                }
            }
        }
        self.counters.answered(&summary, started);
        if let Some(sampler) = &mut self.sampler {
            sampler.answered(&self.responder, &summary, out, &self.shared.geo, started);
        }
        true
    }
}
