//! TLS client settings for HTTPS probes: one verifying configuration (the
//! system roots plus an optional operator CA bundle) and one for checks that
//! opt out of verification with `tlsVerify: false`.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use gslb_shared::FailReason;
use gslb_shared::assignment::TargetKey;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::Failure;
use crate::metrics::CertExpiry;
use crate::target::Target;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// The client configurations HTTPS and gRPC probes use.
#[derive(Debug, Clone)]
pub struct ProbeTls {
    /// Verifies the server certificate and name.
    pub verifying: Arc<ClientConfig>,
    /// Still checks handshake signatures, but trusts any certificate.
    pub insecure: Arc<ClientConfig>,
    /// `verifying` offering HTTP/2 (gRPC).
    pub verifying_h2: Arc<ClientConfig>,
    /// `insecure` offering HTTP/2 (gRPC).
    pub insecure_h2: Arc<ClientConfig>,
}

/// A TLS setup failure.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// The CA bundle could not be read or parsed.
    #[error("probe CA file {path}: {error}")]
    CaFile {
        /// The file.
        path: String,
        /// What went wrong.
        error: String,
    },
    /// No usable root certificate at all.
    #[error(
        "no trusted root certificates: the system store is empty and no probe CA file was given"
    )]
    NoRoots,
}

impl ProbeTls {
    /// Build both configurations. `extra_ca` adds a PEM bundle to the roots.
    pub fn new(extra_ca: Option<&Path>, use_system_roots: bool) -> Result<Self, TlsSetupError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        if use_system_roots {
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                // A single unparsable system certificate must not disable HTTPS probes.
                let _ = roots.add(cert);
            }
        }
        if let Some(path) = extra_ca {
            let err = |error: String| TlsSetupError::CaFile {
                path: path.display().to_string(),
                error,
            };
            let certs = CertificateDer::pem_file_iter(path).map_err(|e| err(e.to_string()))?;
            for cert in certs {
                roots
                    .add(cert.map_err(|e| err(e.to_string()))?)
                    .map_err(|e| err(e.to_string()))?;
            }
        }
        if roots.is_empty() {
            return Err(TlsSetupError::NoRoots);
        }
        let builder = || {
            ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .expect("the ring provider supports the default protocol versions")
        };
        let mut verifying = builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        verifying.alpn_protocols = vec![b"http/1.1".to_vec()];
        let mut insecure = builder()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider.clone())))
            .with_no_client_auth();
        insecure.alpn_protocols = vec![b"http/1.1".to_vec()];
        let h2 = |config: &ClientConfig| {
            let mut config = config.clone();
            config.alpn_protocols = vec![b"h2".to_vec()];
            Arc::new(config)
        };
        Ok(Self {
            verifying_h2: h2(&verifying),
            insecure_h2: h2(&insecure),
            verifying: Arc::new(verifying),
            insecure: Arc::new(insecure),
        })
    }

    /// The HTTP/2 configuration for a gRPC check's `tlsVerify` setting.
    pub fn config_h2(&self, verify: bool) -> Arc<ClientConfig> {
        if verify {
            self.verifying_h2.clone()
        } else {
            self.insecure_h2.clone()
        }
    }

    /// The configuration for a check's `tlsVerify` setting.
    pub fn config(&self, verify: bool) -> Arc<ClientConfig> {
        if verify {
            self.verifying.clone()
        } else {
            self.insecure.clone()
        }
    }
}

/// The server name a TLS probe presents: the check's own, else the
/// member's hostname (a CDN or load balancer serves the certificate of its
/// name); `None` presents the address.
pub fn server_name(explicit: &Option<String>, target: &Target) -> Option<String> {
    explicit
        .clone()
        .or_else(|| target.hostname.as_ref().map(ToString::to_string))
}

/// The TLS handshake of an HTTPS or gRPC probe over `tcp`, presenting `sni`
/// (else `address`), recording the days left on the server's certificate
/// for `key` in `certs`.
pub async fn handshake(
    config: Arc<ClientConfig>,
    tcp: TcpStream,
    sni: Option<&str>,
    address: IpAddr,
    certs: &CertExpiry,
    key: TargetKey,
) -> Result<TlsStream<TcpStream>, Failure> {
    let name = match sni {
        Some(sni) => ServerName::try_from(sni.to_owned())
            .map_err(|e| Failure::new(FailReason::Tls, format!("server name {sni:?}: {e}")))?,
        None => ServerName::IpAddress(address.into()),
    };
    let stream = TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(tls_failure)?;
    if let Some(leaf) = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
    {
        certs.record(key, leaf);
    }
    Ok(stream)
}

/// A TLS handshake's failure: `tls` when rustls refused, else the I/O error.
fn tls_failure(err: std::io::Error) -> Failure {
    let is_tls = err
        .get_ref()
        .is_some_and(|inner| inner.is::<rustls::Error>());
    if is_tls {
        Failure::new(FailReason::Tls, format!("tls: {err}"))
    } else {
        Failure::io("tls handshake", &err)
    }
}

/// Accepts any certificate (for `tlsVerify: false`), while still checking
/// that the handshake is signed by the key in the presented certificate.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
