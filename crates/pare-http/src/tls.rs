//! TLS on both sides of `pare http`, on rustls: whom pare trusts upstream, what it shows
//! there, and the certificate it serves with.
//!
//! - Upstream ([`UpstreamTls`]): the web roots, plus CA bundles of one's own (an internal
//!   API signed by a company CA), or those alone; a client certificate and key for an
//!   upstream that asks for one (mTLS); and the name to expect on the upstream's
//!   certificate (and to send as SNI) when the URL names an address or another name.
//! - Listener ([`ServerCert`]): a certificate chain and key from PEM files, read again on
//!   SIGHUP (certificates are renewed without a restart). A reload that fails keeps the
//!   certificate in use and says why: a half-written file never takes the listener down.
//!
//! ```no_run
//! use pare_http::tls::{ServerCert, UpstreamTls};
//! let upstream = UpstreamTls { ca_files: vec!["company-ca.pem".into()], ..UpstreamTls::default() };
//! let config = upstream.client_config().unwrap();
//! let cert = ServerCert::load("cert.pem".into(), "key.pem".into()).unwrap();
//! let acceptor = cert.acceptor();
//! cert.reload().unwrap(); // on SIGHUP
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

/// A TLS file pare cannot use.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The file cannot be read, or holds no PEM block of the kind it should.
    #[error("{flag} {}: {why}", path.display())]
    File {
        /// The flag that named it.
        flag: &'static str,
        path: PathBuf,
        why: String,
    },
    /// A setting rustls refuses (a key that does not match its certificate, and the like).
    #[error("{0}")]
    Config(String),
}

/// Whom pare trusts upstream and what it shows there.
#[derive(Debug, Clone, Default)]
pub struct UpstreamTls {
    /// PEM files of CA certificates to trust besides (or, with `ca_only`, instead of) the
    /// web roots.
    pub ca_files: Vec<PathBuf>,
    /// Trust `ca_files` alone.
    pub ca_only: bool,
    /// A client certificate chain (PEM) and its key, for an upstream that asks for one.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// The name the upstream's certificate must carry (and the SNI pare sends); `None`: the
    /// URL's host.
    pub server_name: Option<String>,
}

impl UpstreamTls {
    /// The rustls client settings (ALPN is the connector's).
    pub fn client_config(&self) -> Result<ClientConfig, TlsError> {
        let mut roots = RootCertStore::empty();
        if !self.ca_only {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        for path in &self.ca_files {
            let certs = certificates("--upstream-ca", path)?;
            for cert in certs {
                roots.add(cert).map_err(|e| TlsError::File {
                    flag: "--upstream-ca",
                    path: path.clone(),
                    why: format!("not a CA certificate rustls accepts: {e}"),
                })?;
            }
        }
        if roots.is_empty() {
            return Err(TlsError::Config(
                "--upstream-ca-only with no --upstream-ca: no certificate would be trusted".into(),
            ));
        }
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Config(e.to_string()))?
            .with_root_certificates(roots);
        match &self.client_cert {
            None => Ok(builder.with_no_client_auth()),
            Some((cert, key)) => {
                let chain = certificates("--upstream-client-cert", cert)?;
                let key = private_key("--upstream-client-key", key)?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    TlsError::Config(format!(
                        "--upstream-client-key is not the key of --upstream-client-cert ({e})"
                    ))
                })
            }
        }
    }

    /// The server name to expect, checked.
    pub fn server_name(&self) -> Result<Option<ServerName<'static>>, TlsError> {
        self.server_name
            .as_ref()
            .map(|n| {
                ServerName::try_from(n.clone()).map_err(|e| {
                    TlsError::Config(format!(
                        "--upstream-server-name {n}: not a DNS name or IP address ({e})"
                    ))
                })
            })
            .transpose()
    }
}

/// The listener's certificate, swapped on [`ServerCert::reload`]; cheap to clone.
#[derive(Debug, Clone)]
pub struct ServerCert {
    cert: PathBuf,
    key: PathBuf,
    current: Arc<RwLock<Arc<CertifiedKey>>>,
}

impl ServerCert {
    /// Read the certificate chain and key (PEM).
    pub fn load(cert: PathBuf, key: PathBuf) -> Result<ServerCert, TlsError> {
        let current = certified(&cert, &key)?;
        Ok(ServerCert {
            cert,
            key,
            current: Arc::new(RwLock::new(Arc::new(current))),
        })
    }

    /// Read the files again; on an error the certificate in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let fresh = certified(&self.cert, &self.key)?;
        *self.current.write().expect("certificate lock") = Arc::new(fresh);
        Ok(())
    }

    /// An acceptor that always serves the certificate current at the handshake.
    pub fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default versions")
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(self.clone()));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    }
}

impl ResolvesServerCert for ServerCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().expect("certificate lock").clone())
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn certified(cert: &Path, key: &Path) -> Result<CertifiedKey, TlsError> {
    let chain = certificates("--tls-cert", cert)?;
    let der = private_key("--tls-key", key)?;
    let certified = CertifiedKey::from_der(chain, der, &provider()).map_err(|e| {
        TlsError::Config(format!(
            "--tls-key {} is not the key of --tls-cert {} ({e})",
            key.display(),
            cert.display()
        ))
    })?;
    Ok(certified)
}

fn certificates(flag: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |why: String| TlsError::File {
        flag,
        path: path.to_owned(),
        why,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(pem_error(&e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(pem_error(&e)))?;
    if certs.is_empty() {
        return Err(bad("no CERTIFICATE block in it".into()));
    }
    Ok(certs)
}

fn private_key(flag: &'static str, path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::File {
        flag,
        path: path.to_owned(),
        why: match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "no PRIVATE KEY block in it (PKCS#8, PKCS#1 or SEC1)".into()
            }
            other => pem_error(&other),
        },
    })
}

fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => io.to_string(),
        other => format!("not PEM: {other}"),
    }
}
