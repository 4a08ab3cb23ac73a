//! `--web-config FILE`: the YAML file of Prometheus' exporter toolkit, so
//! that operators reuse what they wrote for `node_exporter`: TLS certificate
//! and key (`tls_server_config`), and basic-auth users with bcrypt hashes
//! (`basic_auth_users`). Unknown keys are refused, as the toolkit refuses
//! them; keys the toolkit knows and noisetop does not implement are refused
//! by name rather than silently ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The parsed file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebConfig {
    /// TLS certificate chain and key, PEM files.
    pub tls: Option<Tls>,
    /// User name → bcrypt hash.
    pub users: BTreeMap<String, String>,
}

/// Certificate and key files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// PEM certificate chain.
    pub cert_file: PathBuf,
    /// PEM private key.
    pub key_file: PathBuf,
    /// Refuse TLS 1.2 (`min_version: TLS13`).
    pub tls13_only: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tls_server_config: Option<TlsFile>,
    http_server_config: Option<serde_norway::Value>,
    basic_auth_users: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: Option<String>,
    key_file: Option<String>,
    min_version: Option<String>,
    cert: Option<serde_norway::Value>,
    key: Option<serde_norway::Value>,
    client_auth_type: Option<String>,
    client_ca_file: Option<serde_norway::Value>,
    client_ca: Option<serde_norway::Value>,
    client_allowed_sans: Option<serde_norway::Value>,
    max_version: Option<serde_norway::Value>,
    cipher_suites: Option<serde_norway::Value>,
    prefer_server_cipher_suites: Option<serde_norway::Value>,
    curve_preferences: Option<serde_norway::Value>,
}

/// Why a web config's text is refused.
#[derive(Debug, thiserror::Error)]
pub enum WebConfigError {
    /// It is not YAML of the known keys.
    #[error("{0}")]
    Yaml(serde_norway::Error),
    /// `http_server_config` (HTTP/2 and headers) is not implemented.
    #[error("http_server_config is not supported by noisetop")]
    HttpServerConfig,
    /// A user name with a ':', which basic auth cannot carry.
    #[error("basic_auth_users: {0:?}: a user name cannot hold ':'")]
    ColonInUser(String),
    /// A password hash bcrypt cannot read, which would refuse every password.
    #[error("basic_auth_users: {0}: not a bcrypt hash (make one with `htpasswd -nBC 10 {0}`)")]
    NotBcrypt(String),
    /// A TLS key the exporter does not implement.
    #[error(
        "tls_server_config.{0} is not supported by noisetop (cert_file, key_file and min_version are)"
    )]
    UnsupportedTls(&'static str),
    /// TLS without a certificate or a key.
    #[error("tls_server_config needs both cert_file and key_file")]
    CertAndKey,
    /// A `min_version` other than TLS12 and TLS13.
    #[error("tls_server_config.min_version {0}: TLS12 or TLS13")]
    MinVersion(String),
}

/// Why a web config file cannot be used: it cannot be read, or is refused.
pub type WebConfigFileError = crate::base::FileError<WebConfigError>;

/// Reads and checks a web config file; relative paths are taken from the
/// file's folder, as the toolkit takes them.
pub fn load(path: &Path) -> Result<WebConfig, WebConfigFileError> {
    let text = std::fs::read_to_string(path).map_err(|err| WebConfigFileError::Unreadable {
        path: path.to_path_buf(),
        err,
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base).map_err(|err| WebConfigFileError::Refused {
        path: path.to_path_buf(),
        err,
    })
}

/// Parses the YAML text of a web config.
pub fn parse(text: &str, base: &Path) -> Result<WebConfig, WebConfigError> {
    let f: File = serde_norway::from_str(text).map_err(WebConfigError::Yaml)?;
    if f.http_server_config.is_some() {
        return Err(WebConfigError::HttpServerConfig);
    }
    let tls = match f.tls_server_config {
        None => None,
        Some(t) => Some(tls(t, base)?),
    };
    let users = f.basic_auth_users.unwrap_or_default();
    for (user, hash) in &users {
        if user.contains(':') {
            return Err(WebConfigError::ColonInUser(user.clone()));
        }
        // a hash bcrypt cannot read would refuse every password: say so now
        if !(hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$"))
            || hash.len() != 60
        {
            return Err(WebConfigError::NotBcrypt(user.clone()));
        }
    }
    Ok(WebConfig { tls, users })
}

fn tls(t: TlsFile, base: &Path) -> Result<Tls, WebConfigError> {
    let unsupported = [
        ("cert", t.cert.is_some()),
        ("key", t.key.is_some()),
        ("client_auth_type", t.client_auth_type.is_some()),
        ("client_ca_file", t.client_ca_file.is_some()),
        ("client_ca", t.client_ca.is_some()),
        ("client_allowed_sans", t.client_allowed_sans.is_some()),
        ("max_version", t.max_version.is_some()),
        ("cipher_suites", t.cipher_suites.is_some()),
        (
            "prefer_server_cipher_suites",
            t.prefer_server_cipher_suites.is_some(),
        ),
        ("curve_preferences", t.curve_preferences.is_some()),
    ];
    if let Some((k, _)) = unsupported.iter().find(|(_, set)| *set) {
        return Err(WebConfigError::UnsupportedTls(k));
    }
    let (Some(cert), Some(key)) = (t.cert_file, t.key_file) else {
        return Err(WebConfigError::CertAndKey);
    };
    let tls13_only = match t.min_version.as_deref() {
        None | Some("TLS12") => false,
        Some("TLS13") => true,
        Some(v) => return Err(WebConfigError::MinVersion(v.to_string())),
    };
    Ok(Tls {
        cert_file: base.join(cert),
        key_file: base.join(key),
        tls13_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";

    #[test]
    fn the_toolkit_format_parses() {
        let c = parse(
            &format!(
                "tls_server_config:\n  cert_file: server.crt\n  key_file: /etc/k.key\n\
                 basic_auth_users:\n  prometheus: {HASH}\n"
            ),
            Path::new("/etc/noisetop"),
        )
        .unwrap();
        assert_eq!(
            c.tls,
            Some(Tls {
                cert_file: "/etc/noisetop/server.crt".into(),
                key_file: "/etc/k.key".into(),
                tls13_only: false
            })
        );
        assert_eq!(c.users.get("prometheus").map(String::as_str), Some(HASH));
        assert_eq!(parse("", Path::new(".")).unwrap(), WebConfig::default());
    }

    #[test]
    fn unknown_unsupported_and_bad_entries_are_refused_by_name() {
        let e = |t: &str| parse(t, Path::new(".")).unwrap_err().to_string();
        assert!(e("tls_server_confg:\n  cert_file: a\n").contains("unknown field"));
        assert!(matches!(
            parse("tls_server_config:\n  cert_file: a\n", Path::new(".")),
            Err(WebConfigError::CertAndKey)
        ));
        assert_eq!(
            e("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS11\n"),
            "tls_server_config.min_version TLS11: TLS12 or TLS13"
        );
        assert_eq!(
            e(
                "basic_auth_users:\n  'a:b': $2y$10$0123456789012345678901234567890123456789012345678901\n"
            ),
            "basic_auth_users: \"a:b\": a user name cannot hold ':'"
        );
        assert!(
            e("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n")
                .contains("client_auth_type is not supported")
        );
        assert!(e("tls_server_config:\n  cert_file: a\n").contains("both cert_file and key_file"));
        assert!(e("basic_auth_users:\n  u: secret\n").contains("not a bcrypt hash"));
        assert!(e("http_server_config:\n  http2: false\n").contains("not supported"));
    }
}
