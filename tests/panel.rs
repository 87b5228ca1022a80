//! The browser panel, driven as an operator would in a real headless Chromium (Debian's `chromium`
//! and `chromium-driver`, which `scripts/test.sh` installs), against `serve` on the simulated
//! remote with its `injection` fault armed (and the fake Argus, its Reviewer's verdict scripted):
//! a wrong token, the campaign list, a campaign's page,
//! claim, submit, the state highlight moving over the diagram, the feed growing, an
//! `input-required` question answered, the finished attempt accepted, the health page. The
//! injected markup must show as text and never run. Screenshots of each page are saved under the
//! test's temp dir (`CARGO_TARGET_TMPDIR`) and their paths printed.

#[path = "support/mod.rs"]
mod support;
use support::procs;

use fantoccini::{Client, ClientBuilder, Locator};
use procs::{free_port, spawn_sim, wait_for, Kill};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SIM_TOKEN: &str = "panel-sim-token";
const API_TOKEN: &str = "panel-api-token-7f3e";

fn chromedriver() -> PathBuf {
    let path = PathBuf::from(
        std::env::var("ARGUS_CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into()),
    );
    assert!(
        path.exists(),
        "{} not found: run scripts/test.sh (it installs Debian's chromium and chromium-driver)",
        path.display()
    );
    path
}

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.expect("script")
}

