//! How the two wires are built, once, at start: the trust roots, the direct client (hyper) with
//! its bounded connect, and the proxied client (reqwest) with the same roots, timeouts and
//! refusals.

use super::{DirectClient, HttpConfig};
use crate::control::RemoteError;
use reqwest::Url;
use std::sync::Arc;
use std::time::Duration;

/// The endpoint (or a URL under it) as hyper's `Uri`.
pub(super) fn to_uri(url: &Url) -> Result<::http::Uri, RemoteError> {
    url.as_str()
        .parse()
        .map_err(|_| RemoteError::InvalidEndpoint)
}

/// The trust roots: the compiled-in Mozilla roots and the platform's store (which honours
/// `SSL_CERT_FILE` / `SSL_CERT_DIR`) unless `ca_only`, plus `ca_pem` — what reqwest loads.
pub(super) fn root_store(config: &HttpConfig) -> Result<rustls::RootCertStore, RemoteError> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let handshake = RemoteError::Tls(crate::control::TlsClass::Handshake);
    let mut roots = rustls::RootCertStore::empty();
    if !config.ca_only {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        // Native stores often hold a few certificates rustls cannot parse: skip them, as reqwest does.
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
    }
    if let Some(pem) = &config.ca_pem {
        for cert in CertificateDer::pem_slice_iter(pem) {
            roots
                .add(cert.map_err(|_| handshake.clone())?)
                .map_err(|_| handshake.clone())?;
        }
    }
    Ok(roots)
}

pub(super) fn direct_client(config: &HttpConfig) -> Result<DirectClient, RemoteError> {
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // TLS 1.2 and 1.3 only; verification against `root_store`, never switched off.
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|_| RemoteError::Tls(crate::control::TlsClass::Handshake))?
        .with_root_certificates(root_store(config)?)
        .with_no_client_auth();
    // The TCP settings reqwest uses: no Nagle delay on small requests, keep-alive probes.
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    tcp.set_keepalive(Some(Duration::from_secs(15)));
    tcp.set_keepalive_interval(Some(Duration::from_secs(15)));
    tcp.set_keepalive_retries(Some(3));
    tcp.set_tcp_user_timeout(Some(Duration::from_secs(30)));
    let builder = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls);
    let https = if config.allow_insecure_loopback {
        // `Endpoint::parse` has already refused plain HTTP to anything but loopback.
        builder.https_or_http()
    } else {
        builder.https_only()
    }
    .enable_http1()
    .enable_http2()
    .wrap_connector(tcp);
    let connect = TimedConnect {
        inner: https,
        timeout: config.connect_timeout,
    };
    Ok(
        hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connect),
    )
}

/// reqwest, for a remote reached through the environment's proxy: the same roots, timeouts and
/// refusals as the direct wire.
pub(super) fn proxied_client(config: &HttpConfig) -> Result<reqwest::Client, RemoteError> {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .min_tls_version(reqwest::tls::Version::TLS_1_2)
        .tls_built_in_root_certs(!config.ca_only);
    if let Some(pem) = &config.ca_pem {
        for cert in reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|_| RemoteError::Tls(crate::control::TlsClass::Handshake))?
        {
            builder = builder.add_root_certificate(cert);
        }
    }
    builder
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(config.connect_timeout)
        .read_timeout(config.read_timeout)
        .timeout(config.total_timeout)
        .https_only(!config.allow_insecure_loopback)
        .build()
        .map_err(|_| RemoteError::Tls(crate::control::TlsClass::Handshake))
}

/// A connector whose whole connect — TCP and the TLS handshake — is bounded, so that a stall
/// before anything was sent is told apart from one after (hyper's own timeout covers TCP only).
#[derive(Clone)]
pub(super) struct TimedConnect<C> {
    inner: C,
    timeout: Duration,
}

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<C> tower::Service<::http::Uri> for TimedConnect<C>
where
    C: tower::Service<::http::Uri>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<C::Response, BoxError>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: ::http::Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let timeout = self.timeout;
        Box::pin(async move {
            match tokio::time::timeout(timeout, connecting).await {
                Ok(done) => done.map_err(Into::into),
                Err(_) => Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into()),
            }
        })
    }
}
