//! The driver's remote calls: each [`Request`] the core asks for, sent through the transport
//! under the shared limit on calls, its [`Response`] handed back for the core's token to settle.

use super::Driver;
use crate::control::{Request, Response, Transport};
use std::sync::atomic::Ordering;

impl<T: Transport + 'static> Driver<T> {
    /// Send one request, under the shared limit; count it.
    pub(super) async fn make(&self, request: Request) -> Response {
        let sh = self.shared.clone();
        let _permit = sh.calls.acquire().await.ok();
        sh.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
        crate::control::send(self.remote.as_ref(), sh.clock.as_ref(), request).await
    }
}
