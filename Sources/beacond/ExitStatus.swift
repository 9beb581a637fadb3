import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The version beacond reports (`--version`, `/v1/status`, a site's gateway info); the Makefile's VERSION matches it.
enum BeaconVersion {
    static let string = "0.1.0"
}

/// sysexits.h values the daemon promises (SPEC §5).
enum ExitStatus {
    static let noInput: Int32 = 66
    static let unavailable: Int32 = 69
    static let config: Int32 = 78
}
