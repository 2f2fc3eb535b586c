//! TLS for `-p` (docs/compatibility.md#analyze-server): the certificate and key given with
//! `-c/-e` (PEM), or a self-signed certificate for `localhost` generated in
//! process with rcgen, where the original runs the `openssl` binary.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Builds the server TLS configuration from `-c`/`-e`, printing the
/// original's messages to `out`. The checks and messages follow the
/// original's order: nothing given → generate; one missing → `... is
/// missing`; a path that is not a file → `... does not exist`.
pub fn server_config(
    certificate: Option<&Path>,
    key: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let (certs, key) = match (certificate, key) {
        (None, None) => {
            let _ = writeln!(out, "No certificate or private key is provided.");
            let _ = writeln!(out, "Generating a self-signed certificate...");
            let pair = self_signed()?;
            let _ = writeln!(
                out,
                "Self-signed certificate and private key have been generated."
            );
            pair
        }
        (None, Some(_)) => bail!("Certificate file is missing"),
        (Some(_), None) => bail!("Private key file is missing"),
        (Some(cert_path), Some(key_path)) => {
            for (what, path) in [("Certificate", cert_path), ("Private key", key_path)] {
                if path.is_dir() {
                    bail!("{what} file {} is a directory", path.display());
                }
                if !path.is_file() {
                    bail!("{what} file {} does not exist", path.display());
                }
            }
            (read_certificates(cert_path)?, read_key(key_path)?)
        }
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS set-up failed")?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("the certificate does not match the private key or is not usable")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A fresh self-signed certificate for `localhost` / `127.0.0.1`, kept in
/// memory only (nothing is written to disk).
pub fn self_signed() -> anyhow::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .context("Error occurred while generating self-signed certificate")?;
    let cert = generated.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    Ok((vec![cert], key))
}

fn read_certificates(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let bytes = unitrace_core::whole_file::read_capped(
        path,
        unitrace_core::whole_file::MAX_SMALL_FILE_BYTES,
        "PEM certificate file",
    )?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{}: not a PEM certificate file: {e:?}", path.display()))?;
    if certs.is_empty() {
        bail!("{}: no PEM certificate in the file", path.display());
    }
    Ok(certs)
}

fn read_key(path: &Path) -> anyhow::Result<PrivateKeyDer<'static>> {
    let bytes = unitrace_core::whole_file::read_capped(
        path,
        unitrace_core::whole_file::MAX_SMALL_FILE_BYTES,
        "PEM private key file",
    )?;
    PrivateKeyDer::from_pem_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: no PEM private key in the file: {e:?}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_for_half_given_or_missing_files() {
        let mut out = Vec::new();
        let err = server_config(Some(Path::new("c.pem")), None, &mut out).unwrap_err();
        assert_eq!(err.to_string(), "Private key file is missing");
        let err = server_config(None, Some(Path::new("k.pem")), &mut out).unwrap_err();
        assert_eq!(err.to_string(), "Certificate file is missing");
        let err = server_config(
            Some(Path::new("/nonexistent/c.pem")),
            Some(Path::new("/nonexistent/k.pem")),
            &mut out,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Certificate file /nonexistent/c.pem does not exist"
        );
        assert!(out.is_empty());
    }

    #[test]
    fn generates_a_usable_self_signed_certificate() {
        let mut out = Vec::new();
        server_config(None, None, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "No certificate or private key is provided.\nGenerating a self-signed certificate...\nSelf-signed certificate and private key have been generated.\n"
        );
    }

    #[test]
    fn loads_pem_files_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let cert = dir.path().join("c.pem");
        let key = dir.path().join("k.pem");
        std::fs::write(&cert, generated.cert.pem()).unwrap();
        std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
        server_config(Some(&cert), Some(&key), &mut Vec::new()).unwrap();
        std::fs::write(&key, "not a key").unwrap();
        let err = server_config(Some(&cert), Some(&key), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("no PEM private key"), "{err}");
    }
}
