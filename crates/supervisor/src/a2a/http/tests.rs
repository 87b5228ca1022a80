//! The direct wire against raw sockets: what a real server may do that the sim does not
//! (a chunked answer with no length, a stall mid-answer, a handshake that never completes).
use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server that reads one request head and then runs `answer` on the socket.
async fn one_shot<F, Fut>(answer: F) -> String
where
    F: FnOnce(tokio::net::TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        if let Ok((mut sock, _)) = listener.accept().await {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            answer(sock).await;
        }
    });
    url
}

fn http(url: &str, read: Duration) -> Http {
    let mut config = HttpConfig::new(url);
    config.allow_insecure_loopback = true;
    config.read_timeout = read;
    Http::new(&config).expect("transport")
}

fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

#[tokio::test]
async fn an_answer_in_many_chunks_is_read_whole_and_one_past_the_cap_is_refused() {
    let url = one_shot(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            .await;
        for part in [
            &b"{\"jsonrpc\":\"2.0\","[..],
            b"\"id\":1,",
            b"\"result\":{\"a\":1}}",
        ] {
            let _ = s.write_all(&chunk(part)).await;
            let _ = s.flush().await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = s.write_all(b"0\r\n\r\n").await;
    })
    .await;
    let t = http(&url, Duration::from_secs(5));
    let v = t.call("m", &(), VersionHeader::None).await.expect("answer");
    assert_eq!(v, serde_json::json!({"a": 1}));

    // No length declared: the cap is enforced while reading.
    let url = one_shot(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            .await;
        let block = vec![b' '; 64 * 1024];
        for _ in 0..=(MAX_RESPONSE_BYTES / block.len()) {
            if s.write_all(&chunk(&block)).await.is_err() {
                return;
            }
        }
        let _ = s.write_all(b"0\r\n\r\n").await;
    })
    .await;
    let t = http(&url, Duration::from_secs(5));
    assert_eq!(
        t.call("m", &(), VersionHeader::None).await.err(),
        Some(RemoteError::TooLarge)
    );
}

#[tokio::test]
async fn a_stall_mid_answer_is_a_timeout_after_sending() {
    let url = one_shot(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\"")
            .await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    })
    .await;
    let t = http(&url, Duration::from_millis(300));
    let started = std::time::Instant::now();
    assert_eq!(
        t.call("m", &(), VersionHeader::None).await.err(),
        Some(RemoteError::TimeoutAfterSend)
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_handshake_that_never_completes_is_a_timeout_before_sending() {
    // Accepts TCP, never answers the TLS hello: nothing can have been sent.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    let mut config = HttpConfig::new(format!("https://localhost:{port}/"));
    config.connect_timeout = Duration::from_millis(300);
    let t = Http::new(&config).expect("transport");
    assert_eq!(
        t.call("m", &(), VersionHeader::None).await.err(),
        Some(RemoteError::TimeoutBeforeSend)
    );
}

/// An answer of `status` carrying `body`, read as a JSON-RPC call's.
fn read(status: u16, body: &str) -> Result<Value, RemoteError> {
    RpcAnswer {
        status: StatusCode::from_u16(status).expect("status"),
        bytes: Bytes::copy_from_slice(body.as_bytes()),
    }
    .result()
}

#[test]
fn json_that_is_not_json_rpc_is_read_by_its_status_never_as_an_empty_envelope() {
    // An agent's own message about its failure, answered 500: the remote answers, with an
    // error (it was read as "no answer" when any JSON object passed for an envelope).
    let said =
        r#"{"kind": "message", "role": "agent", "parts": [{"kind": "text", "text": "failed"}]}"#;
    let e = read(500, said).expect_err("an error");
    assert_eq!(e, RemoteError::ServerFault { status: 500 });
    assert!(!e.is_no_answer(), "answered, with an error: not an outage");
    assert_eq!(
        e.read_condition(),
        argus_machines::RemoteCondition::Unusable
    );
    // The same on a 200 is no usable answer; a gateway's 502 stays an outage.
    assert_eq!(read(200, said), Err(RemoteError::MalformedResponse));
    assert!(read(502, said).expect_err("an error").is_no_answer());
    // A real envelope is read as one, whatever the status.
    assert_eq!(
        read(
            500,
            r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "x"}}"#
        ),
        Err(RemoteError::Remote { code: -32000 })
    );
    assert_eq!(
        read(200, r#"{"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}"#),
        Ok(serde_json::json!({"a": 1}))
    );
}

#[test]
fn a_token_that_cannot_be_a_header_is_refused_at_start_and_never_shown() {
    let mut config = HttpConfig::new("https://remote.example/");
    config.token = Some(Secret::new("tok\nen-secret-77"));
    assert_eq!(Http::new(&config).err(), Some(RemoteError::AuthFailed));
    config.token = Some(Secret::new("token-secret-77"));
    let t = Http::new(&config).expect("transport");
    assert!(!format!("{t:?}").contains("secret-77"));
}
