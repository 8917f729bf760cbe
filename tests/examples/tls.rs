//! What mutual TLS costs on the aggregator's gRPC listener
//! (scripts/bench-tls.sh), the same release binary run twice on loopback,
//! once `--insecure` (plain text) and once with mutual TLS, in the same run:
//! 1. a read admin call (`ListZones`, token checked) on one open connection,
//!    CALLS times (default 5,000): latency and calls per second;
//! 2. a new connection per call (TCP, the TLS 1.3 handshake with client
//!    certificate verification, the HTTP/2 preface, one call), CONNECTS
//!    times (default 500).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

use gslb_e2e::bench::{env, percentile};
use gslb_e2e::pki::{CertFiles, cert};
use gslb_e2e::{Aggregator, temp_dir};
use gslb_proto::link::Bearer;
use gslb_proto::pb;
use gslb_proto::pb::admin_service_client::AdminServiceClient;
use tonic::transport::{Channel, Endpoint};

async fn channel(agg: &Aggregator, who: Option<&CertFiles>) -> Channel {
    let mut endpoint = Endpoint::from_shared(agg.url()).unwrap().tcp_nodelay(true);
    if let Some(who) = who {
        let tls = gslb_proto::link::client_config(Some(&who.ca), Some((&who.cert, &who.key)));
        endpoint = endpoint.tls_config(tls.unwrap()).unwrap();
    }
    endpoint.connect().await.unwrap()
}

async fn list(channel: Channel, token: &str) {
    let mut c = AdminServiceClient::with_interceptor(channel, Bearer(token.to_owned()));
    c.list_zones(pb::ListRequest::default()).await.unwrap();
}

/// Microseconds of each of `n` calls on one connection.
async fn calls(agg: &Aggregator, who: Option<&CertFiles>, n: usize) -> (Vec<u64>, f64) {
    let ch = channel(agg, who).await;
    let mut lat = Vec::with_capacity(n);
    let start = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        list(ch.clone(), &agg.token).await;
        lat.push(t.elapsed().as_micros() as u64);
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    lat.sort_unstable();
    (lat, rate)
}

/// Microseconds of each of `n` connect-and-call rounds.
async fn connects(agg: &Aggregator, who: Option<&CertFiles>, n: usize) -> Vec<u64> {
    let mut lat = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        list(channel(agg, who).await, &agg.token).await;
        lat.push(t.elapsed().as_micros() as u64);
    }
    lat.sort_unstable();
    lat
}

fn print(mode: &str, what: &str, lat: &[u64], rate: Option<f64>) {
    let rate = rate.map_or_else(String::new, |r| format!("  {r:>8.0}/s"));
    println!(
        "{mode:<10} {what:<22} p50 {:>6} us  p99 {:>6} us  max {:>6} us{rate}",
        percentile(lat, 50.0),
        percentile(lat, 99.0),
        lat[lat.len() - 1]
    );
}

fn main() {
    let (n_calls, n_connects) = (env("CALLS", 5_000), env("CONNECTS", 500));
    let dir = temp_dir("bench-tls");
    let plain = Aggregator::start(&dir.join("plain"));
    let own = cert("aggregator", "bench-agg", &["127.0.0.1"]);
    let tls = Aggregator::start_tls(&dir.join("tls"), &own, &[]);
    let operator = cert("operator", "bench-operator", &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("{n_calls} calls on one connection, {n_connects} new connections; one client thread");
    for (mode, agg, who) in [("plain", &plain, None), ("mtls", &tls, Some(&operator))] {
        runtime.block_on(async {
            // Warm both up (first connection, page faults) before measuring.
            calls(agg, who, 200).await;
            let (lat, rate) = calls(agg, who, n_calls).await;
            print(mode, "call, open connection", &lat, Some(rate));
            let lat = connects(agg, who, n_connects).await;
            print(mode, "connect + call", &lat, None);
        });
    }
    drop((plain, tls));
    let _ = std::fs::remove_dir_all(&dir);
}
