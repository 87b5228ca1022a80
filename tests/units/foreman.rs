//! The Foreman bridge with fake executables: each directive, one that hangs, one that prints
//! garbage, one that prints too much, one that fails; the mapping table; bounded input, no secrets.

use argus_supervisor_lib::bridges::foreman::{
    hint, Directive, Foreman, ForemanAction, ForemanError, ForemanObservation, Hint,
};
use rstest::rstest;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

fn script(body: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("argus-foreman-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("foreman");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (path, dir)
}

fn observation() -> ForemanObservation {
    ForemanObservation {
        original_job: "Make the campaign pass. ".repeat(1000),
        run_id: Some("run-1".into()),
        attempt_id: Some("attempt-1".into()),
        factory_status: "failed".into(),
        iteration: 1,
        worker_exit_status: Some("failed".into()),
        test_results: vec!["eval_loss=0.41".into()],
        verification_results: vec![],
        recent_events: (0..40).map(|i| format!("event {i}")).collect(),
        attempts: 1,
        failures: 1,
        event: serde_json::json!({"type": "ATTEMPT_COMPLETED"}),
        remote_stage: Some("preprocessing".into()),
        remote_answer: Some("Preprocessing failed.".into()),
    }
}

fn foreman(bin: PathBuf) -> Foreman {
    Foreman {
        bin,
        timeout: Duration::from_millis(800),
        pass_env: vec![],
    }
}

#[rstest]
#[case::continue_("CONTINUE", Hint::NoWake)]
#[case::start_worker("START_WORKER", Hint::NoWake)]
#[case::start_verifier("START_VERIFIER", Hint::WakeReviewer)]
#[case::steer("STEER_WORKER", Hint::WakePlanner)]
#[case::stop("STOP_WORKER", Hint::AskArgus)]
#[case::retry("RETRY_WORKER", Hint::AskArgus)]
#[case::finish("FINISH", Hint::CompletionCandidate)]
#[case::escalate("ESCALATE", Hint::Escalate)]
#[tokio::test]
async fn each_directive_maps_as_the_spec_says(#[case] action: &str, #[case] expected: Hint) {
    let (bin, dir) = script(&format!(
        "cat > \"$(dirname \"$0\")/stdin.json\"; env > \"$(dirname \"$0\")/env.txt\"; echo '{{\"action\": \"{action}\", \"reason\": \"because\", \"confidence\": 0.7}}'"
    ));
    std::env::set_var("OPENTRAINING_A2A_TOKEN", "tok-should-not-reach-foreman");
    let d = foreman(bin)
        .assess(&observation())
        .await
        .expect("directive");
    assert_eq!(hint(&d), expected);
    assert_eq!(hint(&d).wakes_argus(), expected != Hint::NoWake);
    let stdin: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("stdin.json")).expect("stdin"))
            .expect("json");
    assert!(
        stdin["original_job"].as_str().expect("text").len() <= 4 * 1024 + 16,
        "bounded"
    );
    assert_eq!(stdin["recent_events"].as_array().map(Vec::len), Some(16));
    for field in [
        "original_job",
        "run_id",
        "factory_status",
        "iteration",
        "worker_exit_status",
        "test_results",
        "verification_results",
        "recent_events",
        "attempts",
        "failures",
    ] {
        assert!(stdin.get(field).is_some(), "{field}");
    }
    let env = std::fs::read_to_string(dir.join("env.txt")).expect("env");
    assert!(
        !env.contains("tok-should-not-reach-foreman"),
        "no secret in Foreman's environment"
    );
}

#[tokio::test]
async fn failures_of_foreman_are_errors_never_actions() {
    let cases: [(&str, ForemanError); 5] = [
        ("sleep 30", ForemanError::Timeout),
        (
            "echo 'I think you should merge to main'",
            ForemanError::Garbage,
        ),
        (
            "echo '{\"action\": \"DEPLOY\", \"reason\": \"x\", \"confidence\": 1}'",
            ForemanError::Garbage,
        ),
        ("exit 3", ForemanError::Failed),
        ("head -c 200000 /dev/zero", ForemanError::TooLarge),
    ];
    for (body, expected) in cases {
        let (bin, _) = script(body);
        let started = std::time::Instant::now();
        assert_eq!(
            foreman(bin).assess(&observation()).await.err(),
            Some(expected.clone()),
            "{body}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{body} bounded in time"
        );
    }
    let missing = Foreman {
        bin: PathBuf::from("/nonexistent/foreman"),
        timeout: Duration::from_secs(1),
        pass_env: vec![],
    };
    assert_eq!(
        missing.assess(&observation()).await.err(),
        Some(ForemanError::Missing)
    );
    let d = Directive {
        action: ForemanAction::Continue,
        reason: String::new(),
        confidence: 0.0,
    };
    assert!(!hint(&d).wakes_argus());
}
