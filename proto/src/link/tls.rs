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
