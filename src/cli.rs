//! `argus-supervisor campaigns ...`: the operator CLI, a thin client of the HTTP API.
//!
//! It owns nothing but the translation of arguments to API calls and of answers to text. The token
//! comes from `ARGUS_SUPERVISOR_API_TOKEN` only; it is never printed.

use crate::security::Secret;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub enum CampaignsCommand {
    List,
    Show {
        id: String,
    },
    Observe {
        id: String,
        objective: String,
        task: Option<String>,
    },
    Claim {
        id: String,
    },
    Submit {
        id: String,
        message: String,
    },
    Release {
        id: String,
    },
    Pause {
        id: String,
    },
    Resume {
        id: String,
    },
    Cancel {
        id: String,
        reason: String,
    },
}

/// Run one CLI command against the API at `base` (e.g. `http://127.0.0.1:8787`). Returns the text
/// to print and whether the command succeeded.
pub async fn run(base: &str, command: CampaignsCommand, as_json: bool) -> (String, bool) {
    let token = Secret::from_env("ARGUS_SUPERVISOR_API_TOKEN");
    let root = format!("{}{}", base.trim_end_matches('/'), crate::api::PREFIX);
    let http = match reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
    {
        Ok(c) => c,
        Err(e) => return (format!("cannot build an HTTP client: {e}"), false),
    };
    let (method_post, path, body) = match &command {
        CampaignsCommand::List => (false, "/campaigns".to_string(), None),
        CampaignsCommand::Show { id } => (false, format!("/campaigns/{id}"), None),
        CampaignsCommand::Observe {
            id,
            objective,
            task,
        } => (
            true,
            format!("/campaigns/{id}/observe"),
            Some(json!({"objective": objective, "task_id": task})),
        ),
        CampaignsCommand::Claim { id } => (true, format!("/campaigns/{id}/claim"), None),
        CampaignsCommand::Submit { id, message } => (
            true,
            format!("/campaigns/{id}/submit"),
            Some(json!({"message": message})),
        ),
        CampaignsCommand::Release { id } => (true, format!("/campaigns/{id}/release"), None),
        CampaignsCommand::Pause { id } => (true, format!("/campaigns/{id}/pause"), None),
        CampaignsCommand::Resume { id } => (true, format!("/campaigns/{id}/resume"), None),
        CampaignsCommand::Cancel { id, reason } => (
            true,
            format!("/campaigns/{id}/cancel"),
            Some(json!({"reason": reason})),
        ),
    };
    let url = format!("{root}{path}");
    let mut req = if method_post {
        http.post(&url).json(&body.unwrap_or(json!({})))
    } else {
        http.get(&url)
    };
    if let Some(t) = &token {
        req = req.bearer_auth(t.expose());
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => {
            return (
                format!(
                    "cannot reach the supervisor API: {}",
                    if e.is_connect() {
                        "connection refused"
                    } else {
                        "request failed"
                    }
                ),
                false,
            )
        }
    };
    let ok = resp.status().is_success();
    let v: Value = resp.json().await.unwrap_or(Value::Null);
    if as_json {
        return (serde_json::to_string_pretty(&v).unwrap_or_default(), ok);
    }
    if !ok {
        let msg = v
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("request failed");
        let code = v
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or("error");
        return (format!("error ({code}): {msg}"), false);
    }
    let text = match command {
        CampaignsCommand::List => {
            let mut out = format!(
                "{:<32} {:<34} {:>8} {}\n",
                "CAMPAIGN", "STATE", "ATTEMPTS", "TASK"
            );
            for c in v["campaigns"].as_array().cloned().unwrap_or_default() {
                out.push_str(&format!(
                    "{:<32} {:<34} {:>8} {}\n",
                    c["campaign_id"].as_str().unwrap_or("?"),
                    c["state"].as_str().unwrap_or("?"),
                    c["attempts"].as_u64().unwrap_or(0),
                    c["remote_task_id"].as_str().unwrap_or("-")
                ));
            }
            out
        }
        CampaignsCommand::Show { .. } => {
            let remote = &v["remote"];
            format!(
                "campaign  {}\nstate     {}\nobjective {}\ntask      {}\nremote    {} {}\nquestion  {}\n",
                v["campaign_id"].as_str().unwrap_or("?"),
                v["state"].as_str().unwrap_or("?"),
                v["objective"].as_str().unwrap_or(""),
                v.pointer("/machine/task").and_then(Value::as_str).unwrap_or("-"),
                remote["state"].as_str().unwrap_or("-"),
                remote["stage"].as_str().unwrap_or(""),
                v["pending_question"].as_str().unwrap_or("-"),
            )
        }
        _ => format!("accepted; state {}\n", v["state"].as_str().unwrap_or("?")),
    };
    (text, ok)
}
