//! The supervisor panel, served under the API's prefix at `ui/`, on the API's one listener.
//!
//! Owns: the panel's static assets (HTML, CSS, JavaScript, the generated state diagrams), compiled
//! into the binary, and the headers that make a page showing untrusted text safe: a strict
//! Content-Security-Policy (`default-src 'self'`, so no inline script, no `eval`, no foreign origin),
//! `frame-ancestors 'none'`, `nosniff`, no referrer, no caching.
//!
//! Must never: carry data. The assets are public like `health`; every data call the page makes
//! goes to the authenticated API with the token the operator enters once per tab (kept in
//! `sessionStorage`, never in a URL or a cookie). The page renders remote and operator text with
//! `textContent` only, never as HTML.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("index.html");
const SCRIPT: &str = include_str!("panel.js");
const STYLE: &str = include_str!("panel.css");
/// The panel's pictures, the same SVGs as `diagrams/<view>.svg` (`diagrams --check` keeps them
/// current): the overview and the detail views, never the complete graph. Node titles are
/// `StateName::name()` (the API's `diagram_state` and `path`) or, in the overview, the superstate
/// (the API's `diagram_superstate`).
const VIEWS: [(&str, &str); 5] = [
    (
        "overview",
        include_str!("../../../../diagrams/overview.svg"),
    ),
    (
        "observing",
        include_str!("../../../../diagrams/observing.svg"),
    ),
    (
        "controlling",
        include_str!("../../../../diagrams/controlling.svg"),
    ),
    (
        "recovery",
        include_str!("../../../../diagrams/recovery.svg"),
    ),
    ("ending", include_str!("../../../../diagrams/ending.svg")),
];

/// Content-Security-Policy of every panel asset.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut resp = (StatusCode::OK, body).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// The panel's routes, relative to wherever the API nests them (`/ui` redirects relatively, so
/// the panel knows no prefix of its own).
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("ui/") }))
        .route(
            "/ui/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/ui/panel.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/ui/panel.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route("/ui/views/{file}", get(view))
}

/// `ui/views/<view>.svg`.
async fn view(axum::extract::Path(file): axum::extract::Path<String>) -> Response {
    let name = file.strip_suffix(".svg").unwrap_or_default();
    match VIEWS.iter().find(|(n, _)| *n == name) {
        Some((_, svg)) => asset("image/svg+xml", svg),
        None => (StatusCode::NOT_FOUND, "no such view").into_response(),
    }
}
