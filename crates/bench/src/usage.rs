//! What the bench reads of a process from the kernel: CPU time (the process's or one thread's,
//! user and kernel apart) and resident memory.

use rustix::time::ClockId;

/// CPU seconds used so far by this process (or by the calling thread), or between two such
/// readings: the total from the CPU-time clock (nanoseconds: a one-second round at a tenth of a
/// core is 0.1 s, where /proc's 10 ms ticks would be 10% off), the user/kernel split from /proc.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cpu {
    total: f64,
    user: f64,
    system: f64,
}

impl Cpu {
    /// This process, every thread.
    pub(super) fn now() -> Cpu {
        Cpu::read("/proc/self/stat", ClockId::ProcessCPUTime)
    }

    /// The calling thread alone (the floor's, which runs beside the runtime under test).
    pub(super) fn of_this_thread() -> Cpu {
        Cpu::read("/proc/thread-self/stat", ClockId::ThreadCPUTime)
    }

    pub(super) fn read(stat: &str, clock: ClockId) -> Cpu {
        let t = rustix::time::clock_gettime(clock);
        let total = t.tv_sec as f64 + t.tv_nsec as f64 / 1e9;
        let unknown = Cpu {
            total,
            user: f64::NAN,
            system: f64::NAN,
        };
        let Ok(stat) = std::fs::read_to_string(stat) else {
            return unknown;
        };
        // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            return unknown;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| {
            f.get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        };
        // clock ticks per second on Linux is 100 unless the kernel says otherwise.
        Cpu {
            total,
            user: ticks(11) / 100.0,
            system: ticks(12) / 100.0,
        }
    }

    /// What was used from `earlier` to this reading.
    pub(super) fn since(self, earlier: Cpu) -> Cpu {
        Cpu {
            total: self.total - earlier.total,
            user: self.user - earlier.user,
            system: self.system - earlier.system,
        }
    }

    /// The sum of two spans.
    pub(super) fn plus(self, other: Cpu) -> Cpu {
        Cpu {
            total: self.total + other.total,
            user: self.user + other.user,
            system: self.system + other.system,
        }
    }

    pub(super) fn total(self) -> f64 {
        self.total
    }

    /// The share of it spent in the kernel.
    pub(super) fn kernel_share(self) -> f64 {
        self.system / (self.user + self.system).max(1e-9)
    }
}

/// Resident set size in KiB, from /proc.
pub(super) fn rss_kib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(str::to_string)
        })
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(f64::NAN)
}
