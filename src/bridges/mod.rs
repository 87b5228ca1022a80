//! Bridges to the two advisors around the supervisor. Foreman is advisory only and can never act
//! ([`foreman`]). The Argus MCP bridge is an open issue; until it lands, wakes go to the counting
//! stand-in in `runtime::reduce`.

pub mod foreman;
