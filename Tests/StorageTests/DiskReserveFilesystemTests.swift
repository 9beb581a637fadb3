import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// The reserve on the filesystems a gateway's state directory is found on, each made in a
/// loop-mounted image and filled to the last byte after the reserve was made: alerts and
/// states written into it then must reach the disk and read back. On btrfs every write goes
/// to new blocks unless the file is no-copy-on-write; without that flag the first write
/// after the disk filled failed (ENOSPC). Needs root for the mounts (CI runs the tests as
/// root), and mkfs for each (scripts/deps installs btrfs-progs and xfsprogs).
@Suite(.serialized) struct DiskReserveFilesystemTests {
    /// The smallest image each mkfs accepts (xfs wants 300 MB, btrfs about 114 MB), sparse,
    /// kept in memory when /dev/shm is there, so that filling it costs no disk.
    static let imageMegabytes = ["ext4": 32, "btrfs": 128, "xfs": 300]

    /// A fresh filesystem of `type` mounted on a new directory; the image and mount are undone
    /// by the returned closure.
    static func mount(_ type: String) throws -> (URL, () -> Void) {
        let base =
            FileManager.default.fileExists(atPath: "/dev/shm")
            ? URL(fileURLWithPath: "/dev/shm").appendingPathComponent("beacond-test-\(UUID().uuidString)")
            : try Executables.temporaryDirectory()
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        let image = base.appendingPathComponent("\(type).img")
        let mountPoint = base.appendingPathComponent("mnt")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        let undo = {
            _ = try? runCommand(URL(fileURLWithPath: "/bin/umount"), ["-l", mountPoint.path])
            try? FileManager.default.removeItem(at: base)
        }
        let size = try runCommand(
            URL(fileURLWithPath: "/usr/bin/truncate"), ["-s", "\(imageMegabytes[type]!)M", image.path])
        let force = type == "ext4" ? "-F" : "-f"
        let made = try runCommand(URL(fileURLWithPath: "/usr/sbin/mkfs.\(type)"), ["-q", force, image.path])
        let mounted = try runCommand(URL(fileURLWithPath: "/bin/mount"), ["-o", "loop", image.path, mountPoint.path])
        guard size.status == 0, made.status == 0, mounted.status == 0 else {
            undo()
            throw SetupError(text: "\(type): \(size.stderr) \(made.stderr) \(mounted.stderr)")
        }
        return (mountPoint, undo)
    }

    struct SetupError: Error, CustomStringConvertible {
        var text: String
        var description: String { text }
    }

    static func event(_ n: Int) -> StateStore.StoredEvent {
        .init(id: "E\(n)", type: "beacond.zone.enter", time: .seconds(Int64(n)), body: "{\"n\":\(n),\"pad\":\"\(n)\"}")
    }

    @Test(.enabled(if: getuid() == 0), arguments: ["ext4", "xfs", "btrfs"])
    func alertsWrittenToTheReserveOnAFullDiskReadBack(filesystem: String) throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/mkfs.\(filesystem)"),
            "mkfs.\(filesystem) is missing: scripts/deps installs it")
        let (directory, undo) = try Self.mount(filesystem)
        defer { undo() }
        let path = directory.appendingPathComponent(DiskReserve.fileName).path
        var reserve = try DiskReserve(path: path)

        let failure = try fillFilesystem(at: directory).failure
        #expect(failure == nil, "\(failure ?? "")")
        _ = try runCommand(URL(fileURLWithPath: "/bin/sync"), [])

        // 40 batches of 25 alerts, each synced, and the states after every batch
        for batch in 0..<40 {
            let events = (0..<25).map { Self.event(batch * 25 + $0) }
            do {
                #expect(try reserve.append(events) == 25)
                try reserve.write(DiskReserveTests.states(.inside, zoneSince: Int64(batch)))
            } catch {
                Issue.record("\(filesystem), batch \(batch), the disk full: \(error)")
                reserve.close()
                return
            }
        }
        reserve.close()
        var again = try DiskReserve(path: path)
        defer { again.close() }
        let contents = again.read()
        #expect(contents.events.count == 1000)
        #expect(contents.events.last == Self.event(999))
        #expect(contents.states?.assets == DiskReserveTests.states(.inside, zoneSince: 39).assets)
    }
}
