//! Zone files in and out (issue 19): a real-shaped master file imported
//! with `gslbctl zone import` (dry run first, `$INCLUDE` refused with
//! nothing applied), served by the edge (a referral included), exported
//! with `gslbctl zone export` and over REST, accepted by Knot's
//! `kzonecheck` and BIND's `named-checkzone`, and imported again without
//! a change (the pool-backed name kept).

use std::process::Command;

use gslb_e2e::catalog::{a_record, member, pool, tcp_check};
use gslb_e2e::dns::{dig, http_request, short};
use gslb_e2e::{Backend, LocalMesh, ZONE, wait_until};

const FILE: &str = r#"$ORIGIN example.test.
$TTL 300
; a zone as another provider would hand it over
@   600 IN SOA ns1 hostmaster (
            2024060101 ; serial: ours replaces it
            3600 600 604800 60 )
        IN NS  ns1
        IN NS  ns2.example.net.
        IN MX  10 mail
        IN TXT "v=spf1 mx -all"
        IN CAA 0 issue "ca.example"
ns1     IN A     192.0.2.53
mail    IN A     192.0.2.25
mail    IN AAAA  2001:db8::25
www     IN A     192.0.2.99 ; pool-backed here: the file's answer is left out
alias   IN CNAME mail
_sip._tcp IN SRV 10 60 5060 mail
_443._tcp.mail IN TLSA 3 1 1 (
            d2abde240d7cd3ee6b4b28c54df034b9
            7983a1d16e8a410e4561cb106618e971 )
svc     IN HTTPS 1 . alpn=h2,h3 port=8443
sub     IN NS    ns1.sub
sub     IN DS    12345 13 2 d2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971
ns1.sub IN A     192.0.2.70
*.wild  IN TXT   "wildcard"
odd     IN TYPE65534 \# 4 0a000001
"#;

