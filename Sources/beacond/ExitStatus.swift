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
    /// EX_OSFILE: a library the configuration needs (libmosquitto for a site) cannot be loaded.
    /// The unit does not restart on it: only installing the package mends it.
    static let missingLibrary: Int32 = 72
    static let config: Int32 = 78
}
