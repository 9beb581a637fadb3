import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// Who is on the other end of a Unix socket, as the kernel says (`SO_PEERCRED`,
/// `SO_PEERGROUPS`): the API's admin check needs no password and cannot be spoofed.
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups at connect time (empty when the kernel cannot say).
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// Reads the credentials of a connected Unix socket.
    static func of(socket fd: Int32) -> PeerCredentials? {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard clinux_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        var groups = [gid_t](repeating: 0, count: 64)
        var groupBytes = socklen_t(groups.count * MemoryLayout<gid_t>.size)
        let soPeerGroups: Int32 = 59  // Linux ≥ 4.13
        if getsockopt(fd, SOL_SOCKET, soPeerGroups, &groups, &groupBytes) == 0 {
            groups.removeLast(groups.count - Int(groupBytes) / MemoryLayout<gid_t>.size)
        } else {
            groups = []
        }
        return PeerCredentials(pid: pid, uid: uid, gid: gid, groups: groups)
    }

    /// Root, or a member of `group` (primary or supplementary). A group that does not
    /// exist admits only root.
    public func isAdmin(group: String) -> Bool {
        if uid == 0 { return true }
        guard let entry = getgrnam(group) else { return false }
        let admin = entry.pointee.gr_gid
        return gid == admin || groups.contains(admin)
    }
}
