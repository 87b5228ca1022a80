//! The real Agent Zero as the remote: today's OpenTraining serves Agent Zero's own A2A server
//! (fasta2a 0.5.0 mounted at `/a2a`, the token in the URL path, tasks in memory). This starts it
//! from the vendored snapshot (`vendor/openoperator/`, unpacked by `scripts/test.sh`) as
//! `run_ui.py --dockerized=true` with `A0_SET_a2a_server_enabled=true`, in the venv of its
//! Python 3.12 lock, on a free loopback port.
//!
//! Everything of Agent Zero is real — its HTTP server, login, A2A server, agent loop and task
//! store — except the model behind it: `tests/interop/servers/model_double.py`, a scripted
//! OpenAI-compatible endpoint on loopback (the one double; markers in the task's text decide what
//! the agent answers: `[fail]`, `[slow N]`, `[noisy]`). Agent Zero's `_memory` plugin is switched
//! off (it imports faiss, which the lock leaves out), as `vendor/openoperator/SOURCE.md` says.
//!
//! The token is read as its UI shows it (logged in, `settings_get`'s `mcp_server_token`); the
//! connection URL is built as its UI builds it: `http://HOST:PORT/a2a/t-<token>`.
#![allow(dead_code)]

use super::procs::{free_port, wait_for, Kill};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const LOGIN: &str = "operator";

/// The venv of the vendored Agent Zero's lock, and its unpacked tree (`scripts/test.sh` makes both).
fn openoperator() -> (PathBuf, PathBuf) {
    let python = super::procs::venv_python("openoperator-3fa8481b");
    let tree = super::procs::venv_file("openoperator-3fa8481b-tree", "run_ui.py");
    (python, tree.parent().expect("the tree").to_path_buf())
}

fn stubs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vendor/openoperator/stubs")
}

/// Copy a directory tree (symlinks kept as links).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read tree") {
        let entry = entry.expect("entry");
        let kind = entry.file_type().expect("type");
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path()).expect("link");
            std::os::unix::fs::symlink(link, &target).expect("symlink");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// One Agent Zero serving A2A, with its model double. Killed when dropped.
pub struct AgentZero {
    root: PathBuf,
    python: PathBuf,
    pub port: u16,
    model_port: u16,
    password: String,
    log_path: PathBuf,
    model_log: PathBuf,
    model: Kill,
    proc: Option<Kill>,
    token: Option<String>,
}

impl AgentZero {
    /// Install Agent Zero under `dir` and start it (with its model double) on a free port.
    pub fn start(dir: &Path) -> AgentZero {
        let (python, tree) = openoperator();
        let root = dir.join("agent-zero");
        copy_tree(&tree, &root);
        let memory = root.join("usr/plugins/_memory");
        std::fs::create_dir_all(&memory).expect("mkdir");
        std::fs::write(memory.join(".toggle-0"), "").expect("toggle");
        let model_port = free_port();
        let model_log = dir.join("model-double.jsonl");
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/servers/model_double.py");
        let model = Kill(
            Command::new(&python)
                .arg(script)
                .args(["--port", &model_port.to_string()])
                .arg("--log")
                .arg(&model_log)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("spawn the model double"),
        );
        let mut a0 = AgentZero {
            log_path: dir.join("agent-zero.log"),
            root,
            python,
            port: free_port(),
            model_port,
            password: "password-one".into(),
            model_log,
            model,
            proc: None,
            token: None,
        };
        // A free port can be taken by another process before Agent Zero binds it (tests run side
        // by side): then another port, at most three times.
        for attempt in 0..3 {
            match a0.try_up() {
                Ok(()) => break,
                Err(log) if attempt < 2 && log.contains("address already in use") => {
                    a0.port = free_port();
                }
                Err(log) => panic!("Agent Zero exited:\n{log}"),
            }
        }
        a0
    }

    /// Start `run_ui.py` and wait until it serves; the token is read anew.
    fn up(&mut self) {
        if let Err(log) = self.try_up() {
            panic!("Agent Zero exited:\n{log}");
        }
    }

    /// [`AgentZero::up`], saying instead of panicking when Agent Zero exits: its log's tail.
    fn try_up(&mut self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .expect("log");
        let api_base = format!("http://127.0.0.1:{}/v1", self.model_port);
        let mut cmd = Command::new(&self.python);
        cmd.args([
            "run_ui.py",
            "--port",
            &self.port.to_string(),
            "--host",
            "127.0.0.1",
            "--dockerized=true",
        ])
        .current_dir(&self.root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &self.root)
        .env("PYTHONPATH", stubs())
        // The stubs live in the checkout: no bytecode is written beside them.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("AUTH_LOGIN", LOGIN)
        .env("AUTH_PASSWORD", &self.password)
        .env("A0_SET_a2a_server_enabled", "true")
        .env("API_KEY_OTHER", "scripted")
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log);
        for model in ["chat_model", "utility_model", "embedding_model"] {
            cmd.env(format!("A0_SET__model_config__{model}__provider"), "other")
                .env(format!("A0_SET__model_config__{model}__name"), "scripted")
                .env(
                    format!("A0_SET__model_config__{model}__api_base"),
                    &api_base,
                );
        }
        self.proc = Some(Kill(cmd.spawn().expect("spawn run_ui.py")));
        let login_url = format!("{}/login", self.base());
        let mut exited = None;
        wait_for("Agent Zero to serve", 120, || {
            if let Some(Ok(Some(code))) = self.proc.as_mut().map(|p| p.0.try_wait()) {
                exited = Some(format!("({code}) {}", self.log_tail()));
                return true;
            }
            matches!(
                super::procs::raw("GET", &login_url, &[], None),
                Some((200, _))
            )
        });
        if let Some(log) = exited {
            return Err(log);
        }
        self.token = Some(self.read_token());
        Ok(())
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The A2A connection URL as Agent Zero's UI builds it (the token in the path).
    pub fn url(&self) -> String {
        format!("{}/a2a/t-{}", self.base(), self.token())
    }

