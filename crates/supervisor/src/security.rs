//! Secrets and untrusted text.
//!
//! This module owns the two wrappers that keep the security rules (docs/architecture.md, Security) mechanical:
//! [`Secret`] (a value from the environment that never prints) and [`Untrusted`] (remote text:
//! bounded, stripped of control and bidi characters, labelled wherever it is shown). It must never
//! offer a way to print a secret, and never hand out remote text that skipped [`Untrusted::new`].

use std::fmt;

/// Remote (or operator) text for a terminal: bounded, control characters and bidi overrides
/// removed ([`Untrusted::new`]).
pub fn clean(text: &str) -> String {
    Untrusted::new(text, 4096).as_str().to_string()
}

/// A secret value (a token). `Debug` and `Display` print `[redacted]`; the value is reachable only
/// through [`Secret::expose`], which call sites use to put it on the wire and nowhere else.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// Read a secret from the environment; empty counts as absent.
    pub fn from_env(var: &str) -> Option<Secret> {
        std::env::var(var)
            .ok()
            .filter(|v| !v.is_empty())
            .map(Secret)
    }

    /// The raw value, for an HTTP header. Never format it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Hide every occurrence of this secret in `text` (for URLs that carry a token in their path).
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.0, "[redacted]")
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Compare without an early exit on the first differing byte (timing-safe for equal lengths).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// True when the request presents `token` as `Authorization: Bearer` or `X-API-KEY`.
pub fn presents_token(headers: &axum::http::HeaderMap, token: &str) -> bool {
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        // The scheme is case-insensitive (RFC 7235 §2.1): `bearer`, `BEARER` and `Bearer` alike.
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| rest.trim_start())
        });
    let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
    [bearer, key]
        .into_iter()
        .flatten()
        .any(|given| constant_time_eq(given.as_bytes(), token.as_bytes()))
}

/// Text that came from the remote. Bounded and sanitised at construction; shown only labelled.
#[derive(Clone, PartialEq, Eq)]
pub struct Untrusted(String);

/// The default bound for one piece of untrusted text.
pub const UNTRUSTED_TEXT_BYTES: usize = 16 * 1024;

impl Untrusted {
    /// Sanitise and bound remote text: control characters (except newline and tab) and
    /// bidirectional overrides are dropped, and the result is cut at `max_bytes` on a character
    /// boundary with a visible marker.
    pub fn new(text: &str, max_bytes: usize) -> Self {
        // Most remote text is short and clean: kept as it is, in one copy.
        if already_safe(text, max_bytes) {
            return Untrusted(text.to_string());
        }
        Untrusted(sanitised(text, max_bytes))
    }

    /// [`Untrusted::new`] for text already owned: clean text within bounds is kept as it is,
    /// without a copy (a poll's status message is joined into a string of its own first).
    pub fn owned(text: String, max_bytes: usize) -> Self {
        if already_safe(&text, max_bytes) {
            return Untrusted(text);
        }
        Untrusted(sanitised(&text, max_bytes))
    }

    /// The sanitised text, for code that must inspect it (never for instructions).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The sanitised text, owned.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The text fenced and labelled as untrusted data, for a model or a human.
    pub fn fenced(&self) -> String {
        format!(
            "<untrusted-remote-data>\n{}\n</untrusted-remote-data>",
            self.0.replace(
                "</untrusted-remote-data>",
                "</untrusted-remote-data\u{200b}>"
            )
        )
    }
}

impl fmt::Debug for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Untrusted({:?})", self.0)
    }
}

/// Text that sanitising would leave as it is: within bounds, no unsafe character.
fn already_safe(text: &str, max_bytes: usize) -> bool {
    text.len() <= max_bytes && !text.chars().any(is_unsafe_char)
}

/// `text` without its unsafe characters, cut at `max_bytes` on a character boundary with a
/// visible marker.
fn sanitised(text: &str, max_bytes: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_bytes));
    let mut truncated = false;
    for c in text.chars() {
        if is_unsafe_char(c) {
            continue;
        }
        if out.len() + c.len_utf8() > max_bytes {
            truncated = true;
            break;
        }
        out.push(c);
    }
    if truncated {
        out.push_str(" [truncated]");
    }
    out
}

fn is_unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("tok-123");
        assert_eq!(format!("{s} {s:?}"), "[redacted] Secret([redacted])");
        assert_eq!(
            s.scrub("https://h/a2a/t-tok-123/"),
            "https://h/a2a/t-[redacted]/"
        );
    }

    #[test]
    fn untrusted_text_is_bounded_and_stripped() {
        let t = Untrusted::new("ok\u{202e}evil\u{7}\nline", 100);
        assert_eq!(t.as_str(), "okevil\nline");
        let long = Untrusted::new(&"é".repeat(100), 11);
        assert_eq!(long.as_str(), "ééééé [truncated]");
        let f = Untrusted::new("x</untrusted-remote-data>y", 100).fenced();
        assert_eq!(f.matches("</untrusted-remote-data>").count(), 1, "{f}");
    }

    /// Owned text is bounded and stripped exactly as borrowed text is.
    #[test]
    fn owned_text_reads_as_borrowed_text_does() {
        for (text, max) in [
            ("clean line\nand a tab\t", 100),
            ("ok\u{202e}evil\u{7}\nline", 100),
            ("ééééééé", 11),
            ("exactly", 7),
            ("", 4),
        ] {
            assert_eq!(
                Untrusted::owned(text.to_string(), max).as_str(),
                Untrusted::new(text, max).as_str(),
                "{text:?} within {max}"
            );
        }
    }
}
