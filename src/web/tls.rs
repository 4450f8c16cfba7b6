//! HTTPS for the web view: a certificate chain and its key (PEM files,
//! `[web] tls_cert` and `tls_key` or `--tls-cert`/`--tls-key`), and a
//! listener that hands axum connections whose TLS handshake is done. Each
//! handshake runs on its own task within `HANDSHAKE`, so a client that
//! stalls in one holds up nobody.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::server::TlsStream;

/// How long a client has to finish its TLS handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// The server's TLS, from its certificate chain and key: TLS 1.2 and 1.3,
/// HTTP/1.1.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("cannot read the certificate chain {}", cert.display()))?;
    anyhow::ensure!(!chain.is_empty(), "{} holds no certificate", cert.display());
    let private =
        PrivateKeyDer::from_pem_file(key).with_context(|| format!("cannot read the key {}", key.display()))?;
    // *ring*, not aws-lc (whose C build this project would carry for the
    // web view alone); rustls marks it deprecated for lacking post-quantum
    // key exchange, which the classical TLS 1.3 groups here do without.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .with_context(|| {
            format!(
                "{} and {} are not a certificate and its key",
                cert.display(),
                key.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Connections accepted and through their handshake.
pub struct Listener {
    local: SocketAddr,
    done: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl Listener {
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> Listener {
        let local = tcp
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
        let (tx, done) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let (stream, from) = tokio::select! {
                    accepted = tcp.accept() => match accepted {
                        Ok(accepted) => accepted,
                        // Out of descriptors, say: wait, rather than spin.
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    },
                    _ = tx.closed() => return,
                };
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    if let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await {
                        let _ = tx.send((tls, from)).await;
                    }
                });
            }
        });
        Listener { local, done }
    }
}

impl axum::serve::Listener for Listener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.done.recv().await {
            Some(accepted) => accepted,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
