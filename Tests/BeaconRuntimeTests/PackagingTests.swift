import Foundation
import TestSupport
import Testing

/// `make deb` builds a package that installs the binaries, the unit, the user and an example
/// configuration; extracted into a scratch root, the unit passes `systemd-analyze verify`
/// and its security exposure is at most 2.0.
@Suite(.serialized) struct PackagingTests {
    @Test func theDebianPackageInstallsIntoAScratchRoot() throws {
        let make = try runCommand(
            URL(fileURLWithPath: "/usr/bin/make"), ["deb", "BUILD=debug", "STATIC=0", "NOBUILD=1"])
        #expect(make.status == 0, "\(make.stderr)")
        let deb = Executables.packageRoot.appendingPathComponent("dist/beacond_0.1.0_amd64.deb").path
        let info = try runCommand(URL(fileURLWithPath: "/usr/bin/dpkg-deb"), ["--info", deb])
        #expect(info.stdout.contains("Package: beacond") && info.stdout.contains("conffiles"))
        let root = try Executables.temporaryDirectory()
        let unpack = try runCommand(URL(fileURLWithPath: "/usr/bin/dpkg-deb"), ["-x", deb, root.path])
        #expect(unpack.status == 0)
        for file in [
            "usr/bin/beacond", "usr/bin/beaconctl", "lib/systemd/system/beacond.service",
            "usr/lib/sysusers.d/beacond.conf", "etc/beacond/beacond.yaml", "usr/share/doc/beacond/README.md",
        ] {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), "\(file)")
        }
        // The packaged binary runs and accepts the packaged configuration
        let check = try runCommand(
            root.appendingPathComponent("usr/bin/beacond"),
            ["--check-config", "--config", root.appendingPathComponent("etc/beacond/beacond.yaml").path])
        #expect(check.status == 0, "\(check.stderr)")
        let sysusers = try String(
            contentsOf: root.appendingPathComponent("usr/lib/sysusers.d/beacond.conf"), encoding: .utf8)
        #expect(sysusers.contains("u beacond") && sysusers.contains("m beacond bluetooth"))
        // The unit, with its commands pointed at the scratch root, verifies clean
        let unit = root.appendingPathComponent("lib/systemd/system/beacond.service").path
        let unitText = try String(contentsOfFile: unit, encoding: .utf8)
        #expect(unitText.contains("Type=notify") && unitText.contains("WatchdogSec="))
        let rooted = try Executables.temporaryDirectory().appendingPathComponent("beacond.service")
        try unitText.replacingOccurrences(of: "/usr/bin/beacond", with: root.path + "/usr/bin/beacond")
            .write(to: rooted, atomically: true, encoding: .utf8)
        let verify = try runCommand(URL(fileURLWithPath: "/usr/bin/systemd-analyze"), ["verify", rooted.path])
        #expect(verify.status == 0 && verify.stderr.isEmpty, "\(verify.stderr)")
        let security = try runCommand(
            URL(fileURLWithPath: "/usr/bin/systemd-analyze"), ["security", "--offline=true", unit])
        let exposure = security.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") } ?? ""
        let level = Double(exposure.split(separator: " ").first { Double($0) != nil } ?? "") ?? 10
        #expect(level <= 2.0, "\(exposure)")
    }

    @Test func makeInstallHonoursPrefixAndDestdir() throws {
        let root = try Executables.temporaryDirectory()
        let make = try runCommand(
            URL(fileURLWithPath: "/usr/bin/make"),
            ["install", "DESTDIR=\(root.path)", "PREFIX=/opt/beacond", "BUILD=debug", "STATIC=0", "NOBUILD=1"])
        #expect(make.status == 0, "\(make.stderr)")
        for file in ["opt/beacond/bin/beacond", "opt/beacond/bin/beaconctl", "opt/beacond/share/doc/beacond/api.md"] {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), "\(file)")
        }
        let unit = try String(
            contentsOf: root.appendingPathComponent("lib/systemd/system/beacond.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/opt/beacond/bin/beacond ") && !unit.contains("/usr/bin/beacond"))
        // An operator's configuration is never overwritten
        let config = root.appendingPathComponent("etc/beacond/beacond.yaml")
        try "gateway: {id: mine}\n".write(to: config, atomically: true, encoding: .utf8)
        _ = try runCommand(
            URL(fileURLWithPath: "/usr/bin/make"),
            ["install", "DESTDIR=\(root.path)", "PREFIX=/opt/beacond", "BUILD=debug", "STATIC=0", "NOBUILD=1"])
        #expect(try String(contentsOf: config, encoding: .utf8) == "gateway: {id: mine}\n")
    }
}
