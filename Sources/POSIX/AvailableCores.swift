import CLinux

/// The cores this process may run on: what `sched_getaffinity` allows it (a container's CPU
/// set or systemd's `CPUAffinity=`), not how many the machine has.
public func availableCores() -> Int { Int(clinux_available_cpus()) }
