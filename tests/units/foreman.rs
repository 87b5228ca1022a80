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
        steerable: false,
        previous_directive: None,
        steers: 0,
    }
}

fn foreman(bin: PathBuf) -> Foreman {
    Foreman::new(bin, Duration::from_millis(800), vec![])
}

#[rstest]
#[case::continue_("CONTINUE", Hint::NoWake)]
#[case::start_worker("START_WORKER", Hint::WakePlanner)]
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
    let missing = Foreman::new(
        PathBuf::from("/nonexistent/foreman"),
        Duration::from_secs(1),
        vec![],
    );
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

/// The gate kept alive (`--serve`): one process for many assessments; started again after it died
/// or hung, and each failure is an error, never a directive.
#[tokio::test]
async fn a_kept_gate_process_serves_many_assessments_and_is_started_again_when_it_dies_or_hangs() {
    let (bin, dir) = script(
        "echo $$ >> \"$(dirname \"$0\")/starts\"\n\
         [ \"$1\" = --serve ] || exit 2\n\
         echo '{\"foreman_core\": \"0.5.1\", \"sha256\": null}'\n\
         n=0\n\
         while read -r line; do\n\
           n=$((n+1))\n\
           [ -f \"$(dirname \"$0\")/die\" ] && [ $n -eq 3 ] && exit 1\n\
           [ -f \"$(dirname \"$0\")/hang\" ] && [ $n -eq 1 ] && sleep 30\n\
           echo '{\"action\": \"CONTINUE\", \"reason\": \"r\", \"confidence\": null}'\n\
         done",
    );
    let starts = || {
        std::fs::read_to_string(dir.join("starts"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let f = foreman(bin).keep_alive();
    std::fs::write(dir.join("die"), "").expect("die");
    for _ in 0..2 {
        assert_eq!(
            f.assess(&observation()).await.map(|d| d.action),
            Ok(ForemanAction::Continue)
        );
    }
    assert_eq!(starts(), 1, "one process for both");
    // Its third line makes it exit: an error, and the next assessment starts it again.
    assert_eq!(
        f.assess(&observation()).await.err(),
        Some(ForemanError::Ended)
    );
    std::fs::remove_file(dir.join("die")).expect("die");
    std::fs::write(dir.join("hang"), "").expect("hang");
    // Hangs on its first line: a timeout; the process is killed and a new one started.
    assert_eq!(
        f.assess(&observation()).await.err(),
        Some(ForemanError::Timeout)
    );
    std::fs::remove_file(dir.join("hang")).expect("hang");
    assert_eq!(
        f.assess(&observation()).await.map(|d| d.action),
        Ok(ForemanAction::Continue)
    );
    assert_eq!(starts(), 3);
}
