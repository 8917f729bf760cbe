//! gslb-xdpgun: a DNS load generator on AF_XDP, for the XDP benchmark
//! (scripts/bench-xdp.sh) where Knot's `kxdpgun` cannot run: its XDP
//! program calls `bpf_xdp_adjust_meta`, which some kernels refuse to XDP
//! programs (6.18.44-fc here). It takes kxdpgun's flags that the shared
//! harness (../shared/bench/xdp-dns-bench.sh) passes and prints kxdpgun's
//! summary lines, so the harness's namespaces, pinning and CPU accounting
//! measure every server the same way with either generator.
//!
//!   xdpgun -t SECS -Q QPS -p PORT -i QUERIES -I IFACE -l LOCAL_IP -R DEST_MAC TARGET_IP
//!
//! Queries ("name TYPE" lines) are sent round-robin as prebuilt frames
//! from LOCAL_IP:53535 through an AF_XDP socket on IFACE's queue 0, at
//! most QPS a second; replies come back through the same socket (this
//! crate's XDP program, pointed at port 53535 on LOCAL_IP) and are counted
//! by response code. One thread; `-F` and `-b` are accepted and ignored
//! (the harness pins with taskset).
//!
//!   xdpgun --sink -I IFACE -l LOCAL_IP -p PORT
//!
//! is the other end for the benchmark's ceiling: it takes every datagram
//! to LOCAL_IP:PORT off IFACE through the same XDP program and AF_XDP
//! socket as the edge, answers the harness's readiness probes (anything
//! not from port 53535) with an empty NOERROR reply, and drops the load,
//! polling without sleeping as a loaded server does: the generator's rate
//! with the reply path empty.
#![allow(clippy::print_stdout)]

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::str::FromStr;
use std::time::{Duration, Instant};

use gslb_xdp::{Program, Socket, frame, ring};
use hickory_proto::op::{Message, Query};
use hickory_proto::rr::{Name, RecordType};

/// The source port of every query; the XDP program redirects replies to it.
const SOURCE_PORT: u16 = 53535;
/// How long replies are still counted after the last query.
const LINGER: Duration = Duration::from_millis(300);
const RCODES: [&str; 16] = [
    "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET",
    "NXRRSET", "NOTAUTH", "NOTZONE", "RCODE11", "RCODE12", "RCODE13", "RCODE14", "RCODE15",
];

struct Args {
    sink: bool,
    secs: u64,
    rate: u64,
    port: u16,
    queries: String,
    iface: String,
    local: IpAddr,
    dest_mac: [u8; 6],
    target: IpAddr,
}

fn mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<u8> = s
        .trim()
        .split(':')
        .map(|p| u8::from_str_radix(p, 16).map_err(|e| format!("MAC {s:?}: {e}")))
        .collect::<Result<_, _>>()?;
    parts
        .try_into()
        .map_err(|_| format!("MAC {s:?}: six bytes"))
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut sink, mut secs, mut rate, mut port) = (false, 10, u64::MAX, 53);
    let (mut queries, mut iface, mut local, mut dest_mac, mut target) =
        (None, None, None, None, None);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "-t" => secs = value()?.parse().map_err(|e| format!("-t: {e}"))?,
            "-Q" => rate = value()?.parse().map_err(|e| format!("-Q: {e}"))?,
            "-p" => port = value()?.parse().map_err(|e| format!("-p: {e}"))?,
            "-i" => queries = Some(value()?),
            "-I" => iface = Some(value()?),
            "-l" => local = Some(value()?.parse().map_err(|e| format!("-l: {e}"))?),
            "-R" => dest_mac = Some(mac(&value()?)?),
            "--sink" => sink = true,
            "-F" | "-b" => {
                value()?;
            }
            t if !t.starts_with('-') => {
                target = Some(t.parse().map_err(|e| format!("target: {e}"))?)
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if sink {
        return Ok(Args {
            sink,
            secs,
            rate,
            port,
            queries: String::new(),
            iface: iface.ok_or("-I IFACE is required")?,
            local: local.ok_or("-l LOCAL_IP is required")?,
            dest_mac: [0; 6],
            target: IpAddr::from([0, 0, 0, 0]),
        });
    }
    Ok(Args {
        sink,
        secs,
        rate,
        port,
        queries: queries.ok_or("-i QUERIES is required")?,
        iface: iface.ok_or("-I IFACE is required")?,
        local: local.ok_or("-l LOCAL_IP is required")?,
        dest_mac: dest_mac.ok_or("-R DEST_MAC is required")?,
        target: target.ok_or("the target address is required")?,
    })
}

