//! The XDP program and an AF_XDP socket on a real veth pair between two
//! network namespaces this test creates (root only, as the other netns
//! tests): datagrams to our port and address reach the ring and the
//! replies written into their frames reach the client, more of them than
//! the UMEM has frames; other ports reach
//! the kernel; after `detach` everything reaches the kernel.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::process::Command;
use std::time::{Duration, Instant};

use gslb_xdp::{Program, Socket, frame};

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two namespaces and a veth pair, deleted on drop.
struct Pair {
    cli: String,
    srv: String,
}

impl Pair {
    fn create() -> Pair {
        let pid = std::process::id();
        let pair = Pair {
            cli: format!("gslbxr{pid}c"),
            srv: format!("gslbxr{pid}s"),
        };
        for ns in [&pair.cli, &pair.srv] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        ip(&[
            "link", "add", "xc0", "netns", &pair.cli, "type", "veth", "peer", "name", "xs0",
            "netns", &pair.srv,
        ]);
        ip(&[
            "-n",
            &pair.cli,
            "addr",
            "add",
            "10.252.0.1/24",
            "dev",
            "xc0",
        ]);
        ip(&[
            "-n",
            &pair.srv,
            "addr",
            "add",
            "10.252.0.2/24",
            "dev",
            "xs0",
        ]);
        ip(&["-n", &pair.cli, "link", "set", "xc0", "up"]);
        ip(&["-n", &pair.srv, "link", "set", "xs0", "up"]);
        pair
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for ns in [&self.cli, &self.srv] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Move this thread into namespace `name`.
fn enter(name: &str) {
    let f = std::fs::File::open(format!("/var/run/netns/{name}")).expect("namespace file");
    nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
}

fn root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

const SERVER: Ipv4Addr = Ipv4Addr::new(10, 252, 0, 2);

/// Ask `to` with `what` from a fresh client socket; the reply, if any.
fn ask(to: SocketAddr, what: &[u8]) -> Option<Vec<u8>> {
    let s = UdpSocket::bind("10.252.0.1:0").expect("client socket");
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let mut buf = [0u8; 2048];
    // A few tries: the first frame may meet ARP resolution.
    for _ in 0..6 {
        s.send_to(what, to).expect("send");
        if let Ok(n) = s.recv(&mut buf) {
            return Some(buf[..n].to_vec());
        }
    }
    None
}

#[test]
fn the_ring_answers_our_port_and_the_kernel_keeps_the_rest_and_everything_after_detach() {
    if !root() {
        eprintln!("skipped: AF_XDP and namespaces need root");
        return;
    }
    let pair = Pair::create();
    let (srv, cli) = (pair.srv.clone(), pair.cli.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (detach_tx, detach_rx) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        enter(&srv);
        // Kernel sockets on our port (shadowed while attached) and another.
        let ours = UdpSocket::bind((SERVER, 5300)).expect("kernel socket 5300");
        let other = UdpSocket::bind((SERVER, 5301)).expect("kernel socket 5301");
        let mut program = Program::attach("xs0", 5300, &[IpAddr::V4(SERVER)]).expect("attach");
        let ifindex = nix::net::if_::if_nametoindex("xs0").expect("ifindex");
        let mut socket = Socket::open(ifindex, 0).expect("AF_XDP socket");
        program.register(0, socket.fd()).expect("register");
        ready_tx.send(()).expect("ready");
        let mut echoed = 0;
        // Echo each payload reversed, until the client says detach.
        while detach_rx.try_recv().is_err() {
            let served = socket
                .serve(|buf, len| {
                    let q = frame::parse(&buf[..len]).ok()?;
                    let mut payload = q.payload(buf).to_vec();
                    payload.reverse();
                    buf[q.header_len..q.header_len + payload.len()].copy_from_slice(&payload);
                    q.write_reply(buf, payload.len())
                })
                .expect("serve");
            echoed += served.sent;
            if served.received == 0 {
                let _ = socket.wait(Duration::from_millis(20));
            }
        }
        program.detach();
        assert!(!program.attached());
        // Now the kernel's socket on our port answers (echo as is).
        ours.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut buf = [0u8; 512];
        let (n, from) = ours
            .recv_from(&mut buf)
            .expect("the kernel gets our port after detach");
        ours.send_to(&buf[..n], from).expect("kernel reply");
        other
            .set_read_timeout(Some(Duration::from_millis(10)))
            .expect("timeout");
        let kernel_other = other.recv_from(&mut buf).map(|(n, _)| n).unwrap_or(0);
        (echoed, kernel_other)
    });
    ready_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("server ready");
    let client = std::thread::spawn(move || {
        enter(&cli);
        let ours = SocketAddr::from((SERVER, 5300));
        // Twice as many as the UMEM has frames: every frame comes back.
        for i in 0..2 * gslb_xdp::ring::FRAMES {
            let q = format!("query {i}").into_bytes();
            let mut want = q.clone();
            want.reverse();
            assert_eq!(
                ask(ours, &q).as_deref(),
                Some(&want[..]),
                "reply {i} from the ring"
            );
        }
        // Another port is not ours: the kernel socket there gets it (no reply).
        let s = UdpSocket::bind("10.252.0.1:0").expect("socket");
        s.send_to(b"for the kernel", (SERVER, 5301)).expect("send");
        let _ = detach_tx.send(());
        let started = Instant::now();
        let after = ask(ours, b"after detach");
        (after, started.elapsed())
    });
    let (after, _) = client.join().expect("client");
    let (echoed, kernel_other) = server.join().expect("server");
    let want = 2 * gslb_xdp::ring::FRAMES as usize;
    assert!(
        echoed >= want,
        "{want} replies went out of the ring, {echoed}"
    );
    assert_eq!(
        kernel_other,
        b"for the kernel".len(),
        "other ports stay with the kernel"
    );
    assert_eq!(
        after.as_deref(),
        Some(&b"after detach"[..]),
        "answered by the kernel after detach"
    );
}
