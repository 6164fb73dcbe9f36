//! A small QMP (QEMU Machine Protocol) client over a unix socket: the
//! greeting, `qmp_capabilities`, then one command at a time, each with a
//! timeout. Asynchronous events that arrive between replies are kept (the
//! last few) for error messages.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

#[derive(Debug, thiserror::Error)]
pub enum QmpError {
    #[error("QMP socket {path}: could not connect within {waited:?}")]
    Connect {
        path: PathBuf,
        waited: Duration,
        #[source]
        source: std::io::Error,
    },
    #[error("QMP `{command}`: no reply within {after:?}")]
    Timeout { command: String, after: Duration },
    #[error("QMP `{command}`: QEMU closed the connection (the process probably exited)")]
    Closed { command: String },
    #[error("QMP `{command}` failed: {class}: {desc}")]
    Command {
        command: String,
        class: String,
        desc: String,
    },
    #[error("QMP `{command}`: {message}")]
    Protocol { command: String, message: String },
}

/// One QMP connection.
#[derive(Debug)]
pub struct Qmp {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    /// Default timeout for [`Qmp::execute`].
    pub timeout: Duration,
    events: VecDeque<Value>,
}

impl Qmp {
    /// Connects to `path`, retrying while the socket does not exist yet or
    /// refuses (QEMU is starting), for up to `wait`.
    pub async fn connect(path: &Path, wait: Duration) -> Result<Qmp, QmpError> {
        let start = Instant::now();
        let stream = loop {
            match UnixStream::connect(path).await {
                Ok(s) => break s,
                Err(e) if start.elapsed() >= wait => {
                    return Err(QmpError::Connect {
                        path: path.to_path_buf(),
                        waited: start.elapsed(),
                        source: e,
                    })
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        };
        let (r, w) = stream.into_split();
        let mut qmp = Qmp {
            reader: BufReader::new(r),
            writer: w,
            timeout: Duration::from_secs(10),
            events: VecDeque::new(),
        };
        let greeting = tokio::time::timeout(
            wait.max(Duration::from_secs(5)),
            qmp.read_message("greeting"),
        )
        .await
        .map_err(|_| QmpError::Timeout {
            command: "greeting".into(),
            after: wait,
        })??;
        if greeting.get("QMP").is_none() {
            return Err(QmpError::Protocol {
                command: "greeting".into(),
                message: format!("unexpected greeting {greeting}"),
            });
        }
        qmp.execute("qmp_capabilities", None).await?;
        Ok(qmp)
    }

    async fn read_message(&mut self, command: &str) -> Result<Value, QmpError> {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .reader
                .read_line(&mut line)
                .await
                .map_err(|_| QmpError::Closed {
                    command: command.to_string(),
                })?;
            if n == 0 {
                return Err(QmpError::Closed {
                    command: command.to_string(),
                });
            }
            if line.trim().is_empty() {
                continue;
            }
            return serde_json::from_str(&line).map_err(|e| QmpError::Protocol {
                command: command.to_string(),
                message: format!("bad JSON from QEMU ({e}): {}", line.trim()),
            });
        }
    }

    /// Runs `command` with `arguments` and returns its `return` value.
    pub async fn execute(
        &mut self,
        command: &str,
        arguments: Option<Value>,
    ) -> Result<Value, QmpError> {
        let timeout = self.timeout;
        self.execute_with_timeout(command, arguments, timeout).await
    }

    pub async fn execute_with_timeout(
        &mut self,
        command: &str,
        arguments: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, QmpError> {
        let mut msg = json!({ "execute": command });
        if let Some(a) = arguments {
            msg["arguments"] = a;
        }
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(b'\n');
        let fut = async {
            self.writer
                .write_all(&bytes)
                .await
                .map_err(|_| QmpError::Closed {
                    command: command.to_string(),
                })?;
            loop {
                let m = self.read_message(command).await?;
                if let Some(r) = m.get("return") {
                    return Ok(r.clone());
                }
                if let Some(e) = m.get("error") {
                    return Err(QmpError::Command {
                        command: command.to_string(),
                        class: e
                            .get("class")
                            .and_then(Value::as_str)
                            .unwrap_or("Error")
                            .to_string(),
                        desc: e
                            .get("desc")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    });
                }
                if m.get("event").is_some() {
                    self.events.push_back(m);
                    if self.events.len() > 32 {
                        self.events.pop_front();
                    }
                }
            }
        };
        tokio::time::timeout(timeout, fut)
            .await
            .map_err(|_| QmpError::Timeout {
                command: command.to_string(),
                after: timeout,
            })?
    }

    /// The run state (`running`, `paused`, `inmigrate`, `postmigrate`, …).
    pub async fn status(&mut self) -> Result<String, QmpError> {
        let v = self.execute("query-status", None).await?;
        Ok(v.get("status")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string())
    }

    /// Events received so far (newest last).
    pub fn events(&self) -> impl Iterator<Item = &Value> {
        self.events.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::UnixListener;

    /// A fake QEMU that answers the greeting, capabilities, one event and
    /// then an error or a return.
    async fn fake(path: PathBuf, replies: Vec<&'static str>) {
        let l = UnixListener::bind(&path).unwrap();
        let (s, _) = l.accept().await.unwrap();
        let (r, mut w) = s.into_split();
        let mut r = BufReader::new(r);
        w.write_all(b"{\"QMP\": {\"version\": {}, \"capabilities\": []}}\r\n")
            .await
            .unwrap();
        let mut line = String::new();
        for reply in replies {
            line.clear();
            if r.read_line(&mut line).await.unwrap() == 0 {
                return;
            }
            w.write_all(reply.as_bytes()).await.unwrap();
        }
        // Keep the connection open and silent.
        tokio::time::sleep(Duration::from_secs(5)).await;
    }

    #[tokio::test]
    async fn commands_events_errors_and_timeouts() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("qmp.sock");
        tokio::spawn(fake(
            path.clone(),
            vec![
                "{\"return\": {}}\r\n",
                "{\"event\": \"RESUME\"}\r\n{\"return\": {\"status\": \"running\", \"running\": true}}\r\n",
                "{\"error\": {\"class\": \"GenericError\", \"desc\": \"nope\"}}\r\n",
            ],
        ));
        let mut q = Qmp::connect(&path, Duration::from_secs(5)).await.unwrap();
        assert_eq!(q.status().await.unwrap(), "running");
        assert_eq!(q.events().count(), 1);
        let e = q.execute("cont", None).await.unwrap_err().to_string();
        assert_eq!(e, "QMP `cont` failed: GenericError: nope");
        let e = q
            .execute_with_timeout("stop", None, Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(matches!(e, QmpError::Timeout { .. }), "{e}");
    }

    #[tokio::test]
    async fn connect_to_nothing_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let e = Qmp::connect(&d.path().join("none.sock"), Duration::from_millis(50))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("none.sock: could not connect"), "{e}");
    }
}
