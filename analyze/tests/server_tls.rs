//! `analyze -p`: TLS with the given PEM files, or a self-signed certificate
//! generated in process (docs/compatibility.md#analyze-server).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use crate::server_common::*;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// GET over TLS with `config`; returns the parsed answer.
fn tls_get(port: u16, config: Arc<rustls::ClientConfig>, target: &str) -> Response {
    let name = ServerName::try_from("localhost").unwrap();
    let connection = rustls::ClientConnection::new(config, name).unwrap();
    let socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
    socket.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, socket);
    write!(
        tls,
        "GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    // The server may close without close_notify after the body; what was
    // read until then is the answer.
    let _ = tls.read_to_end(&mut out);
    parse_response(&out).expect("an HTTP answer over TLS")
}

#[test]
fn serves_over_tls_with_the_given_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    std::fs::write(&cert, generated.cert.pem()).unwrap();
    std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
    let input = testdata("metrics3.csv");
    let options = testdata("options.txt");
    let server = Server::analyze(&[
        "-p",
        "-c",
        cert.to_str().unwrap(),
        "-e",
        key.to_str().unwrap(),
        "-f",
        options.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert!(server
        .lines
        .iter()
        .any(|l| l.starts_with("Serving charts on https://")));
    // The client trusts exactly that certificate and checks it properly.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(generated.cert.der().clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let response = tls_get(server.port(), Arc::new(config), &link(MAIN, 7));
    assert_eq!(response.status, 200);
    assert!(response.body.starts_with(b"%PDF-"));
    assert_eq!(pdf_pages(&response.body), 3);
    // Plain HTTP on the TLS port is refused without stopping the server.
    let _ = exchange(server.port(), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates({
            let mut roots = rustls::RootCertStore::empty();
            roots.add(generated.cert.der().clone()).unwrap();
            roots
        })
        .with_no_client_auth();
    assert_eq!(tls_get(server.port(), Arc::new(config), "/k/x").status, 400);
}

/// Accepts whatever certificate the server shows (it was generated inside
/// the server process), but still checks the handshake signatures.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
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

#[test]
fn generates_a_self_signed_certificate_without_openssl() {
    let input = testdata("metrics3.csv");
    // An empty PATH: no openssl binary can be run, the certificate must
    // come from the process itself.
    let server = Server::start_with_env(
        env!("CARGO_BIN_EXE_analyze"),
        &[
            "-p",
            "--port",
            "0",
            "-m",
            "GpuTime[ns]",
            "-y",
            "ns",
            input.to_str().unwrap(),
        ],
        &[("PATH", "")],
        |s| s.port.is_some(),
    );
    assert_eq!(
        &server.lines[2..5],
        [
            "No certificate or private key is provided.",
            "Generating a self-signed certificate...",
            "Self-signed certificate and private key have been generated.",
        ]
    );
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider())))
        .with_no_client_auth();
    let response = tls_get(server.port(), Arc::new(config), &link(MAIN, 8));
    assert_eq!(response.status, 200);
    assert_eq!(pdf_pages(&response.body), 1);
}
