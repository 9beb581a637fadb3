import Foundation
import TestSupport
import Testing

/// `make deb` builds a package that installs the binaries, the unit, the user and an example
/// configuration; extracted into a scratch root, the unit passes `systemd-analyze verify`
/// and its security exposure is at most 2.0.
@Suite(.serialized) struct PackagingTests {
    /// `make deb` from the debug build already there; the package's path.
    func buildPackage() throws -> String {
        let make = try runCommand(
            URL(fileURLWithPath: "/usr/bin/make"), ["deb", "BUILD=debug", "STATIC=0", "NOBUILD=1"])
        #expect(make.status == 0, "\(make.stderr)")
        return Executables.packageRoot.appendingPathComponent("dist/beacond_0.1.0_amd64.deb").path
    }

    @Test func theDebianPackageInstallsIntoAScratchRoot() throws {
        let deb = try buildPackage()
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
        // Webhook receivers and brokers on the gateway itself (Node-RED, Home Assistant) are
        // the normal set-up: the sandbox must not deny loopback.
        let denied = unitText.split(separator: "\n").filter { $0.hasPrefix("IPAddressDeny=") }
        #expect(denied == ["IPAddressDeny=link-local multicast"], "\(denied)")
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

    /// Debian policy as lintian (Debian's own checker) reads it: no error and no warning but
    /// those packaging/debian/lintian-overrides justifies. Two tags belong to this debug,
    /// dynamically linked build only and are left out here: the shipped build (make deb) is
    /// stripped and links the Swift runtime statically (BENCHMARKS.md has its lintian run).
    @Test func lintianFindsNothingInThePackage() throws {
        let deb = try buildPackage()
        let lintian = try runCommand(
            URL(fileURLWithPath: "/usr/bin/lintian"),
            [
                "--fail-on", "error,warning", "--tag-display-limit", "0",
                "--suppress-tags", "custom-library-search-path,unstripped-binary-or-object", deb,
            ])
        let findings = (lintian.stdout + lintian.stderr).split(separator: "\n").filter {
            !$0.contains("root privileges")
        }
        #expect(lintian.status == 0 && findings.isEmpty, "\(findings.joined(separator: "\n"))")
        let fields = try runCommand(URL(fileURLWithPath: "/usr/bin/dpkg-deb"), ["--field", deb])
        #expect(fields.stdout.contains("\nRecommends: bluez\n") && !fields.stdout.contains("Depends: bluez"))
        #expect(!fields.stdout.contains("@localhost") && fields.stdout.contains("Maintainer: beacond developers <"))

        // The man pages are written from the commands' definitions: every subcommand and
        // option --help has is in them, and man renders them without a warning.
        let root = try Executables.temporaryDirectory()
        #expect(try runCommand(URL(fileURLWithPath: "/usr/bin/dpkg-deb"), ["-x", deb, root.path]).status == 0)
        for (tool, expected) in [
            ("beaconctl", ["beaconctl alarm", "\\-\\-last", "BEACOND_SOCKET", "beaconctl doctor"]),
            ("beacond", ["\\-\\-check\\-config", "\\-\\-simulate", "beacond replay", "EXIT STATUS"]),
        ] {
            let page = root.appendingPathComponent("usr/share/man/man1/\(tool).1.gz").path
            let text = try runCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", "gzip -dc \(page)"]).stdout
            for word in expected { #expect(text.contains(word), "\(tool).1 lacks \(word)") }
            let rendered = try runCommand(
                URL(fileURLWithPath: "/usr/bin/man"), ["--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", page],
                environment: ["LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"])
            #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(tool): \(rendered.stderr)")
        }
        // md5sums name every file and match it
        let sums = try runCommand(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "cd \(root.path) && dpkg-deb -I \(deb) md5sums | md5sum --check --quiet"])
        #expect(sums.status == 0, "\(sums.stdout)\(sums.stderr)")
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

    /// dpkg itself installs and purges the package in a scratch root (its maintainer scripts
    /// run without chroot, against `DPKG_ROOT`): install creates the user and groups, purge
    /// leaves no file of ours, no state and no account behind. dpkg needs root for this.
    @Test(.enabled(if: getuid() == 0)) func purgeLeavesNothingBehind() throws {
        let deb = try buildPackage()
        let root = try Executables.temporaryDirectory()
        let fm = FileManager.default
        for dir in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "etc"] {
            try fm.createDirectory(at: root.appendingPathComponent(dir), withIntermediateDirectories: true)
        }
        try "".write(to: root.appendingPathComponent("var/lib/dpkg/status"), atomically: true, encoding: .utf8)
        // bluez's group, as on a gateway: ours must leave it as it found it
        let bluetooth = "bluetooth:x:120:\n"
        try bluetooth.write(to: root.appendingPathComponent("etc/group"), atomically: true, encoding: .utf8)
        let dpkg = { (arguments: [String]) throws -> CommandOutput in
            try runCommand(
                URL(fileURLWithPath: "/usr/bin/dpkg"),
                ["--root=\(root.path)", "--force-script-chrootless", "--force-depends"] + arguments)
        }
        let install = try dpkg(["-i", deb])
        #expect(install.status == 0, "\(install.stderr)")
        let passwd = try String(contentsOf: root.appendingPathComponent("etc/passwd"), encoding: .utf8)
        let group = try String(contentsOf: root.appendingPathComponent("etc/group"), encoding: .utf8)
        #expect(passwd.contains("beacond:x:") && group.contains("beacond-admin:x:"))
        #expect(group.contains("bluetooth:x:120:beacond"), "beacond joins bluez's group")
        // The daemon would have written state; an operator would have edited the configuration
        let state = root.appendingPathComponent("var/lib/beacond")
        try fm.createDirectory(at: state, withIntermediateDirectories: true)
        try "x".write(to: state.appendingPathComponent("beacond.sqlite"), atomically: true, encoding: .utf8)
        try "gateway: {id: mine}\n".write(
            to: root.appendingPathComponent("etc/beacond/beacond.yaml"), atomically: true, encoding: .utf8)

        let purge = try dpkg(["--purge", "beacond"])
        #expect(purge.status == 0, "\(purge.stderr)")
        // What may remain: dpkg's own database and the account files (with shadow's backups)
        let accountFiles: Set<String> = [
            "passwd", "group", "shadow", "gshadow", "passwd-", "group-", "shadow-", "gshadow-", ".pwd.lock",
        ]
        var left: [String] = []
        let walker = fm.enumerator(atPath: root.path)!
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = fm.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            if path.hasPrefix("var/lib/dpkg/") || isDirectory.boolValue { continue }
            if path.hasPrefix("etc/"), accountFiles.contains(String(path.dropFirst(4))) { continue }
            left.append(path)
        }
        #expect(left.isEmpty, "left behind: \(left)")
        #expect(
            !fm.fileExists(atPath: state.path) && !fm.fileExists(atPath: root.appendingPathComponent("usr/bin").path))
        for file in ["passwd", "group", "shadow", "gshadow"] {
            let text = (try? String(contentsOf: root.appendingPathComponent("etc/\(file)"), encoding: .utf8)) ?? ""
            #expect(!text.contains("beacond"), "etc/\(file) still names beacond: \(text)")
        }
        let groupAfter = try String(contentsOf: root.appendingPathComponent("etc/group"), encoding: .utf8)
        #expect(groupAfter == bluetooth)
    }
}
