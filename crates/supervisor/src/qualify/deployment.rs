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

/// Read the deployment at `base` (`http(s)://HOST:PORT` or `unix:PATH`; its token as
/// [`crate::cli::Api::of_root`] finds it).
pub async fn read(base: &str, home: &Path, build: Build) -> DeploymentPart {
    let api = match crate::cli::Api::of_root(base, home) {
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
