import Foundation
import TestSupport
import Testing

/// The package on a booted Debian 12 (issue 44): installed with apt on a minimal system
/// (debootstrap's minbase, systemd as init, no procps), its unit driven with `systemctl` as an
/// operator drives it. In PackagingTests' suite, which is serialized, because both build
/// `dist/` with `make deb`.
///
/// The package is the debug build's (`make deb BUILD=debug STATIC=0`): it links the Swift
/// runtime dynamically from the toolchain, which is bound read-only at the same path. The
/// shipped build links it statically; everything else (the unit, the user, the maintainer
/// scripts, the Debian libraries) is the package's own.
extension PackagingTests {
    static let booted = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-nspawn")
    static let swiftRuntime = "/opt/swift/usr/lib/swift/linux"

    /// A container with the package installed and its service started by the package's postinst.
    func bootWithPackage() throws -> BootedDebian {
        let deb = try buildPackage()
        let staged = try Executables.temporaryDirectory()
        try FileManager.default.copyItem(atPath: deb, toPath: staged.appendingPathComponent("beacond.deb").path)
        let gateway = try BootedDebian(binds: [(staged.path, "/mnt/package"), (Self.swiftRuntime, Self.swiftRuntime)])
        let install = try gateway.run("apt-get install -y -q /mnt/package/beacond.deb")
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
        try gateway.waitUntil("beacond to start") {
            try gateway.properties("beacond", ["ActiveState"])["ActiveState"] == "active"
        }
        return gateway
    }

    /// One region of the default UUID, entered on one sighting, its events to `receiver`.
    static func gatewayConfig(receiver: WebhookReceiver, extra: String = "") -> String {
        """
        gateway:
          state_dir: /var/lib/beacond
        api:
          socket: /run/beacond/api.sock
          admin_group: beacond-admin
        monitoring:
          enter_sightings: 1
        clients:
          - id: app
            regions:
              - {id: store, uuid: \(APIDaemon.uuid)}
        webhooks:
          - {id: crm, url: "\(receiver.url)", events: ["region.*"], batch: {max_events: 1, max_delay: 0s}}
        \(extra)
        """
    }

    /// The journal's lines for the unit (messages only), since the boot.
    static func journal(_ gateway: BootedDebian, _ filter: String = "") throws -> String {
        try gateway.run("journalctl -q --no-pager -o cat -u beacond \(filter)").stdout
    }

    @Test(.enabled(if: booted, "boots a container: needs root and systemd-nspawn (scripts/deps)"))
    func thePackageRunsUnderABootedSystemd() throws {
        let gateway = try bootWithPackage()
        defer { gateway.shutDown() }
        // Started by postinst as user beacond, under the full sandbox, ready (Type=notify)
        let started = try gateway.properties("beacond", ["MainPID", "StatusText", "User", "NRestarts"])
        #expect(started["User"] == "beacond" && started["NRestarts"] == "0", "\(started)")
        let user = try gateway.run("stat -c %U /proc/\(started["MainPID"] ?? "0")")
        #expect(user.stdout.contains("beacond"), "\(user.stdout)\(user.stderr)")
        try gateway.waitUntil("a status text") {
            try gateway.properties("beacond", ["StatusText"])["StatusText"]?.contains("outbox") == true
        }
        let status = try gateway.run("beaconctl status")
        #expect(status.status == 0 && status.stdout.contains("beacond-gateway"), "\(status.stdout)\(status.stderr)")

        // The journal has the daemon's own fields (sd_journal from inside the sandbox)
        let fields = try gateway.run("journalctl -q --no-pager -u beacond BEACOND_EVENT=beacond.started -o verbose")
        #expect(
            fields.stdout.contains("SYSLOG_IDENTIFIER=beacond") && fields.stdout.contains("CODE_FILE="),
            "\(fields.stdout)")

        // A reload applies a changed file: the region and the webhook are there afterwards
        let receiver = try WebhookReceiver()
        try gateway.write(Self.gatewayConfig(receiver: receiver), to: "/etc/beacond/beacond.yaml")
        let reload = try gateway.run("systemctl reload beacond")
        let reloadJournal = try Self.journal(gateway)
        #expect(reload.status == 0, "systemctl reload: \(reload.stderr)\n\(reloadJournal.suffix(2000))")
        try gateway.waitUntil("the reload to apply") {
            try gateway.run("beaconctl regions").stdout.contains("store")
        }
        #expect(!(try Self.journal(gateway, "BEACOND_EVENT=config.reloaded")).isEmpty)