    /// The A2A token (secret: tests assert it never leaks).
    pub fn token(&self) -> String {
        self.token.clone().expect("Agent Zero is not up")
    }

    /// The token as the UI shows it: logged in, `settings_get`'s `mcp_server_token`.
    fn read_token(&self) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt");
        let base = self.base();
        let password = self.password.clone();
        rt.block_on(async move {
            let c = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client");
            // A browser's cookie jar, by hand: Flask keeps the session (login, CSRF token) in
            // a cookie each answer may set anew.
            let mut jar = std::collections::BTreeMap::<String, String>::new();
            let keep = |jar: &mut std::collections::BTreeMap<String, String>,
                        r: &reqwest::Response| {
                for v in r
                    .headers()
                    .get_all("set-cookie")
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                {
                    if let Some((k, v)) = v.split(';').next().and_then(|kv| kv.split_once('=')) {
                        jar.insert(k.trim().to_string(), v.trim().to_string());
                    }
                }
            };
            let cookies = |jar: &std::collections::BTreeMap<String, String>| {
                jar.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let login = c
                .post(format!("{base}/login"))
                .form(&[("username", LOGIN), ("password", password.as_str())])
                .send()
                .await
                .expect("login");
            keep(&mut jar, &login);
            assert!(!jar.is_empty(), "Agent Zero's login set no session");
            let csrf = c
                .get(format!("{base}/api/csrf_token"))
                .header("cookie", cookies(&jar))
                .header("origin", &base)
                .send()
                .await
                .expect("csrf");
            keep(&mut jar, &csrf);
            let csrf: Value = csrf.json().await.expect("csrf json");
            let csrf_token = csrf["token"].as_str().expect("csrf token").to_string();
            let settings = c
                .post(format!("{base}/api/settings_get"))
                .header("cookie", cookies(&jar))
                .header("origin", &base)
                .header("x-csrf-token", &csrf_token)
                .json(&json!({}))
                .send()
                .await
                .expect("settings_get");
            let status = settings.status();
            let text = settings.text().await.unwrap_or_default();
            let settings: Value = serde_json::from_str(&text)
                .unwrap_or_else(|_| panic!("settings_get answered {status}: {text}"));
            find(&settings, "mcp_server_token")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .expect("mcp_server_token in settings_get")
                .to_string()
        })
    }

    /// Stop it (SIGKILL, as a crash or a redeploy would): every task it held is gone.
    pub fn stop(&mut self) {
        self.proc = None;
        let url = format!("{}/login", self.base());
        wait_for("Agent Zero to stop answering", 30, || {
            super::procs::raw("GET", &url, &[], None).is_none()
        });
    }

    /// Start it again (after [`AgentZero::stop`]); with `password`, the login changes and so does
    /// the A2A token derived from it.
    pub fn restart(&mut self, password: Option<&str>) {
        if self.proc.is_some() {
            self.stop();
        }
        if let Some(p) = password {
            self.password = p.to_string();
        }
        self.up();
    }

    /// Send a task to Agent Zero as its own user would (straight to its A2A server, non-blocking);
    /// the task's id.
    pub fn send(&self, text: &str) -> String {
        let answer = self.rpc(
            "message/send",
            json!({"message": {"kind": "message", "role": "user", "messageId": uuid::Uuid::new_v4().to_string(),
                               "parts": [{"kind": "text", "text": text}]},
                   "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"]}}),
        );
        answer["result"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("message/send: {answer}"))
            .to_string()
    }

    /// A task as Agent Zero's own task store holds it (`tasks/get`, whole).
    pub fn task(&self, id: &str) -> Value {
        self.rpc("tasks/get", json!({"id": id}))
    }

    /// The task's state in Agent Zero's store (`None`: it does not know the task).
    pub fn state(&self, id: &str) -> Option<String> {
        self.task(id)["result"]["status"]["state"]
            .as_str()
            .map(str::to_string)
    }

    /// Wait until Agent Zero's store says the task is in `state`.
    pub fn wait_state(&self, id: &str, state: &str, secs: u64) {
        wait_for(
            &format!("Agent Zero's task {id} to be {state}"),
            secs,
            || self.state(id).as_deref() == Some(state),
        );
    }

    fn rpc(&self, method: &str, params: Value) -> Value {
        let body = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        )
        .expect("json");
        let (_, text) = super::procs::raw("POST", &self.url(), &[], Some(&body))
            .unwrap_or_else(|| panic!("Agent Zero did not answer {method}"));
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{method}: {text}"))
    }

    /// Agent Zero's log (its stdout and stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        log[log.len().saturating_sub(6000)..].to_string()
    }

    /// How many tasks Agent Zero's worker started (its own log's "[A2A] Processing task" lines).
    pub fn tasks_started(&self) -> usize {
        self.log().matches("[A2A] Processing task").count()
    }

    /// The model double's requests (one JSON line each: `{path, kind, marker}`).
    pub fn model_turns(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.model_log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// The first value under `key`, anywhere in `v`.
fn find<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(o) => o.get(key).or_else(|| o.values().find_map(|x| find(x, key))),
        Value::Array(a) => a.iter().find_map(|x| find(x, key)),
        _ => None,
    }
}