fn check_zone(tool: &str, args: &[&str]) {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool} not runnable ({e}): see scripts/packages.sh"));
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_zone_file_goes_in_and_comes_back_out_as_knot_and_bind_accept_it() {
    let backend = Backend::start(None, "127.0.2.41:0");
    let config = format!(
        "{ZONE}{}{}{}",
        tcp_check("tcp", "1s", "500ms"),
        pool("web", Some("tcp"), "", &[member("w1", backend.addr, "")]),
        a_record("www.example.test", &["web"]),
    );
    let mesh = LocalMesh::start("zonefile", &config, &[("fra1", "eu")]);
    wait_until(30, "w1 healthy", || mesh.agg.health("web", "w1") == "up");
    let path = |name: &str| mesh.dir.join(name).to_str().unwrap().to_owned();

    // $INCLUDE is refused with its line, and nothing is applied.
    let before = mesh.agg.ctl_json(&["zones", "list"]);
    std::fs::write(
        path("include.zone"),
        FILE.replace("; a zone", "$INCLUDE other.zone\n;"),
    )
    .unwrap();
    let (ok, _, err) = mesh.agg.try_ctl(&["zone", "import", &path("include.zone")]);
    assert!(
        !ok && err.contains("line 3: $INCLUDE is not supported"),
        "{err}"
    );
    assert_eq!(mesh.agg.ctl_json(&["zones", "list"]), before);

    // A dry run shows the plan and applies nothing.
    std::fs::write(path("example.test.zone"), FILE).unwrap();
    let dry = mesh
        .agg
        .ctl(&["zone", "import", &path("example.test.zone"), "--dry-run"]);
    for line in [
        "~ zone example.test",
        "+ record mail.example.test AAAA",
        "+ record sub.example.test NS",
        "+ record _443._tcp.mail.example.test TLSA",
        "= record www.example.test A is pool-backed: kept",
        "dry run:",
    ] {
        assert!(dry.contains(line), "{line} in {dry}");
    }
    assert!(short(None, mesh.dns, &["mail.example.test", "A"]).is_empty());

    // The import: served by the edge, the delegation as a referral.
    let applied = mesh
        .agg
        .ctl_json(&["zone", "import", &path("example.test.zone")]);
    let version = applied["version"].as_u64().unwrap();
    mesh.edge.wait_version(version);
    assert_eq!(
        short(None, mesh.dns, &["mail.example.test", "A"]),
        ["192.0.2.25"]
    );
    assert_eq!(
        short(None, mesh.dns, &["www.example.test", "A"]),
        [backend.addr.ip().to_string()],
        "the pool-backed name still steers"
    );
    let referral = dig(None, mesh.dns, &["www.sub.example.test", "A"]);
    assert!(
        referral.contains("flags: qr rd;")
            && referral.contains("ns1.sub.example.test.\t300\tIN\tA\t192.0.2.70"),
        "{referral}"
    );

    // Out again: Knot and BIND accept the file; REST gives the same text.
    let exported = mesh.agg.ctl(&["zone", "export", "example.test"]);
    assert!(
        exported.contains("; dynamic: www.example.test A is pool-backed"),
        "{exported}"
    );
    assert!(
        exported.contains(&format!("www.example.test. 30 IN A {}", backend.addr.ip())),
        "{exported}"
    );
    std::fs::write(path("exported.zone"), &exported).unwrap();
    check_zone(
        "kzonecheck",
        &["-o", "example.test.", &path("exported.zone")],
    );
    check_zone(
        "named-checkzone",
        &["-q", "example.test", &path("exported.zone")],
    );
    let auth = format!("Bearer {}", mesh.agg.token);
    let (code, _, body) = http_request(
        mesh.agg.http,
        "GET",
        "/api/v1/zonefile?apex=example.test",
        &[("Authorization", &auth)],
        "",
    );
    assert_eq!((code, body.as_str()), (200, exported.as_str()));

    // And in again: nothing changes, the pool-backed name is kept.
    let again = mesh
        .agg
        .ctl_json(&["zone", "import", &path("exported.zone")]);
    assert_eq!(again["plan"], serde_json::json!([]), "{again}");
    assert_eq!(again["version"].as_u64(), Some(version));
    assert!(
        again["notes"][0]
            .as_str()
            .unwrap()
            .contains("www.example.test A is pool-backed")
    );

    // A rule broken at write time names the record, not an index.
    std::fs::write(path("clash.zone"), format!("{FILE}alias IN A 192.0.2.1\n")).unwrap();
    let (ok, _, err) = mesh
        .agg
        .try_ctl(&["zone", "import", &path("clash.zone"), "--dry-run"]);
    assert!(
        !ok && err.contains(
            "record alias.example.test A: type: a CNAME at alias.example.test cannot coexist"
        ),
        "{err}"
    );

    // Issue 43 item 23: a file that leaves records out (a cut file) is
    // refused naming prune, and nothing is applied; --prune deletes them.
    let head: String = FILE.lines().take(7).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(path("cut.zone"), &head).unwrap();
    let (ok, _, err) = mesh.agg.try_ctl(&["zone", "import", &path("cut.zone")]);
    assert!(
        !ok && err.contains("prune: the file leaves out") && err.contains("nothing was applied"),
        "{err}"
    );
    assert_eq!(
        short(None, mesh.dns, &["mail.example.test", "A"]),
        ["192.0.2.25"]
    );
    let plan = mesh
        .agg
        .ctl(&["zone", "import", &path("cut.zone"), "--dry-run"]);
    assert!(plan.contains("- record mail.example.test A"), "{plan}");
    let (code, _, body) = http_request(
        mesh.agg.http,
        "POST",
        "/api/v1/zonefile",
        &[("Authorization", &auth)],
        &head,
    );
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("prune"), "{body}");

    // Over REST, a bad record names its line.
    let bad = FILE.replace(
        "mail    IN A     192.0.2.25",
        "mail    IN A     not-an-address",
    );
    let (code, _, body) = http_request(
        mesh.agg.http,
        "POST",
        "/api/v1/zonefile?dryRun=true",
        &[("Authorization", &auth)],
        &bad,
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("line 13") && body.contains("expected IPv4 address"),
        "{body}"
    );
}
