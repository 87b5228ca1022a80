//! The §25 report's deployment part: this build beside what the running deployment says of itself
//! in its `health` (`deployment`, `foreman_runtime`), read over its API — never from this build's
//! own word. A field that cannot be known here says why.

use crate::deployment::{Build, Deployment};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Serialize)]
pub struct DeploymentPart {
    /// The build that made this report.
    pub build: Build,
    /// What the running deployment's `health` says (`None`: see `unknown`).
    pub deployed: Option<Deployment>,
    /// What the Foreman runtime reports of itself there (`None`: off, or not answering).
    pub foreman_runtime: Option<ForemanInstalled>,
    /// Why the deployment is not known here.
    pub unknown: Option<String>,
}

/// Foreman as its runtime reports itself in the deployment's `health` (`foreman_runtime`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ForemanInstalled {
    pub foreman_core: String,
    pub sha256: Option<String>,
}

impl DeploymentPart {
    pub fn not_read(build: Build, why: &str) -> DeploymentPart {
        DeploymentPart {
            build,
            deployed: None,
            foreman_runtime: None,
            unknown: Some(why.into()),
        }
    }

    /// Whether the deployment runs this build's commit (`None`: not known).
    pub fn matches(&self) -> Option<bool> {
        let deployed = self.deployed.as_ref()?;
        if self.build.commit == "unknown" || deployed.build.commit == "unknown" {
            return None;
        }
        Some(deployed.build.commit == self.build.commit)
    }
}

/// Read the deployment at `base` (`http(s)://HOST:PORT` or `unix:PATH`). On a Unix socket the
/// token is the one the daemon made and keeps in `home` (as the OpenOperator plugin runs it: a
/// token in the host's environment is not the daemon's); otherwise ARGUS_SUPERVISOR_API_TOKEN.
pub async fn read(base: &str, home: &Path, build: Build) -> DeploymentPart {
    let kept = || {
        std::fs::read_to_string(home.join(crate::daemon::TOKEN_FILE))
            .ok()
            .map(|t| crate::security::Secret::new(t.trim()))
    };
    let token = match base.starts_with("unix:") {
        true => kept().or_else(|| crate::security::Secret::from_env("ARGUS_SUPERVISOR_API_TOKEN")),
        false => crate::security::Secret::from_env("ARGUS_SUPERVISOR_API_TOKEN"),
    };
    let api = match crate::cli::Api::with_token(base, token) {
        Ok(a) => a,
        Err(e) => return DeploymentPart::not_read(build, &e),
    };
    let health = match api.call("/health", None).await {
        Ok((_, v)) => v,
        Err((_, why)) => return DeploymentPart::not_read(build, &why),
    };
    match serde_json::from_value::<Deployment>(health["deployment"].clone()) {
        Ok(deployed) => DeploymentPart {
            build,
            deployed: Some(deployed),
            foreman_runtime: serde_json::from_value(health["foreman_runtime"].clone()).ok(),
            unknown: None,
        },
        Err(_) => DeploymentPart::not_read(
            build,
            "its health says nothing of its deployment (a build older than this one, or the token was refused)",
        ),
    }
}
