//! What a running deployment is, as it says of itself: the build it runs, its state root, the Argus
//! runtime installed (read from the runtime's own venv, never from configuration) and where Argus's
//! backend setting came from. `serve` publishes it in `health` (`deployment`); `qualify
//! --deployment` reads it from there for the §25 report's deployment part, beside its own build,
//! so "the SHA /health reports" is the running daemon's word, not the report's.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A build: the package version and the commit it was built from (`unknown` outside a checkout).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    pub version: String,
    pub commit: String,
}

impl Build {
    /// A build that does not know its commit (a library caller, a test).
    pub fn unknown() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").into(),
            commit: "unknown".into(),
        }
    }
}

/// The Argus runtime as installed in its venv: its package's version and, where pip recorded it,
/// the sha256 of the wheel it was installed from (the pin as installed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    pub package: String,
    pub version: String,
    pub wheel_sha256: Option<String>,
}

/// Where Argus's model backend setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendSource {
    /// `--backend` on serve's command line.
    Flag,
    /// `ARGUS_SUPERVISOR_BACKEND`.
    Environment,
    /// Neither: Argus uses its own default.
    ArgusDefault,
}

/// The deployment's part of `health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployment {
    pub build: Build,
    pub state_root: String,
    /// `None`: no Argus runtime configured, or its venv names no argus-skill.
    pub argus_installed: Option<Installed>,
    pub argus_backend: Option<String>,
    pub argus_backend_source: BackendSource,
}

/// The argus-skill package beside `bin` (`<venv>/bin/argus-plugin-server` →
/// `<venv>/lib/python*/site-packages/argus_skill-<version>.dist-info`).
pub fn argus_installed(bin: &Path) -> Option<Installed> {
    let venv = bin.parent()?.parent()?;
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    for python in lib.flatten() {
        let site = python.path().join("site-packages");
        let Ok(entries) = std::fs::read_dir(&site) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(version) = name
                .strip_prefix("argus_skill-")
                .and_then(|v| v.strip_suffix(".dist-info"))
            else {
                continue;
            };
            let wheel_sha256 = std::fs::read(e.path().join("direct_url.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|v| {
                    v["archive_info"]["hashes"]["sha256"]
                        .as_str()
                        .filter(|h| h.len() == 64 && h.bytes().all(|c| c.is_ascii_hexdigit()))
                        .map(str::to_string)
                });
            return Some(Installed {
                package: "argus-skill".into(),
                version: version.to_string(),
                wheel_sha256,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installed_argus_is_read_from_its_venv_and_a_bad_hash_is_not_taken() {
        let venv = std::env::temp_dir().join(format!("argus-venv-{}", uuid::Uuid::new_v4()));
        let info = venv.join("lib/python3.12/site-packages/argus_skill-0.1.2.dist-info");
        std::fs::create_dir_all(&info).expect("dirs");
        std::fs::create_dir_all(venv.join("bin")).expect("bin");
        let bin = venv.join("bin/argus-plugin-server");
        assert_eq!(
            argus_installed(&bin).map(|i| (i.version, i.wheel_sha256)),
            Some(("0.1.2".into(), None))
        );
        let h = "a".repeat(64);
        std::fs::write(
            info.join("direct_url.json"),
            format!(r#"{{"archive_info": {{"hashes": {{"sha256": "{h}"}}}}}}"#),
        )
        .expect("write");
        assert_eq!(argus_installed(&bin).and_then(|i| i.wheel_sha256), Some(h));
        std::fs::write(
            info.join("direct_url.json"),
            r#"{"archive_info": {"hashes": {"sha256": "<script>"}}}"#,
        )
        .expect("write");
        assert_eq!(argus_installed(&bin).and_then(|i| i.wheel_sha256), None);
        assert_eq!(argus_installed(&venv.join("nowhere/bin/x")), None);
        let _ = std::fs::remove_dir_all(&venv);
    }
}
