//! Pieces of declarative catalogs for the scenarios, in the API's TOML
//! (the same format as `deploy/examples/quickstart.toml`).

use std::net::SocketAddr;

/// The zone every scenario serves: `example.test`, with its SOA and NS.
pub const ZONE: &str = r#"
[[zone]]
apex = "example.test"
ns = ["ns1.example.test"]
defaultTtl = 60
[zone.soa]
mname = "ns1.example.test"
rname = "hostmaster.example.test"
refresh = 3600
retry = 600
expire = 604800
negativeTtl = 5
"#;

/// An HTTP `GET /health` check every `interval` with `timeout`.
pub fn http_check(name: &str, interval: &str, timeout: &str) -> String {
    check(
        name,
        r#"{ type = "http", method = "GET", path = "/health" }"#,
        interval,
        timeout,
    )
}

/// A TCP connect check every `interval` with `timeout`.
pub fn tcp_check(name: &str, interval: &str, timeout: &str) -> String {
    check(name, r#"{ type = "tcp" }"#, interval, timeout)
}

fn check(name: &str, probe: &str, interval: &str, timeout: &str) -> String {
    format!(
        "\n[[check]]\nname = \"{name}\"\nprobe = {probe}\ninterval = \"{interval}\"\ntimeout = \"{timeout}\"\n"
    )
}

/// A pool checked by `check` (if any) with extra `settings` lines and
/// `members` (from [`member`]).
pub fn pool(name: &str, check: Option<&str>, settings: &str, members: &[String]) -> String {
    let mut s = format!("\n[[pool]]\nname = \"{name}\"\n");
    if let Some(check) = check {
        s += &format!("check = \"{check}\"\n");
    }
    s += settings;
    s += "\n";
    for m in members {
        s += m;
    }
    s
}

/// A member at `addr` with extra `settings` lines (`backup = true`, ...).
pub fn member(name: &str, addr: SocketAddr, settings: &str) -> String {
    format!(
        "[[pool.member]]\nname = \"{name}\"\naddress = \"{}\"\nport = {}\n{settings}\n",
        addr.ip(),
        addr.port()
    )
}

/// A round-robin A record `name` (in `example.test`) backed by `pools`.
pub fn a_record(name: &str, pools: &[&str]) -> String {
    let pools: Vec<String> = pools.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        "\n[[record]]\nzone = \"example.test\"\nname = \"{name}\"\ntype = \"A\"\ndynamic = {{ steering = \"roundrobin\", pools = [{}] }}\n",
        pools.join(", ")
    )
}

/// The zone, an HTTP check every 1 s (timeout 500 ms), pool `web` with
/// members `web-1` at `a` and `web-2` at `b`, and `www.example.test` on it.
pub fn web_pair(a: SocketAddr, b: SocketAddr) -> String {
    format!(
        "{ZONE}{}{}{}",
        http_check("http", "1s", "500ms"),
        pool(
            "web",
            Some("http"),
            "",
            &[member("web-1", a, ""), member("web-2", b, "")]
        ),
        a_record("www.example.test", &["web"])
    )
}
