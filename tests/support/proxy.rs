//! A TCP relay on a loopback port in front of a real server, that a test takes down and brings
//! back on the same port: an outage as the supervisor meets it (connections refused), with the
//! server behind it, and its tasks, untouched.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Relay {
    pub port: u16,
    target: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    /// Relay a free port to `target` (up at once).
    pub fn to(target: u16) -> Relay {
        let mut r = Relay {
            port: super::procs::free_port(),
            target,
            stop: Arc::new(AtomicBool::new(false)),
            accept: None,
            open: Arc::default(),
        };
        r.up();
        r
    }

    /// Listen again on the same port.
    pub fn up(&mut self) {
        if self.accept.is_some() {
            return;
        }
        let listener = TcpListener::bind(("127.0.0.1", self.port)).expect("bind the relay");
        listener.set_nonblocking(true).expect("nonblocking");
        self.stop.store(false, Ordering::SeqCst);
        let (stop, open, target) = (self.stop.clone(), self.open.clone(), self.target);
        self.accept = Some(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                            continue;
                        };
                        for s in [&client, &server] {
                            if let Ok(c) = s.try_clone() {
                                open.lock().unwrap_or_else(|p| p.into_inner()).push(c);
                            }
                        }
                        pipe(&client, &server);
                        pipe(&server, &client);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }));
    }

    /// Stop listening and cut every connection: calls are refused until [`Relay::up`].
    pub fn down(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
        for s in self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.down();
    }
}

/// Copy `from` to `to` on a thread of its own until either side closes.
fn pipe(from: &TcpStream, to: &TcpStream) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
