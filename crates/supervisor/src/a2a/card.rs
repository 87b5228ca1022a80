//! The agent card: validation, its canonical hash, the dialect it implies, and what it claims about
//! campaign control. A card is a claim to verify, never permission: no capability is inferred from
//! descriptions or other natural-language text, only from the structured fields named here.

use crate::control::RemoteError;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

pub const EXTENSION_URI: &str = "urn:openoperator:campaign-control:v1";

pub use crate::protocol::{Dialect, Method};

/// What the card says about campaign control.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControlExtension {
    pub lease_epoch_enforced: bool,
    pub policy_enforced: bool,
    /// Logical operation → the JSON-RPC method the remote named for it.
    pub operations: BTreeMap<Method, String>,
}

/// A validated card.
#[derive(Debug, Clone, Serialize)]
pub struct CardInfo {
    /// SHA-256 (hex) over the card's canonical JSON (keys sorted, no whitespace).
    pub sha256: String,
    /// Unix seconds when the card was fetched.
    pub retrieved_at: u64,
    /// Which well-known path served it.
    pub path: &'static str,
    pub dialect: Dialect,
    pub extension: Option<ControlExtension>,
    pub skills: usize,
    /// `capabilities.streaming` is `true`: the remote says it streams a task's updates.
    pub streaming: bool,
    /// The protocol version the card itself states (its `protocolVersion`, else its JSON-RPC
    /// interfaces' versions): said beside the dialect spoken (a 0.2.5 card is spoken to as 0.3).
    pub protocol_version: Option<String>,
    /// The agent's own version as its card states it (`version`): what the remote exposes of its
    /// build (remote text, bounded and cleaned).
    pub agent_version: Option<String>,
}

/// Validate a fetched card. It must be an object with a non-empty string `name` and a `skills`
/// array; anything else is `IncompatibleCard`.
pub fn validate(
    card: &Value,
    path: &'static str,
    retrieved_at: u64,
) -> Result<CardInfo, RemoteError> {
    let obj = card.as_object().ok_or(RemoteError::IncompatibleCard)?;
    let named = obj
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.trim().is_empty());
    let skills = obj
        .get("skills")
        .and_then(Value::as_array)
        .ok_or(RemoteError::IncompatibleCard)?;
    if !named {
        return Err(RemoteError::IncompatibleCard);
    }
    Ok(CardInfo {
        sha256: hash(card),
        retrieved_at,
        path,
        dialect: dialect(card),
        extension: extension(card),
        skills: skills.len(),
        streaming: card
            .pointer("/capabilities/streaming")
            .and_then(Value::as_bool)
            == Some(true),
        protocol_version: stated_version(card),
        agent_version: card
            .get("version")
            .and_then(Value::as_str)
            .map(|v| crate::security::Untrusted::new(v, 64).as_str().to_string()),
    })
}

/// The version the card states: its top-level `protocolVersion`, else its JSON-RPC interfaces'
/// (joined), bounded (remote text).
fn stated_version(card: &Value) -> Option<String> {
    let top = card.get("protocolVersion").and_then(Value::as_str);
    let listed: Vec<&str> = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|i| {
            i.get("protocolBinding")
                .and_then(Value::as_str)
                .is_some_and(|b| b.eq_ignore_ascii_case("JSONRPC"))
        })
        .filter_map(|i| i.get("protocolVersion").and_then(Value::as_str))
        .collect();
    let said = match top {
        Some(v) => v.to_string(),
        None if !listed.is_empty() => listed.join(", "),
        None => return None,
    };
    Some(crate::security::Untrusted::new(&said, 64).into_string())
}