/// One prebuilt frame per query line.
fn frames(a: &Args, src_mac: [u8; 6]) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read_to_string(&a.queries).map_err(|e| format!("{}: {e}", a.queries))?;
    let from = SocketAddr::new(a.local, SOURCE_PORT);
    let to = SocketAddr::new(a.target, a.port);
    let mut macs = [0u8; 12];
    macs[..6].copy_from_slice(&a.dest_mac);
    macs[6..].copy_from_slice(&src_mac);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut f = line.split_whitespace();
        let (Some(name), rtype) = (f.next(), f.next().unwrap_or("A")) else {
            continue;
        };
        let rtype = RecordType::from_str(rtype).map_err(|e| format!("line {}: {e}", i + 1))?;
        let name = Name::from_ascii(name).map_err(|e| format!("line {}: {e}", i + 1))?;
        let mut m = Message::query();
        m.add_query(Query::query(name, rtype));
        let mut payload = m.to_vec().map_err(|e| e.to_string())?;
        payload[..2].copy_from_slice(&(i as u16).to_be_bytes());
        let hl = frame::header_len(to);
        let mut buf = vec![0u8; hl + payload.len()];
        buf[hl..].copy_from_slice(&payload);
        let n = frame::write_headers(&mut buf, macs, from, to, payload.len())
            .ok_or("a query does not fit a frame")?;
        buf.truncate(n);
        out.push(buf);
    }
    if out.is_empty() {
        return Err(format!("{}: no queries", a.queries));
    }
    Ok(out)
}

fn run(a: &Args) -> Result<(), String> {
    let src_mac = mac(
        &std::fs::read_to_string(format!("/sys/class/net/{}/address", a.iface))
            .map_err(|e| format!("{}: {e}", a.iface))?,
    )?;
    let frames = frames(a, src_mac)?;
    let (mut program, mut socket) = bind(&a.iface, a.local, SOURCE_PORT)?;
    println!(
        "using interface {}, XDP threads 1, UDP, {} mode",
        a.iface,
        program.mode().as_str()
    );
    let (mut sent, mut replies) = (0u64, 0u64);
    let mut rcodes = [0u64; 16];
    let mut next = 0usize;
    let started = Instant::now();
    let end = started + Duration::from_secs(a.secs);
    let mut count = |buf: &mut [u8], len: usize| {
        if let Ok(q) = frame::parse(&buf[..len])
            && let Some(&flags) = q.payload(buf).get(3)
        {
            replies += 1;
            rcodes[usize::from(flags & 0x0f)] += 1;
        }
        None
    };
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        let due = (now - started).as_secs_f64() * a.rate as f64;
        let n = (due as u64).saturating_sub(sent).min(ring::BATCH as u64) as usize;
        if n > 0 {
            sent += socket
                .transmit(n, |buf| {
                    let f = &frames[next % frames.len()];
                    next += 1;
                    buf.get_mut(..f.len())?.copy_from_slice(f);
                    Some(f.len())
                })
                .map_err(|e| e.to_string())? as u64;
        }
        socket.serve(&mut count).map_err(|e| e.to_string())?;
    }
    let elapsed = started.elapsed();
    let linger = Instant::now() + LINGER;
    while Instant::now() < linger {
        if socket
            .serve(&mut count)
            .map_err(|e| e.to_string())?
            .received
            == 0
        {
            let _ = socket.wait(Duration::from_millis(10));
        }
    }
    program.detach();
    let secs = elapsed.as_secs_f64();
    println!("total queries: {sent} ({:.0} pps)", sent as f64 / secs);
    println!(
        "total replies: {replies} ({:.0} pps) ({:.0}%)",
        replies as f64 / secs,
        100.0 * replies as f64 / sent.max(1) as f64
    );
    for (i, n) in rcodes.iter().enumerate().filter(|(_, n)| **n > 0) {
        println!("responded {}: {n}", RCODES[i]);
    }
    println!("duration: {} s", a.secs);
    Ok(())
}

/// Our XDP program on `iface` for `addr`:`port`, and an AF_XDP socket on
/// its queue 0 receiving what it redirects.
fn bind(iface: &str, addr: IpAddr, port: u16) -> Result<(Program, Socket), String> {
    let mut program = Program::attach(iface, port, &[addr]).map_err(|e| e.to_string())?;
    let ifindex = gslb_xdp::program::if_index(iface).map_err(|e| e.to_string())?;
    let socket = Socket::open(ifindex, 0).map_err(|e| e.to_string())?;
    program
        .register(0, socket.fd())
        .map_err(|e| e.to_string())?;
    Ok((program, socket))
}

/// The benchmark ceiling's server: see the module's comment.
fn sink(a: &Args) -> Result<(), String> {
    // Kept to the end: dropping the program detaches it.
    let (_program, mut socket) = bind(&a.iface, a.local, a.port)?;
    eprintln!("xdpgun: sink on {} {}:{}", a.iface, a.local, a.port);
    loop {
        let served = socket
            .serve(|buf, len| {
                let q = frame::parse(&buf[..len]).ok()?;
                if q.peer.port() == SOURCE_PORT || q.payload_len < 12 {
                    return None;
                }
                // The probe: its own bytes back with QR and AA set, NOERROR.
                let at = q.header_len;
                buf[at + 2] = 0x84;
                buf[at + 3] = 0;
                q.write_reply(buf, q.payload_len)
            })
            .map_err(|e| e.to_string())?;
        // Never sleeps (its own core, as a loaded server's): a sleeping
        // socket would make the sender pay a wake-up per batch.
        let _ = served;
    }
}

fn main() -> ExitCode {
    match parse_args().and_then(|a| if a.sink { sink(&a) } else { run(&a) }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xdpgun: {e}");
            ExitCode::FAILURE
        }
    }
}
