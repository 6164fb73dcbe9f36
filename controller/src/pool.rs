//! A pool of machines: at most `parallel` at once. A [`Lease`] is one
//! machine; releasing it (or dropping it, or the controller exiting) ends
//! the machine and removes its files.

use crate::provider::{Machine, Provider, ProviderError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Up to `parallel` machines from one provider.
pub struct Pool {
    provider: Arc<dyn Provider>,
    permits: Arc<Semaphore>,
    parallel: usize,
    counter: AtomicU64,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("provider", &self.provider.kind())
            .field("parallel", &self.parallel)
            .finish()
    }
}

impl Pool {
    pub fn new(provider: Arc<dyn Provider>, parallel: usize) -> Result<Pool, ProviderError> {
        if parallel == 0 {
            return Err(ProviderError::Config(
                "--parallel must be at least 1".into(),
            ));
        }
        Ok(Pool {
            provider,
            permits: Arc::new(Semaphore::new(parallel)),
            parallel,
            counter: AtomicU64::new(0),
        })
    }

    pub fn parallel(&self) -> usize {
        self.parallel
    }

    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    /// Waits for a free slot; the slot and the next machine name.
    async fn slot(&self) -> (OwnedSemaphorePermit, String) {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .expect("the pool's semaphore is never closed");
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        (permit, format!("pool{n}"))
    }

    /// Waits for a free slot, then starts a fresh machine in it.
    pub async fn acquire(&self) -> Result<Lease, ProviderError> {
        let (permit, name) = self.slot().await;
        let machine = self.provider.start(&name).await?;
        Ok(Lease {
            machine: Some(machine),
            _permit: permit,
        })
    }

    /// Waits for a free slot, then starts a machine from the checkpoint
    /// in `dir` ([`Provider::start_from_checkpoint`]).
    pub async fn acquire_from(&self, dir: &std::path::Path) -> Result<Lease, ProviderError> {
        let (permit, name) = self.slot().await;
        let machine = self.provider.start_from_checkpoint(&name, dir).await?;
        Ok(Lease {
            machine: Some(machine),
            _permit: permit,
        })
    }

    /// Slots in use.
    pub fn in_use(&self) -> usize {
        self.parallel - self.permits.available_permits()
    }
}

/// One machine from a [`Pool`].
pub struct Lease {
    machine: Option<Box<dyn Machine>>,
    _permit: OwnedSemaphorePermit,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field(
                "machine",
                &self.machine.as_ref().map(|m| m.name().to_string()),
            )
            .finish()
    }
}

impl Lease {
    pub fn machine(&self) -> &(dyn Machine + 'static) {
        self.machine
            .as_deref()
            .expect("a lease holds its machine until released")
    }

    /// Ends the machine and frees the slot.
    pub async fn release(mut self) {
        if let Some(m) = self.machine.take() {
            m.shutdown().await;
        }
    }
}

impl std::ops::Deref for Lease {
    type Target = dyn Machine;
    fn deref(&self) -> &Self::Target {
        self.machine()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(m) = self.machine.take() {
            m.kill_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest_client::GuestClient;
    use crate::provider::{StartPath, StartReport};
    use futures::future::BoxFuture;
    use futures::FutureExt;
    use std::sync::atomic::AtomicUsize;

    /// A provider of fake machines that counts live ones.
    struct Counting {
        live: Arc<AtomicUsize>,
        max_seen: Arc<AtomicUsize>,
    }

    struct Fake {
        name: String,
        agent: GuestClient,
        report: StartReport,
        live: Arc<AtomicUsize>,
        ended: std::sync::atomic::AtomicBool,
    }

    impl Machine for Fake {
        fn name(&self) -> &str {
            &self.name
        }
        fn guest(&self) -> &GuestClient {
            &self.agent
        }
        fn started(&self) -> &StartReport {
            &self.report
        }
        fn pid(&self) -> Option<u32> {
            None
        }
        fn screenshot(&self) -> BoxFuture<'_, Result<Vec<u8>, ProviderError>> {
            async { Ok(vec![]) }.boxed()
        }
        fn check(&self) -> Result<(), ProviderError> {
            Ok(())
        }
        fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
            async move { self.kill_now() }.boxed()
        }
        fn kill_now(&self) {
            if !self.ended.swap(true, Ordering::SeqCst) {
                self.live.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    impl Provider for Counting {
        fn kind(&self) -> &'static str {
            "fake"
        }
        fn start<'a>(
            &'a self,
            name: &'a str,
        ) -> BoxFuture<'a, Result<Box<dyn Machine>, ProviderError>> {
            async move {
                let n = self.live.fetch_add(1, Ordering::SeqCst) + 1;
                self.max_seen.fetch_max(n, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                Ok(Box::new(Fake {
                    name: name.to_string(),
                    agent: GuestClient::new("http://127.0.0.1:9"),
                    report: StartReport {
                        path: StartPath::Attach,
                        seconds: 0.0,
                        phases: vec![],
                        notes: vec![],
                        events: vec![],
                    },
                    live: self.live.clone(),
                    ended: false.into(),
                }) as Box<dyn Machine>)
            }
            .boxed()
        }
    }

    #[tokio::test]
    async fn at_most_parallel_machines_and_all_ended() {
        let live = Arc::new(AtomicUsize::new(0));
        let max_seen = Arc::new(AtomicUsize::new(0));
        let pool = Arc::new(
            Pool::new(
                Arc::new(Counting {
                    live: live.clone(),
                    max_seen: max_seen.clone(),
                }),
                2,
            )
            .unwrap(),
        );
        let mut tasks = Vec::new();
        for i in 0..6 {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                let lease = pool.acquire().await.unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                if i % 2 == 0 {
                    lease.release().await;
                } else {
                    drop(lease);
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(max_seen.load(Ordering::SeqCst), 2);
        assert_eq!(live.load(Ordering::SeqCst), 0);
        assert_eq!(pool.in_use(), 0);
        assert!(Pool::new(Arc::new(Counting { live, max_seen }), 0)
            .unwrap_err()
            .to_string()
            .contains("at least 1"));
    }
}
