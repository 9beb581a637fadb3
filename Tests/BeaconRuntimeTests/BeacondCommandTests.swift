import Foundation
import TestSupport
import Testing

/// The `beacond` executable as an operator runs it: exit statuses and output.
@Suite struct BeacondCommandTests {
    static func run(_ arguments: [String]) throws -> CommandOutput {
        try runCommand(Executables.built("beacond"), arguments)
    }

    static func temporaryFile(_ text: String, name: String = "beacond.yaml") throws -> String {
        let dir = try Executables.temporaryDirectory()
        let file = dir.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// Every page the commands' help sends a reader to is in the repository.
    @Test func theHelpNamesOnlyPagesThatExist() throws {
        var named: Set<String> = []
        for arguments in [["--help"], ["help", "simulate"], ["help", "replay"]] {
            let text = try Self.run(arguments).stdout.replacingOccurrences(of: "\n", with: " ")
            var rest = Substring(text)
            while let start = rest.range(of: "docs/") {
                let page = rest[start.lowerBound...].prefix { $0.isLetter || $0 == "/" || $0 == "-" || $0 == "." }
                named.insert(String(page.hasSuffix(".") ? page.dropLast() : page))
                rest = rest[start.upperBound...]
            }
        }
        #expect(named.contains("docs/positioning.md"), "\(named)")
        for page in named {
            #expect(
                FileManager.default.fileExists(atPath: Executables.packageRoot.appendingPathComponent(page).path),
                "\(page) is named by beacond's help and does not exist")
        }
    }

