//! Facts about the local host for its node entry, read from `/proc` (feature `nvml`, Linux).

use std::fs;

use super::probe::ProbeError;

/// The local host's name, cpu count and memory.
///
/// ```no_run
/// use gangway::Milli;
/// use gangway_nvml::{host_facts, inventory_json, NvmlProbe};
/// let host = host_facts().unwrap();
/// let probe = NvmlProbe::new().unwrap();
/// let json = inventory_json(&probe, &host.hostname, Milli::from_units(host.cpus.into()),
///     host.memory_mib).unwrap();
/// println!("{json}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFacts {
    /// `/proc/sys/kernel/hostname`.
    pub hostname: String,
    /// Logical cpus listed in `/proc/cpuinfo`.
    pub cpus: u32,
    /// `MemTotal` of `/proc/meminfo`, in MiB (rounded down).
    pub memory_mib: u64,
}

/// Reads [`HostFacts`] from `/proc`; a missing or unreadable fact is a [`ProbeError::Query`]
/// naming the file.
///
/// ```no_run
/// let host = gangway_nvml::host_facts().unwrap();
/// assert!(host.cpus > 0);
/// ```
pub fn host_facts() -> Result<HostFacts, ProbeError> {
    const HOSTNAME: &str = "/proc/sys/kernel/hostname";
    const CPUINFO: &str = "/proc/cpuinfo";
    const MEMINFO: &str = "/proc/meminfo";
    let hostname = read(HOSTNAME)?.trim().to_string();
    if hostname.is_empty() {
        return Err(failed(HOSTNAME, "empty"));
    }
    let cpus = cpu_count(&read(CPUINFO)?).ok_or_else(|| failed(CPUINFO, "no processor lines"))?;
    let memory_mib =
        mem_total_mib(&read(MEMINFO)?).ok_or_else(|| failed(MEMINFO, "no MemTotal line in kB"))?;
    Ok(HostFacts {
        hostname,
        cpus,
        memory_mib,
    })
}

fn read(path: &str) -> Result<String, ProbeError> {
    fs::read_to_string(path).map_err(|e| failed(path, &e.to_string()))
}

fn failed(path: &str, reason: &str) -> ProbeError {
    ProbeError::Query {
        what: path.to_string(),
        reason: reason.to_string(),
    }
}

/// The number of `processor` entries; `None` when there are none.
fn cpu_count(cpuinfo: &str) -> Option<u32> {
    let count = cpuinfo
        .lines()
        .filter(|line| line.split(':').next().map(str::trim) == Some("processor"))
        .count();
    u32::try_from(count).ok().filter(|&n| n > 0)
}

/// `MemTotal:  16318008 kB` → 15935.
fn mem_total_mib(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_count_counts_processor_entries() {
        let cpuinfo = "processor\t: 0\nmodel name\t: X\n\nprocessor\t: 1\nmodel name\t: X\n";
        assert_eq!(cpu_count(cpuinfo), Some(2));
        assert_eq!(cpu_count("model name: X\n"), None);
    }

    #[test]
    fn mem_total_is_read_in_mib() {
        let meminfo = "MemTotal:       16318008 kB\nMemFree:         1000 kB\n";
        assert_eq!(mem_total_mib(meminfo), Some(15935));
        assert_eq!(mem_total_mib("MemTotal: 12 MB\n"), None);
        assert_eq!(mem_total_mib("MemFree: 12 kB\n"), None);
    }

    #[test]
    fn host_facts_reads_this_machine() {
        let host = host_facts().unwrap();
        assert!(!host.hostname.is_empty());
        assert!(host.cpus > 0);
        assert!(host.memory_mib > 0);
    }
}
