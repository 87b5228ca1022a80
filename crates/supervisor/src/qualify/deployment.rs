//! The §25 report's deployment part: this build beside what the running deployment says of itself
//! in its `health` (`deployment`, `foreman_runtime`), read over its API — never from this build's
//! own word. A field that cannot be known here says why.

use crate::api::client::Client;
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
    /// The heartbeat as the deployment has run it so far (`None`: not read).
    pub heartbeat: Option<HeartbeatSeen>,
    /// `--test-results`: the test run's record (scripts/test.sh writes it), or why it is not known.
    pub tests: Result<TestResults, String>,
    /// `--image-build`: the image build's record (scripts/images.sh writes it), or why not known.
    pub image: Result<ImageBuild, String>,
}

/// The heartbeat as the deployment's `health` says it ran: ticks, the decision boundaries among
/// what it saw, and how often Argus (the one model) was woken.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HeartbeatSeen {
    pub seconds: f64,
    pub ticks: u64,
    #[serde(default)]
    pub decision_points: Option<u64>,
    /// `None`: no Argus attached (the operator decides at each boundary).
    #[serde(default)]
    pub argus_wakes: Option<u64>,
}

/// Counts of one kind of test, as the test runner printed them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

/// A test run's record: what scripts/test.sh writes when the run ends (`ARGUS_TEST_RESULTS`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TestResults {
    /// The commit the tests ran on.
    pub commit: String,
    pub finished_at: String,
    /// Tests inside the crates (`cargo test`'s unittests and doc-tests).
    pub unit: TestCounts,
    /// Tests that start processes, servers and neighbours (`cargo test`'s tests/ binaries).
    pub integration: TestCounts,
    /// The OpenOperator plugin's tests under the real OpenOperator (pytest).
    pub openoperator: TestCounts,
    /// The runner's exit code (0: all passed).
    pub exit_code: i32,
}

/// One image as built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ImageBuilt {
    pub name: String,
    pub id: String,
    pub size_bytes: u64,
    pub build_seconds: u64,
}

/// An image build's record: what scripts/images.sh writes once both images are built and their
/// container checks passed (`ARGUS_IMAGE_RESULTS`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ImageBuild {
    pub commit: String,
    pub finished_at: String,
    pub images: Vec<ImageBuilt>,
    /// Whether the container checks (tests/images/) passed on them.
    pub checks_passed: bool,
}

/// A record file named on the command line: read whole (bounded), or why not.
pub fn record<T: serde::de::DeserializeOwned>(
    path: Option<&Path>,
    flag: &str,
    writer: &str,
) -> Result<T, String> {
    let Some(path) = path else {
        return Err(format!("no record was named ({flag}; {writer} writes one)"));
    };
    let bytes = match std::fs::metadata(path) {
        Ok(m) if m.len() > 1 << 20 => return Err(format!("{} is over 1 MiB", path.display())),
        Ok(_) => {
            std::fs::read(path).map_err(|e| format!("{} cannot be read: {e}", path.display()))?
        }
        Err(e) => return Err(format!("{} cannot be read: {e}", path.display())),
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not such a record: {e}", path.display()))
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
            heartbeat: None,
            tests: Err("not read".into()),
            image: Err("not read".into()),
        }
    }

    /// The build §25's branch, base and files are told of: the deployment's when it said, else
    /// this report's, and which it is.
    pub fn told_build(&self) -> (&Build, &'static str) {
        match &self.deployed {
            Some(d) => (&d.build, "the deployment's build"),
            None => (&self.build, "this report's build"),
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
/// [`Client::of_root`] finds it), from its `health` read whole.
pub async fn read(base: &str, home: &Path, build: Build) -> DeploymentPart {
    let health = match Client::of_root(base, home) {
        Ok(api) => api.health().await,
        Err(e) => Err(e),
    };
    match health {
        Ok(h) => match h.deployment {
            Some(deployed) => DeploymentPart {
                build,
                deployed: Some(deployed),
                foreman_runtime: h.foreman_runtime.map(|f| ForemanInstalled {
                    foreman_core: f.foreman_core,
                    sha256: f.sha256,
                }),
                unknown: None,
                heartbeat: Some(HeartbeatSeen {
                    seconds: h.heartbeat.seconds,
                    ticks: h.heartbeat.ticks,
                    decision_points: Some(h.heartbeat.decision_points),
                    argus_wakes: h.argus_wakes,
                }),
                tests: Err("not read".into()),
                image: Err("not read".into()),
            },
            None => DeploymentPart::not_read(
                build,
                "its health says nothing of its deployment (it is not a `serve`)",
            ),
        },
        Err(why) => DeploymentPart::not_read(build, &why),
    }
}
