//! A development certificate authority (`gslbctl certs`): one CA in a
//! directory and leaf certificates signed by it, each naming its role and
//! name in a URI SAN and valid for server and client use (an aggregator
//! is both; agents and edges only need the client half).

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

use super::identity::{Role, uri};

/// File names of the CA inside its directory.
pub const CA_CERT: &str = "ca.crt";
/// The CA's private key (mode 0600).
pub const CA_KEY: &str = "ca.key";

/// Backdating of new certificates, for clocks slightly behind ours.
const BACKDATE: Duration = Duration::from_secs(300);

/// The CA of a directory.
pub struct Ca {
    dir: PathBuf,
    key: KeyPair,
    cert_pem: String,
}

/// A leaf certificate to issue.
pub struct Leaf<'a> {
    /// Its role.
    pub role: Role,
    /// Its name (also the file stem: NAME.crt, NAME.key).
    pub name: &'a str,
    /// DNS names and IP addresses it serves under.
    pub hosts: &'a [String],
    /// Valid from.
    pub not_before: SystemTime,
    /// Valid until.
    pub not_after: SystemTime,
}

impl Ca {
    /// Open the CA in `dir`, creating it (and `dir`) when absent.
    pub fn open_or_create(dir: &Path, days: u64) -> anyhow::Result<(Ca, bool)> {
        if dir.join(CA_CERT).exists() {
            return Ok((Ca::open(dir)?, false));
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let key = KeyPair::generate().context("generating the CA key")?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        // A name of its own: two CAs (before and after a rotation) must
        // not look alike to a verifier that finds issuers by name.
        params.distinguished_name.push(
            DnType::CommonName,
            format!("gslb development CA {:08x}", rand::random::<u32>()),
        );
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let now = SystemTime::now();
        params.not_before = (now - BACKDATE).into();
        params.not_after = (now + Duration::from_secs(days * 86_400)).into();
        let cert = params.self_signed(&key).context("signing the CA")?;
        write_secret(&dir.join(CA_KEY), &key.serialize_pem())?;
        write_public(&dir.join(CA_CERT), &cert.pem())?;
        Ok((
            Ca {
                dir: dir.to_owned(),
                key,
                cert_pem: cert.pem(),
            },
            true,
        ))
    }

    /// Open the CA in `dir`.
    pub fn open(dir: &Path) -> anyhow::Result<Ca> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
        };
        let cert_pem = read(CA_CERT)?;
        let key = KeyPair::from_pem(&read(CA_KEY)?).context("parsing ca.key")?;
        Ok(Ca {
            dir: dir.to_owned(),
            key,
            cert_pem,
        })
    }

    /// Issue `leaf`, writing NAME.crt and NAME.key into the CA's directory;
    /// returns the certificate's path.
    pub fn issue(&self, leaf: &Leaf<'_>) -> anyhow::Result<PathBuf> {
        let (cert, key) = self.sign(leaf)?;
        let cert_path = self.dir.join(format!("{}.crt", leaf.name));
        // Key first: a reader that sees the new certificate finds its key.
        write_secret(&self.dir.join(format!("{}.key", leaf.name)), &key)?;
        write_public(&cert_path, &cert)?;
        Ok(cert_path)
    }

    /// Sign `leaf`; returns (certificate PEM, key PEM) without writing them.
    pub fn sign(&self, leaf: &Leaf<'_>) -> anyhow::Result<(String, String)> {
        if leaf.name.is_empty()
            || !leaf
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            || leaf.name.starts_with('.')
        {
            anyhow::bail!(
                "name {:?}: use letters, digits, '-', '_' and '.' (it is also the file name)",
                leaf.name
            );
        }
        let issuer = Issuer::from_ca_cert_pem(&self.cert_pem, &self.key)
            .context("reading ca.crt as an issuer")?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, leaf.name);
        params
            .distinguished_name
            .push(DnType::OrganizationalUnitName, leaf.role.as_str());
        for host in leaf.hosts {
            let san = match host.parse::<IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => SanType::DnsName(
                    host.as_str()
                        .try_into()
                        .with_context(|| format!("host {host:?} is not a DNS name"))?,
                ),
            };
            params.subject_alt_names.push(san);
        }
        params.subject_alt_names.push(SanType::URI(
            uri(leaf.role, leaf.name)
                .try_into()
                .context("the identity URI")?,
        ));
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.not_before = (leaf.not_before - BACKDATE).into();
        params.not_after = leaf.not_after.into();
        let key = KeyPair::generate().context("generating a key")?;
        let cert = params.signed_by(&key, &issuer).context("signing")?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

/// Write `text` readable by its owner only, atomically.
pub fn write_secret(path: &Path, text: &str) -> anyhow::Result<()> {
    write_atomic(path, text, 0o600)
}

fn write_public(path: &Path, text: &str) -> anyhow::Result<()> {
    write_atomic(path, text, 0o644)
}

/// Write through a temporary file and a rename, so a reloading reader
/// never sees half a file.
pub fn write_atomic(path: &Path, text: &str, mode: u32) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    use super::*;
    use crate::link::identity::of_certificate;

    #[test]
    fn issued_certificates_carry_their_identity_and_bad_names_are_refused() {
        let dir = std::env::temp_dir().join(format!("gslb-pki-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (ca, created) = Ca::open_or_create(&dir, 30).unwrap();
        assert!(created);
        assert!(!Ca::open_or_create(&dir, 30).unwrap().1, "the CA is reused");
        let now = SystemTime::now();
        let hosts = ["127.0.0.1".to_owned(), "agg.example".to_owned()];
        for role in Role::ALL {
            let path = ca
                .issue(&Leaf {
                    role,
                    name: "node-1",
                    hosts: &hosts,
                    not_before: now,
                    not_after: now + Duration::from_secs(3600),
                })
                .unwrap();
            let der = CertificateDer::from_pem_file(&path).unwrap();
            let id = of_certificate(&der).unwrap();
            assert_eq!((id.role, id.name.as_str()), (role, "node-1"));
        }
        let mode = std::fs::metadata(dir.join("node-1.key")).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
        for bad in ["", "../x", ".hidden", "a b", "a/b"] {
            let leaf = Leaf {
                role: Role::Agent,
                name: bad,
                hosts: &[],
                not_before: now,
                not_after: now,
            };
            assert!(ca.sign(&leaf).is_err(), "{bad:?}");
        }
        // The CA itself names no gslb identity.
        let der = CertificateDer::from_pem_file(dir.join(CA_CERT)).unwrap();
        assert!(of_certificate(&der).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
