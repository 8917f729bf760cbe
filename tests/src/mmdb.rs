//! MaxMind DB files made in the tests with MaxMind's own writer (Debian's
//! `libmaxmind-db-writer-perl`): real GeoLite2 files cannot be downloaded
//! here, and a file written by the reference writer is what an edge meets
//! in production, in the GeoIP2 City/ASN layout.

use std::path::Path;
use std::process::Command;

/// One network of the file and what it says.
#[derive(Debug, Clone, Default)]
pub struct Network {
    /// CIDR (`198.51.100.0/24`, `2001:db8::/32`).
    pub cidr: String,
    /// `country.iso_code`.
    pub country: Option<String>,
    /// `continent.code`.
    pub continent: Option<String>,
    /// `subdivisions[0].iso_code` (within the country).
    pub subdivision: Option<String>,
    /// `autonomous_system_number`.
    pub asn: Option<u32>,
}

impl Network {
    /// A network in `country` on `continent`.
    pub fn country(cidr: &str, country: &str, continent: &str) -> Network {
        Network {
            cidr: cidr.into(),
            country: Some(country.into()),
            continent: Some(continent.into()),
            ..Network::default()
        }
    }
}

/// The Perl that writes `networks` to the file named by its argument.
/// Reserved networks are kept: the tests use documentation ranges.
fn script(kind: &str, networks: &[Network]) -> String {
    let mut inserts = String::new();
    for n in networks {
        let mut fields = Vec::new();
        if let Some(c) = &n.country {
            fields.push(format!("country => {{ iso_code => '{c}' }}"));
        }
        if let Some(c) = &n.continent {
            fields.push(format!("continent => {{ code => '{c}' }}"));
        }
        if let Some(s) = &n.subdivision {
            fields.push(format!("subdivisions => [ {{ iso_code => '{s}' }} ]"));
        }
        if let Some(a) = n.asn {
            fields.push(format!("autonomous_system_number => {a}"));
        }
        inserts += &format!(
            "$tree->insert_network('{}', {{ {} }});\n",
            n.cidr,
            fields.join(", ")
        );
    }
    format!(
        r#"use strict; use warnings;
use MaxMind::DB::Writer::Tree;
my %types = (
  country => 'map', continent => 'map', subdivisions => ['array', 'map'],
  iso_code => 'utf8_string', code => 'utf8_string', autonomous_system_number => 'uint32',
);
my $tree = MaxMind::DB::Writer::Tree->new(
  ip_version => 6, record_size => 24, database_type => '{kind}',
  remove_reserved_networks => 0,
  languages => ['en'], description => {{ en => 'gslb test data' }},
  map_key_type_callback => sub {{ $types{{ $_[0] }} }},
);
{inserts}
open my $fh, '>:raw', $ARGV[0] or die "open: $!";
$tree->write_tree($fh);
close $fh or die "close: $!";
"#
    )
}

/// Write a MaxMind DB file of `kind` (`GeoLite2-City`, ...) holding
/// `networks` to `path`, atomically (written beside it, then renamed, as
/// `geoipupdate` does).
pub fn write(path: &Path, kind: &str, networks: &[Network]) {
    let partial = path.with_extension("partial");
    // A file, not `-e`: one argument holds at most 128 KiB.
    let program = path.with_extension("pl");
    std::fs::write(&program, script(kind, networks)).expect("write the Perl program");
    let out = Command::new("perl")
        .arg(&program)
        .arg(&partial)
        .output()
        .expect("perl runs (Debian libmaxmind-db-writer-perl)");
    assert!(
        out.status.success(),
        "writing {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&partial, path).expect("rename the written file into place");
}