    /// The README's `--simulate` line as a user other than root: the packaged paths are not
    /// theirs, and the exit (69) comes with what to do instead.
    @Test(.enabled(if: getuid() == 0)) func aUserWhoMayNotWriteThePackagedPathsIsToldWhatToDo() throws {
        let config = try Self.temporaryFile(
            "api: {socket: /run/beacond-test-\(getpid())/api.sock}\ngateway: {state_dir: /var/lib/beacond-test-\(getpid())}\n"
                + "receivers:\n  - {id: r1, position: {x: 0, y: 0}}\nassets:\n  - {id: tag, beacon: {address: \"D0:5E:00:00:00:01\"}}\n"
        )
        chmod(URL(fileURLWithPath: config).deletingLastPathComponent().path, 0o755)
        chmod(config, 0o644)
        let out = try runCommand(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", Executables.built("beacond").path, "--config",
                config,
                "--simulate", "--no-print-events",
            ])
        #expect(out.status == 69, "\(out.stderr)")
        #expect(out.stderr.contains("event=api.unavailable"), "\(out.stderr)")
        #expect(
            out.stderr.contains(
                "may not create /run/beacond-test-\(getpid())/api.sock: run as root or as the beacond user"))
        #expect(out.stderr.contains("./scripts/run-example puts both in a temporary directory"))
    }

    /// A floor image that is missing or not an image is refused where the file names it.
    @Test func aFloorImageThatIsNotAnImageIsAConfigError() throws {
        let notImage = try Self.temporaryFile("x,y\n1,2\n", name: "plan.png")
        for (file, message) in [
            (notImage, "is not a PNG, JPEG, WebP or SVG image"), ("/nonexistent/plan.png", "No such file or directory"),
        ] {
            let config = try Self.temporaryFile("positioning:\n  floor_image: {file: \(file), scale: 20}\n")
            let out = try Self.run(["--check-config", "--config", config])
            #expect(
                out.status == 78 && out.stderr.contains("\(config):2:23: positioning.floor_image.file: "),
                "\(out.stderr)")
            #expect(out.stderr.contains(message), "\(out.stderr)")
        }
    }

    @Test func checkConfigAcceptsTheExample() throws {
        let out = try Self.run(["--check-config", "--config", "config/example.yaml"])
        #expect(out.status == 0)
        #expect(out.stdout.hasPrefix("config/example.yaml: OK (gateway store-042-gw1, 2 clients, 5 regions"))
    }

    @Test func checkConfigRejectsMistakesWithStatus78() throws {
        let path = try Self.temporaryFile("monitoring:\n  exit_timeout: thirty\nbluetooth:\n  scann: active\n")
        let out = try Self.run(["--check-config", "--config", path])
        #expect(out.status == 78)
        #expect(
            out.stderr == """
                \(path):2:17: monitoring.exit_timeout: expected a duration like "30s", got "thirty"
                \(path):4:3: bluetooth.scann: unknown key (did you mean "scan"?)

                """)
        #expect(out.stdout.isEmpty)
    }

    /// No file is no input (66, EX_NOINPUT), with where to start; a file that is there and
    /// wrong stays 78.
    @Test func aMissingConfigFileIsNoInput() throws {
        let out = try Self.run(["--check-config", "--config", "/nonexistent/beacond.yaml"])
        #expect(out.status == 66)
        #expect(out.stderr.contains("no configuration at /nonexistent/beacond.yaml; write one"))
        #expect(
            out.stderr.contains(
                "/nonexistent/beacond.yaml: cannot read \"/nonexistent/beacond.yaml\": No such file or directory"))
    }

    /// Configs that passed the check and then could not run (issue 25, items 6 and 11).
    @Test func checkConfigRefusesWhatCannotRun() throws {
        let dir = try Executables.temporaryDirectory()
        // A directory as the config read as an empty file and ran on defaults.
        let asDirectory = try Self.run(["--check-config", "--config", dir.path])
        #expect(asDirectory.status == 78 && asDirectory.stderr.contains("is a directory"), "\(asDirectory.stderr)")

        // An empty, whitespace-only or directory secret signs with a key anyone can reproduce.
        let empty = dir.appendingPathComponent("empty.secret").path
        let blank = dir.appendingPathComponent("blank.secret").path
        try "".write(toFile: empty, atomically: true, encoding: .utf8)
        try " \n\t\n".write(toFile: blank, atomically: true, encoding: .utf8)
        for secret in [empty, blank, dir.path] {
            let path = try Self.temporaryFile(
                "webhooks:\n  - id: crm\n    url: https://crm.example/hook\n    secret_file: \(secret)\n")
            let out = try Self.run(["--check-config", "--config", path])
            #expect(out.status == 78, "\(secret): \(out.stdout)")
            #expect(out.stderr.contains("\(path):4:18: webhooks[0].secret_file: cannot use"), "\(out.stderr)")
        }

        // A socket path sun_path cannot hold made the daemon exit 69 at every start.
        let long = "/run/" + String(repeating: "s", count: 120) + ".sock"
        let socket = try Self.run(["--check-config", "--config", try Self.temporaryFile("api: {socket: \(long)}\n")])
        #expect(
            socket.status == 78 && socket.stderr.contains("api.socket: a Unix socket path may be at most 107 bytes"))
    }

    @Test func replayOfTheExampleGivesTheSameEventsTwiceIdsAside() throws {
        let args = ["replay", "--config", "config/example.yaml", "config/example-trace.jsonl"]
        let first = try Self.run(args)
        let second = try Self.run(args)
        #expect(first.status == 0 && second.status == 0)
        func withoutIds(_ text: String) -> [String] {
            text.split(separator: "\n").map {
                $0.replacingOccurrences(of: #""id":"[0-9A-Z]{26}""#, with: "", options: .regularExpression)
            }
        }
        #expect(withoutIds(first.stdout) == withoutIds(second.stdout))
        #expect(first.stdout != second.stdout)  // ids differ between runs: they are unique per process
        // The example shows what it promises: enters, an exit, a dwell and a limit failure.
        for kind in ["region.enter", "region.exit", "region.dwell", "region.failed", "region.state", "ranging"] {
            #expect(first.stdout.contains("\"type\":\"beacond.\(kind)\""), "no \(kind) in the example replay")
        }
        #expect(first.stderr.contains("line 8: request refused: region_limit_exceeded"))
    }

    @Test func replayReportsMalformedLinesOnStderrAndGoesOn() throws {
        let trace = try Self.temporaryFile(
            """
            {"t": 1763805600, "receiver": "hci0", "address": "A", "rssi": -60}
            garbage
            {"t": 1763805601, "receiver": "hci0", "rssi": -60}

            """, name: "trace.jsonl")
        let out = try Self.run(["replay", "--summary", "--config", "config/example.yaml", trace])
        #expect(out.status == 0)
        // The first record waits for the next to confirm its time; none comes, and at the end
        // of the trace it is replayed all the same.
        #expect(
            out.stderr == """
                \(trace): line 2: invalid JSON at byte 1: unexpected character 'g'; skipped
                \(trace): line 3: missing or non-string "address"; skipped
                replayed 1 sightings from 3 lines, 2 skipped, 0 events

                """)
    }
}
