//! What a running deployment is, as it says of itself: the build it runs, its state root, the Argus
//! runtime installed (read from the runtime's own venv, never from configuration) and where Argus's
//! backend setting came from. `serve` publishes it in `health` (`deployment`); `qualify
//! --deployment` reads it from there for the §25 report's deployment part, beside its own build,
//! so "the SHA /health reports" is the running daemon's word, not the report's.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A build: the package version and the commit it was built from (`unknown` outside a checkout),
/// and, where the checkout could tell (build.rs), its branch, the base it forked from and the files
/// it added, changed and deleted since. Older builds said none of these: absent reads as `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    pub version: String,
    pub commit: String,
    #[serde(default)]
    pub branch: Option<String>,
    /// The base commit (`git merge-base` of HEAD and the base ref) and the ref it was found from.
    #[serde(default)]
    pub base: Option<BaseCommit>,
    #[serde(default)]
    pub files: Option<FilesChanged>,
}

impl Build {
    /// This build as reports and backups name their maker: `argus-supervisor <version> (commit
    /// <commit>)`.
    pub fn tool(&self) -> String {
        format!("argus-supervisor {} (commit {})", self.version, self.commit)
    }
}

/// The commit a build's branch forked from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseCommit {
    pub commit: String,
    /// The ref it was taken from (`ARGUS_BASE_REF` at build time, else `origin/main`).
    pub of: String,
}

/// The files a build changed since its base: counts, and the first names of each kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesChanged {
    pub added: u32,
    pub changed: u32,
    pub deleted: u32,
    /// At most [`FilesChanged::NAMED`] paths, in `git diff --name-status` order.
    pub named: Vec<String>,
}

impl FilesChanged {
    /// How many paths a build names (the counts say the rest).
    pub const NAMED: usize = 30;

    /// From `git diff --name-status` lines (`A\tpath`, `M\tpath`, `R100\told\tnew`, ...).
    pub fn from_name_status(text: &str) -> FilesChanged {
        let mut f = FilesChanged::default();
        for line in text.lines() {
            let mut parts = line.split('\t');
            let (Some(kind), Some(first)) = (parts.next(), parts.next()) else {
                continue;
            };
            let path = parts.next().unwrap_or(first);
            match kind.chars().next() {
                Some('A' | 'C') => f.added += 1,
                Some('D') => f.deleted += 1,
                Some(_) => f.changed += 1,
                None => continue,
            }
            if f.named.len() < Self::NAMED {
                f.named.push(path.to_string());
            }
        }
        f
    }

    pub fn total(&self) -> u32 {
        self.added + self.changed + self.deleted
    }
}

impl Build {
    /// A build that does not know its commit (a library caller, a test).
    pub fn unknown() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").into(),
            commit: "unknown".into(),
            branch: None,
            base: None,
            files: None,
        }
    }
}

/// How Foreman is wired into this deployment (§25 "integration mode").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForemanIntegration {
    /// Not enabled: Argus decides without its advice.
    Off,
    /// Enabled without an executable: never consulted (said at start).
    EnabledWithoutExecutable,
    /// An advisory gate: a subprocess consulted with reduced evidence, whose directive can at most
    /// wake Argus; it acts on nothing and reaches no remote.
    AdvisoryGate,
}

impl ForemanIntegration {
    pub fn of(enabled: bool, executable: bool) -> ForemanIntegration {
        match (enabled, executable) {
            (false, _) => ForemanIntegration::Off,
            (true, false) => ForemanIntegration::EnabledWithoutExecutable,
            (true, true) => ForemanIntegration::AdvisoryGate,
        }
    }

    pub fn says(self) -> &'static str {
        match self {
            ForemanIntegration::Off => "off: Argus decides without Foreman's advice",
            ForemanIntegration::EnabledWithoutExecutable => {
                "enabled without an executable (ARGUS_SUPERVISOR_FOREMAN_BIN): never consulted"
            }
            ForemanIntegration::AdvisoryGate => {
                "advisory gate: a subprocess given reduced evidence at decision boundaries; its directive can at most wake Argus, never act or reach OpenTraining"
            }
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
    /// The Argus runtime's executable as configured, and the home it is given (Argus's
    /// persistent state root). Absent from older builds.
    #[serde(default)]
    pub argus_executable: Option<String>,
    #[serde(default)]
    pub argus_home: Option<String>,
    #[serde(default)]
    pub foreman_integration: Option<ForemanIntegration>,
    /// The heartbeat's period, and the significant event classes surfaced (nothing else is).
    #[serde(default)]
    pub heartbeat_seconds: Option<u64>,
    #[serde(default)]
    pub event_classes: Vec<String>,
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
    fn the_files_changed_are_counted_by_kind_and_named_up_to_the_bound() {
        let text = "A\tnew.rs\nM\tsrc/a.rs\nD\told.rs\nR087\tx.rs\ty.rs\nT\tlink\n\nbad line\n";
        let f = FilesChanged::from_name_status(text);
        assert_eq!((f.added, f.changed, f.deleted), (1, 3, 1));
        assert_eq!(f.named, ["new.rs", "src/a.rs", "old.rs", "y.rs", "link"]);
        let many: String = (0..40).map(|i| format!("M\tf{i}\n")).collect();
        let f = FilesChanged::from_name_status(&many);
        assert_eq!((f.changed, f.named.len()), (40, FilesChanged::NAMED));
    }

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
