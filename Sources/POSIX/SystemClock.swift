#if canImport(Glibc)
    import Glibc
#endif

/// The kernel's clocks in nanoseconds, read in one place. Which clock is which matters:
/// `realtime` is what events are stamped with (it can step), `boot` measures time passed
/// across suspend and wall-clock steps alike, `monotonic` is for short intervals.
public enum SystemClock {
    public static func nanoseconds(_ clock: clockid_t) -> Int64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    public static var realtime: Int64 { nanoseconds(CLOCK_REALTIME) }
    public static var boot: Int64 { nanoseconds(CLOCK_BOOTTIME) }
    public static var monotonic: Int64 { nanoseconds(CLOCK_MONOTONIC) }
    public static var monotonicMillis: Int64 { monotonic / 1_000_000 }
}