/// v1.0 when the card declares a JSON-RPC 1.0 interface and no 0.3 one; otherwise v0.3.
pub fn dialect(card: &Value) -> Dialect {
    let mut v1 = false;
    let mut v03 = card
        .get("protocolVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("0."));
    if let Some(interfaces) = card.get("supportedInterfaces").and_then(Value::as_array) {
        for i in interfaces {
            let binding = i
                .get("protocolBinding")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !binding.eq_ignore_ascii_case("JSONRPC") {
                continue;
            }
            match i.get("protocolVersion").and_then(Value::as_str) {
                Some(v) if v.starts_with("1.") || v == "1" => v1 = true,
                Some(v) if v.starts_with("0.") => v03 = true,
                _ => {}
            }
        }
    }
    if v1 && !v03 {
        Dialect::V1
    } else {
        Dialect::V03
    }
}

fn extension(card: &Value) -> Option<ControlExtension> {
    let ext = card
        .pointer("/capabilities/extensions")?
        .as_array()?
        .iter()
        .find(|e| e.get("uri").and_then(Value::as_str) == Some(EXTENSION_URI))?;
    let params = ext.get("params");
    let flag = |k: &str| params.and_then(|p| p.get(k)).and_then(Value::as_bool) == Some(true);
    let mut operations = BTreeMap::new();
    if let Some(ops) = params
        .and_then(|p| p.get("operations"))
        .and_then(Value::as_object)
    {
        for op in Method::ALL {
            let Some(key) = op.extension_key() else {
                continue;
            };
            if let Some(method) = ops
                .get(key)
                .and_then(Value::as_str)
                .filter(|m| is_method_name(m))
            {
                operations.insert(op, method.to_string());
            }
        }
    }
    Some(ControlExtension {
        lease_epoch_enforced: flag("lease_epoch_enforced"),
        policy_enforced: flag("policy_enforced"),
        operations,
    })
}

/// A plausible JSON-RPC method name: short, printable ASCII, no spaces.
fn is_method_name(m: &str) -> bool {
    !m.is_empty()
        && m.len() <= 64
        && m.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/_.-".contains(&b))
}

/// SHA-256 over canonical JSON: object keys sorted at every level, no insignificant whitespace.
pub fn hash(v: &Value) -> String {
    let mut out = String::new();
    canonical(v, &mut out);
    let digest = Sha256::digest(out.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                canonical(&map[*k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hash_ignores_key_order_and_whitespace() {
        let a: Value =
            serde_json::from_str(r#"{"b": [1, {"y": 2, "x": 1}], "a": "z"}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{"a":"z","b":[1,{"x":1,"y":2}]}"#).expect("json");
        assert_eq!(hash(&a), hash(&b));
        assert_ne!(hash(&a), hash(&json!({"a": "z"})));
    }

    #[test]
    fn dialect_follows_declared_interfaces() {
        assert_eq!(dialect(&json!({"protocolVersion": "0.3.0"})), Dialect::V03);
        let v1 = json!({"supportedInterfaces": [{"url": "x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
        assert_eq!(dialect(&v1), Dialect::V1);
        let both = json!({"protocolVersion": "0.3.0", "supportedInterfaces": [{"protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
        assert_eq!(dialect(&both), Dialect::V03);
        assert_eq!(dialect(&json!({})), Dialect::V03);
    }

    #[test]
    fn cards_without_name_or_skills_are_incompatible() {
        for bad in [
            json!([]),
            json!({"name": "x"}),
            json!({"skills": []}),
            json!({"name": " ", "skills": []}),
            json!({"name": "x", "skills": {}}),
        ] {
            assert_eq!(
                validate(&bad, "p", 0).err(),
                Some(RemoteError::IncompatibleCard),
                "{bad}"
            );
        }
        assert!(validate(&json!({"name": "x", "skills": []}), "p", 0).is_ok());
    }

    #[test]
    fn extension_operations_are_read_from_structure_only() {
        let card = json!({"name": "x", "skills": [], "description": "supports claim_control and merge",
            "capabilities": {"extensions": [{"uri": EXTENSION_URI, "params": {
                "lease_epoch_enforced": true, "policy_enforced": "yes",
                "operations": {"claim_control": "campaign/claim_control", "read_control": "bad name with spaces"}}}]}});
        let info = validate(&card, "p", 0).expect("valid");
        let ext = info.extension.expect("extension");
        assert!(ext.lease_epoch_enforced);
        assert!(!ext.policy_enforced, "only a JSON true counts");
        assert_eq!(ext.operations.len(), 1);
        assert_eq!(
            ext.operations
                .get(&Method::ClaimControl)
                .map(String::as_str),
            Some("campaign/claim_control")
        );
    }
}