        // A sighting puts the tag in the region (its first state: inside); the webhook reaches the receiver on the gateway's
        // loopback from inside the sandbox (IPAddressDeny leaves loopback open)
        let sighting = APIDaemon.sighting(major: 7).replacingOccurrences(of: "'", with: "")
        let posted = try gateway.run(
            "printf '%s\\n' '\(sighting)' | curl -sS --unix-socket /run/beacond/api.sock --data-binary @- http://localhost/v1/sightings"
        )
        #expect(posted.stdout.contains("\"accepted\":1"), "\(posted.stdout)\(posted.stderr)")
        try receiver.waitUntil("the webhook delivery") { requests in
            requests.contains { request in
                (request["events"] as? [[String: Any]] ?? []).contains {
                    ($0["subject"] as? String) == "app/store"
                }
            }
        }

        // kill -9: systemd restarts it (Restart=on-failure)
        let killed = try gateway.run("systemctl kill --signal=KILL --kill-whom=main beacond")
        #expect(killed.status == 0)
        try gateway.waitUntil("a restart after kill -9") {
            let now = try gateway.properties("beacond", ["ActiveState", "NRestarts", "MainPID"])
            return now["ActiveState"] == "active" && now["NRestarts"] == "1" && now["MainPID"] != started["MainPID"]
        }

        // A broken file: the reload is refused with the located error, the daemon runs on
        let broken = Self.gatewayConfig(receiver: receiver, extra: "bogus_key: 1")
        try gateway.write(broken, to: "/etc/beacond/beacond.yaml")
        let refused = try gateway.run("systemctl reload beacond")
        #expect(refused.status != 0, "a reload of a broken file must fail")
        #expect(try gateway.properties("beacond", ["ActiveState"])["ActiveState"] == "active")
        // ... and a restart fails once: no restart loop (RestartPreventExitStatus=78)
        let restart = try gateway.run("systemctl restart beacond")
        #expect(restart.status != 0)
        // A restart systemd means to make shows as activating/auto-restart for RestartSec=2s;
        // failed/failed is the end: no restart is pending.
        try gateway.waitUntil("the failed start") {
            let now = try gateway.properties("beacond", ["ActiveState", "SubState"])
            return now["ActiveState"] == "failed" && now["SubState"] == "failed"
        }
        let failed = try gateway.properties("beacond", ["ActiveState", "NRestarts", "ExecMainStatus", "Result"])
        #expect(failed["ActiveState"] == "failed" && failed["ExecMainStatus"] == "78", "\(failed)")
        #expect(failed["NRestarts"] == "0", "restarted a configuration error: \(failed)")
        let line =
            broken.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("bogus_key") }!
            + 1
        let journal = try Self.journal(gateway)
        #expect(journal.contains("/etc/beacond/beacond.yaml:\(line):1: bogus_key"), "\(journal.suffix(3000))")

        // Mended, started again; a stop is clean and said so
        try gateway.write(Self.gatewayConfig(receiver: receiver), to: "/etc/beacond/beacond.yaml")
        #expect(try gateway.run("systemctl start beacond").status == 0)
        let stop = try gateway.run("systemctl stop beacond")
        #expect(stop.status == 0)
        let after = try gateway.properties("beacond", ["ActiveState", "ExecMainStatus", "Result"])
        #expect(after["ActiveState"] == "inactive" && after["Result"] == "success", "\(after)")
        #expect(!(try Self.journal(gateway, "BEACOND_EVENT=beacond.stopped")).isEmpty)

        // libdispatch renicing a worker, refused under the sandbox, would say so: the daemon
        // starts none, through starts, reloads and stops
        #expect(!(try Self.journal(gateway)).contains("Failed to set thread priority"))

        // The sandbox as systemd itself rates it on the booted system
        let security = try gateway.run("systemd-analyze security --no-pager beacond.service")
        let exposure = security.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") } ?? ""
        let level = Double(exposure.split(separator: " ").first { Double($0) != nil } ?? "") ?? 10
        #expect(level <= 2.0, "\(exposure)")
    }
}
