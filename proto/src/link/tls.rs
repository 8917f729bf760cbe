//! Client TLS for a link, read from PEM files each time a connection is
//! made, so a rotated certificate is used from the next connection on
//! without a restart.

use std::path::Path;

use gslb_shared::config::LinkTls;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

/// A TLS file that could not be read; the message names the flag and file.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsFileError(String);

/// A client config trusting `ca` and presenting `identity` (cert, key).
pub fn client_config(
    ca: Option<&Path>,
    identity: Option<(&Path, &Path)>,
) -> Result<ClientTlsConfig, TlsFileError> {
    let read = |flag: &str, path: &Path| {
        std::fs::read(path).map_err(|e| TlsFileError(format!("{flag} {}: {e}", path.display())))
    };
    let mut config = ClientTlsConfig::new();
    if let Some(ca) = ca {
        config = config.ca_certificate(Certificate::from_pem(read("tls-ca", ca)?));
    }
    if let Some((cert, key)) = identity {
        config = config.identity(Identity::from_pem(
            read("tls-cert", cert)?,
            read("tls-key", key)?,
        ));
    }
    Ok(config)
}

/// The client config of an agent's or edge's link settings; `None` when
/// none are set (plain text, or TLS with tonic's defaults).
pub fn link_config(tls: &LinkTls) -> Result<Option<ClientTlsConfig>, TlsFileError> {
    if tls.identity.is_none() && tls.ca.is_none() {
        return Ok(None);
    }
    let identity = tls
        .identity
        .as_ref()
        .map(|(c, k)| (c.as_path(), k.as_path()));
    client_config(tls.ca.as_deref(), identity).map(Some)
}

/// The certificate chain in PEM file `path` (flag `tls-cert`).
pub fn read_chain(path: &Path) -> anyhow::Result<Vec<rustls::pki_types::CertificateDer<'static>>> {
    use anyhow::Context;
    use rustls::pki_types::pem::PemObject;
    let chain = rustls::pki_types::CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("tls-cert {}", path.display()))?;
    if chain.is_empty() {
        anyhow::bail!("tls-cert {}: no certificate in it", path.display());
    }
    Ok(chain)
}

/// When the first certificate in PEM file `path` (this component's own,
/// `tls-cert`) expires, in seconds since the Unix epoch. Read at each
/// call, so a rotated file shows its new date.
pub fn not_after(path: &Path) -> anyhow::Result<i64> {
    let chain = read_chain(path)?;
    let (_, cert) = x509_parser::parse_x509_certificate(chain[0].as_ref())
        .map_err(|e| anyhow::anyhow!("tls-cert {}: {e}", path.display()))?;
    Ok(cert.validity().not_after.timestamp())
}

/// Help text of each component's `tls_cert_expiry_timestamp_seconds`.
pub const EXPIRY_HELP: &str = "When this component's own certificate (--tls-cert) expires, in seconds since the Unix epoch (read at each scrape; no sample without one)";

/// The private key in PEM file `path` (flag `tls-key`).
pub fn read_key(path: &Path) -> anyhow::Result<rustls::pki_types::PrivateKeyDer<'static>> {
    use anyhow::Context;
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::PrivateKeyDer::from_pem_file(path)
        .with_context(|| format!("tls-key {}", path.display()))
}

/// The CA certificates in PEM file `path` (flag `tls-ca`), as trust roots.
pub fn read_roots(path: &Path) -> anyhow::Result<rustls::RootCertStore> {
    use anyhow::Context;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for ca in rustls::pki_types::CertificateDer::pem_file_iter(path)
        .with_context(|| format!("tls-ca {}", path.display()))?
    {
        let ca = ca.with_context(|| format!("tls-ca {}", path.display()))?;
        roots
            .add(ca)
            .with_context(|| format!("tls-ca {}", path.display()))?;
    }
    if roots.is_empty() {
        anyhow::bail!("tls-ca {}: no certificate in it", path.display());
    }
    Ok(roots)
}