/// Wait until `script` returns something `ok` accepts; returns it.
async fn until(c: &Client, what: &str, script: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let v = js(c, script).await;
        if ok(&v) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: last {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Wait until the text of the element `id` contains every one of `needles`; returns the text.
async fn text_with(c: &Client, id: &str, needles: &[&str]) -> String {
    let script =
        format!("const e = document.getElementById('{id}'); return e ? e.textContent : null;");
    let v = until(c, &format!("#{id} to show {needles:?}"), &script, |v| {
        v.as_str()
            .is_some_and(|t| needles.iter().all(|n| t.contains(n)))
    })
    .await;
    v.as_str().unwrap_or_default().to_string()
}

/// Whether the control `id` is enabled now (false while it does not exist).
async fn enabled(c: &Client, id: &str) -> bool {
    js(
        c,
        &format!("const e = document.getElementById('{id}'); return e ? !e.disabled : false;"),
    )
    .await
        == true
}

/// Wait until the control `id` is enabled.
async fn until_enabled(c: &Client, id: &str) {
    let script =
        format!("const e = document.getElementById('{id}'); return e ? !e.disabled : null;");
    until(c, &format!("#{id} to be enabled"), &script, |v| v == true).await;
}

async fn current_state(c: &Client, want: &str) {
    until(
        c,
        &format!("the diagram to show {want}"),
        "const d = document.getElementById('diagram'); return d ? (d.dataset.current || null) : null;",
        |v| v == want,
    )
    .await;
    // The highlight is on the node of that name, and only there.
    let highlighted = js(
        c,
        "return Array.from(document.querySelectorAll('#diagram g.node.current title')).map(t => t.textContent);",
    )
    .await;
    assert_eq!(highlighted, json!([want]), "one node highlighted");
}

/// Whether the current state's node lies inside the browser's viewport (what the operator sees
/// without scrolling), and the node's rectangle.
async fn current_node_in_view(c: &Client) -> (bool, Value) {
    let r = js(
        c,
        "const g = document.querySelector('#diagram g.node.current'); if (!g) return null; \
         const r = g.getBoundingClientRect(); \
         return {top: r.top, left: r.left, bottom: r.bottom, right: r.right, h: window.innerHeight, w: window.innerWidth};",
    )
    .await;
    let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    let inside =
        f("top") >= 0.0 && f("left") >= 0.0 && f("bottom") <= f("h") && f("right") <= f("w");
    (inside, r)
}

async fn shot(c: &Client, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("panel-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, c.screenshot().await.expect("screenshot")).expect("write screenshot");
    println!("screenshot: {}", path.display());
    path
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

async fn type_into(c: &Client, css: &str, text: &str) {
    let e = c.find(Locator::Css(css)).await.expect("field");
    e.clear().await.expect("clear");
    e.send_keys(text).await.expect("type");
}

fn feed_count_script() -> &'static str {
    "return document.querySelectorAll('#feed li.feed-line').length;"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_drives_a_campaign_to_acceptance_in_the_panel() {
    let driver_bin = chromedriver();
    let (_sim, sim_url) = spawn_sim("127.0.0.1:0", "input-required", SIM_TOKEN, [] as [&str; 0]);
    let http = reqwest::Client::new();
    http.post(format!("{sim_url}_sim/faults"))
        .bearer_auth(SIM_TOKEN)
        .json(&json!({"kind": "injection"}))
        .send()
        .await
        .expect("arm injection");
    let home = std::env::temp_dir().join(format!("argus-panel-{}", uuid::Uuid::new_v4()));
    // Argus is the fake that speaks the real server's shapes, its status scripted: a Reviewer's
    // `continue` in its journal (as real Argus writes a settled mission), which claims nothing.
    let argus_home = home.join("argus-home");
    std::fs::create_dir_all(&argus_home).expect("argus home");
    std::fs::write(
        argus_home.join("status.json"),
        json!({"journal": [{"id": "b-1", "ts": 1.0, "kind": "mission_complete", "title": "Review", "summary": "<b>not markup</b>", "extra": {"item_id": "b-1", "outcome": {"review_status": "continue"}}}]}).to_string(),
    )
    .expect("argus status");
    let argus = home.join("argus-plugin-server");
    procs::executable(
        &argus,
        &format!(
            "exec {}/mcp-1.30.0/bin/python {}/tests/interop/servers/fake_argus.py \"$@\"",
            std::env::var("ARGUS_INTEROP_VENVS")
                .expect("ARGUS_INTEROP_VENVS is not set: run scripts/test.sh"),
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    let port = free_port();
    let _serve = Kill(
        procs::serve_command(&sim_url, SIM_TOKEN, API_TOKEN, &home, port)
            .arg("--allow-insecure-loopback")
            .env("ARGUS_SUPERVISOR_ARGUS_BIN", &argus)
            .env("ARGUS_SUPERVISOR_ARGUS_HOME", &argus_home)
            .env("ARGUS_SUPERVISOR_ARGUS_POLL_SECONDS", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve"),
    );
    let base = format!("http://127.0.0.1:{port}/api/plugins/argus-supervisor");
    wait_for("serve to answer", 30, || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    // The panel's assets: public, no data, and the headers of a page that shows untrusted text.
    let page = http.get(format!("{base}/ui/")).send().await.expect("ui");
    assert_eq!(page.status(), 200);
    let csp = page
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    for rule in [
        "default-src 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
    ] {
        assert!(csp.contains(rule), "{csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    let html = page.text().await.expect("html");
    assert!(
        !html.contains(API_TOKEN) && !html.contains("<script>"),
        "no inline script, no data"
    );

    let driver_port = free_port();
    let _driver = Kill(
        Command::new(driver_bin)
            .arg(format!("--port={driver_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver"),
    );
    wait_for("chromedriver", 30, || {
        std::net::TcpStream::connect(("127.0.0.1", driver_port)).is_ok()
    });
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": std::env::var("ARGUS_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1100"],
        }),
    );
    let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .expect("connect to chromedriver");

    c.goto(&format!("{base}/ui/"))
        .await
        .expect("open the panel");
    // The trap: any script the injected markup managed to run, and any blocked attempt, is recorded.
    js(
        &c,
        "window.__argus_violations = []; document.addEventListener('securitypolicyviolation', e => window.__argus_violations.push(e.violatedDirective)); return true;",
    )
    .await;

    // A wrong token: a clear message, the login form again.
    type_into(&c, "#token", "not-the-token").await;
    click(&c, "#login-submit").await;
    text_with(&c, "notice", &["token was refused"]).await;
    assert_eq!(
        js(&c, "return document.getElementById('login').hidden;").await,
        false
    );
    let mut shots = vec![shot(&c, "1-wrong-token").await];
    // Never in a URL or a cookie.
    assert!(!c
        .current_url()
        .await
        .expect("url")
        .as_str()
        .contains("token"));

    type_into(&c, "#token", API_TOKEN).await;
    click(&c, "#login-submit").await;
    // A campaign to look at, started from the panel's own form; a refused one is said as refused.
    type_into(&c, "#observe-id", "bad/id").await;
    type_into(&c, "#observe-objective", "Make the evaluation pass").await;
    click(&c, "#observe-send").await;
    text_with(&c, "observe-outcome", &["observe → 4"]).await;
    assert_eq!(
        js(
            &c,
            "return document.getElementById('observe-outcome').className;"
        )
        .await,
        "refused"
    );
    type_into(&c, "#observe-id", "p1").await;
    click(&c, "#observe-send").await;
    text_with(&c, "observe-outcome", &["observe → 200"]).await;
    until(
        &c,
        "the campaign list",
        "const r = document.querySelector('tr[data-campaign=\"p1\"]'); return r ? r.textContent : null;",
        |v| v.as_str().is_some_and(|t| t.contains("Make the evaluation pass")),
    )
    .await;
    assert_eq!(js(&c, "return document.cookie;").await, "");
    assert!(!c
        .current_url()
        .await
        .expect("url")
        .as_str()
        .contains(API_TOKEN));
    // A state badge; the filter hides what does not match and shows it again.
    assert!(js(
        &c,
        "return document.querySelectorAll('tr[data-campaign] .badge.state-observing').length;"
    )
    .await
    .as_u64()
    .is_some_and(|n| n == 1));
    type_into(&c, "#filter", "no such campaign").await;
    until(
        &c,
        "the filter to hide p1",
        "return document.querySelectorAll('tr[data-campaign]').length;",
        |v| v == 0,
    )
    .await;
    type_into(&c, "#filter", "evaluation").await;
    until(
        &c,
        "the filter to show p1",
        "return document.querySelectorAll('tr[data-campaign]').length;",
        |v| v == 1,
    )
    .await;
    shots.push(shot(&c, "2-campaigns").await);

    click(&c, "tr[data-campaign=\"p1\"] a").await;
    // Never the complete graph: the overview (superstates) and one detail view.
    until(
        &c,
        "the detail view",
        "return document.querySelectorAll('#diagram g.node').length;",
        |v| v.as_u64().is_some_and(|n| (4..19).contains(&n)),
    )
    .await;
    current_state(&c, "Detached").await;
    assert_eq!(
        js(&c, "return Array.from(document.querySelectorAll('#overview g.node.current title')).map(t => t.textContent);").await,
        json!(["Observing"]),
        "the overview shows the superstate"
    );
    let (inside, rect) = current_node_in_view(&c).await;
    assert!(inside, "the current state is off-screen on load: {rect}");
    // Buttons follow the machine: claim is allowed here, accept is not.
    until_enabled(&c, "action-claim").await;
    assert!(!enabled(&c, "action-accept").await);

    click(&c, "#action-claim").await;
    current_state(&c, "Ready").await;
    text_with(&c, "outcome", &["claim → 200"]).await;
    let feed_before = js(&c, feed_count_script()).await.as_u64().unwrap_or(0);
    type_into(
        &c,
        "#action-text",
        "Train and evaluate; stop for any question.",
    )
    .await;
    click(&c, "#action-submit").await;
    // Running, then the remote asks: the highlight moves and the path is drawn over the diagram.
    current_state(&c, "AwaitingInput").await;
    let visited = js(
        &c,
        "return Array.from(document.querySelectorAll('#diagram g.node.visited title')).map(t => t.textContent);",
    )
    .await;
    for s in [
        "Detached",
        "Claiming",
        "Ready",
        "Submitting",
        "Running",
        "AwaitingInput",
    ] {
        assert!(
            visited.as_array().is_some_and(|v| v.contains(&json!(s))),
            "{s} not drawn as visited: {visited}"
        );
    }
    assert!(
        js(
            &c,
            "return document.querySelectorAll('#diagram g.edge.taken').length;"
        )
        .await
        .as_u64()
        .is_some_and(|n| n >= 3),
        "the path's edges are drawn"
    );
    until(&c, "the feed to grow", feed_count_script(), |v| {
        v.as_u64().is_some_and(|n| n > feed_before)
    })
    .await;
    let (inside, rect) = current_node_in_view(&c).await;
    assert!(
        inside,
        "the current state is off-screen after the view changed: {rect}"
    );
    assert_eq!(
        js(
            &c,
            "return document.querySelector('#overview g.node.current title').textContent;"
        )
        .await,
        "Controlling"
    );
    // Its path as a timeline, each state with its time.
    let timeline = text_with(
        &c,
        "timeline",
        &["Detached", "Claiming", "Running", "AwaitingInput", "UTC"],
    )
    .await;
    assert!(!timeline.contains("time unknown"), "{timeline}");
    // A destructive action is not sent without confirming: cancel asks, saying what it does (the
    // verb table's row, from the campaign view), and "keep" sends nothing.
    let said = js(&c, "return document.getElementById('outcome').textContent;").await;
    until_enabled(&c, "action-cancel").await;
    assert_eq!(
        js(
            &c,
            "return document.getElementById('action-cancel').className;"
        )
        .await,
        "danger"
    );
    click(&c, "#action-cancel").await;
    text_with(
        &c,
        "confirm",
        &[
            "Really cancel campaign p1?",
            "This will cancel the running attempt's task at OpenTraining. This cannot be undone.",
        ],
    )
    .await;
    shots.push(shot(&c, "3a-confirm-cancel").await);
    click(&c, "#confirm-abort").await;
    until(
        &c,
        "the confirmation to close",
        "return document.getElementById('confirm').hidden;",
        |v| v == true,
    )
    .await;
    assert_eq!(
        js(&c, "return document.getElementById('outcome').textContent;").await,
        said,
        "nothing was sent"
    );
    // The remote's question, in its own words, is pending for the operator, and answering is
    // allowed.
    text_with(&c, "question", &["Two candidate datasets"]).await;
    until_enabled(&c, "answer-send").await;
    // The remote's question was a decision boundary: Argus was woken, and its Reviewer's verdict
    // is on the page.
    text_with(
        &c,
        "campaign-argus",
        &[
            "Argus: reviewer verdict: continue",
            "Reviewer verdict: continue",
        ],
    )
    .await;
    // What the remote asks, with the injected markup, shown literally as untrusted text.
    let said = text_with(&c, "remote-message", &["Two candidate datasets"]).await;
    assert!(
        said.contains("<img src=x onerror=") && said.contains("<script>"),
        "the injected markup appears literally: {said}"
    );
    shots.push(shot(&c, "3-campaign-question").await);

    // An answer larger than the remote accepts is refused here, says so, and the question stays.
    js(
        &c,
        "document.getElementById('answer-text').value = 'x'.repeat(20000); return null;",
    )
    .await;
    click(&c, "#answer-send").await;
    text_with(&c, "outcome", &["answer → 413", "refused here (too_large)"]).await;
    text_with(&c, "question", &["Two candidate datasets"]).await;
    type_into(&c, "#answer-text", "Use the first dataset.").await;
    click(&c, "#answer-send").await;
    current_state(&c, "RemoteTerminalLocalPending").await;
    until_enabled(&c, "action-accept").await;
    assert!(
        !enabled(&c, "action-submit").await,
        "no submit while the attempt waits for a verdict"
    );
    // The ended attempt's answer, as the remote gave it (its artifacts here), literally.
    let answer = text_with(&c, "remote-answer", &["(from its artifacts)"]).await;
    assert!(
        answer.contains("eval_loss=") && answer.contains("<img src=x onerror="),
        "the remote's answer, markup shown literally: {answer}"
    );
    text_with(&c, "evidence-label", &["Evidence of attempt 1 (task "]).await;
    let evidence = text_with(&c, "evidence", &["evaluation-report"]).await;
    // The injected markup (an artifact's text) is shown literally, as text, and inert.
    assert!(
        evidence.contains("<img src=x onerror=") && evidence.contains("<script>"),
        "the injected markup appears literally: {evidence}"
    );
    click(&c, "#action-accept").await;
    current_state(&c, "Accepted").await;
    text_with(&c, "feed", &["Mission complete"]).await;
    shots.push(shot(&c, "4-campaign-accepted").await);

    click(&c, "#nav-health").await;
    text_with(&c, "readiness", &["Ready"]).await;
    let health = text_with(
        &c,
        "health",
        &["remote.dialect", "heartbeat.last_tick_age_seconds"],
    )
    .await;
    assert!(!health.contains(SIM_TOKEN));
    text_with(&c, "status", &["campaigns"]).await;
    shots.push(shot(&c, "5-health").await);

    // Nothing injected ever ran: no marker set, no element made from the markup.
    assert_eq!(
        js(&c, "return window.__argus_pwned === undefined;").await,
        true
    );
    assert_eq!(
        js(
            &c,
            "return document.querySelectorAll('img[src=\"x\"], #view script').length;"
        )
        .await,
        0
    );
    let violations = js(&c, "return window.__argus_violations;").await;
    assert_eq!(
        violations,
        json!([]),
        "nothing even tried to run: {violations}"
    );
    c.close().await.expect("close");

    // The remote saw one claim, one submit, one intervention: the panel's clicks, once each.
    let audit: Value = http
        .get(format!("{sim_url}_sim/audit"))
        .bearer_auth(SIM_TOKEN)
        .send()
        .await
        .expect("audit")
        .json()
        .await
        .expect("json");
    let n = |m: &str| {
        audit["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["method"] == m && e["campaign_id"] == "p1" && e["accepted"] == true)
            .count()
    };
    assert_eq!(n("message/send"), 1);
    assert_eq!(
        n("tasks/cancel"),
        0,
        "the cancel that was not confirmed was never sent"
    );
    assert_eq!(n("campaign/intervene"), 1);
    assert_eq!(audit["counters"]["tasks_per_campaign"]["p1"], 1);
    for s in &shots {
        assert!(
            std::fs::metadata(s).is_ok_and(|m| m.len() > 1_000),
            "{}",
            s.display()
        );
    }
}
