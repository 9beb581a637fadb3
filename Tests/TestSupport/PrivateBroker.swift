import Foundation

/// A real mosquitto (Debian's `mosquitto`) on a free loopback port, with a private config:
/// anonymous access, no persistence unless asked, its log in a temporary directory. Stopped, killed and
/// restarted on the same port by the tests, as a store's broker is.
public final class PrivateBroker: @unchecked Sendable {
    public let port: Int
    public let dir: URL
    private var process: Process?

    public static let binary = "/usr/sbin/mosquitto"

    /// `users`: name and password each (`mosquitto_passwd`), and anonymous access refused.
    /// `tls`: the listener speaks TLS 1.2+ with a certificate for 127.0.0.1 and localhost,
    /// signed by a CA made for the test (`caFile`), as `openssl` makes them. `persistent`:
    /// sessions and retained messages survive a restart, as on a store's broker. `extra`:
    /// more configuration lines (a bridge to another broker).
    public init(
        users: [String: String] = [:], tls: Bool = false, persistent: Bool = false, extra: String = "",
        lockedDown: Bool = false
    ) throws {
        dir = try Executables.temporaryDirectory()
        port = try freeLoopbackPort()
        self.users = users
        var config = """
            listener \(port) 127.0.0.1
            allow_anonymous \(users.isEmpty)
            persistence \(persistent)
            persistence_location \(dir.path)/
            log_dest none

            """ + extra
        if lockedDown { config += try Self.shippedLockDown(in: dir) }
        // mosquitto drops to its own user when started as root, and writes its file then.
        if persistent { chmod(dir.path, 0o777) }
        if tls {
            try makeCertificates()
            let path = dir.path
            config += "cafile \(path)/ca.crt\ncertfile \(path)/server.crt\nkeyfile \(path)/server.key\n"
            config += "tls_version tlsv1.2\n"
        }
        if !users.isEmpty {
            let file = dir.appendingPathComponent("passwords")
            for (user, password) in users {
                let made = try runCommand(
                    URL(fileURLWithPath: "/usr/bin/mosquitto_passwd"),
                    (FileManager.default.fileExists(atPath: file.path) ? ["-b"] : ["-c", "-b"]) + [
                        file.path, user, password,
                    ])
                guard made.status == 0 else { throw TestFailure("mosquitto_passwd: \(made.stderr)") }
            }
            // mosquitto drops to its own user when started as root, and reads the file then.
            chmod(file.path, 0o644)
            chmod(dir.path, 0o755)
            config += "password_file \(file.path)\n"
        }
        try config.write(to: dir.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    deinit { stop() }

    /// The users and passwords the broker was made with (`mosquitto_pub` as one of them).
    public let users: [String: String]

    /// The shipped configuration (config/mosquitto/beacond-site.conf and its ACL, as
    /// docs/sites.md tells an operator to install them), on the test's port and files: its
    /// `listener` and file paths replaced, every other line as shipped.
    static func shippedLockDown(in dir: URL) throws -> String {
        let shipped = Executables.packageRoot.appendingPathComponent("config/mosquitto")
        let acl = dir.appendingPathComponent("beacond-site.acl")
        try FileManager.default.copyItem(at: shipped.appendingPathComponent("beacond-site.acl"), to: acl)
        chmod(acl.path, 0o644)
        let conf = try String(contentsOf: shipped.appendingPathComponent("beacond-site.conf"), encoding: .utf8)
        return conf.split(separator: "\n").filter {
            !$0.hasPrefix("listener ") && !$0.hasPrefix("password_file ") && !$0.hasPrefix("per_listener_settings")
        }.map { $0.replacingOccurrences(of: "/etc/mosquitto/beacond-site.acl", with: acl.path) }
            .joined(separator: "\n") + "\n"
    }

    public var url: String { "\(caFile == nil ? "mqtt" : "mqtts")://127.0.0.1:\(port)" }

    /// The test CA's certificate, for a TLS broker.
    public var caFile: String? {
        let path = dir.appendingPathComponent("ca.crt").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    private func makeCertificates() throws {
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        let d = dir.path
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(
            toFile: d + "/san.ext", atomically: true, encoding: .utf8)
        for arguments in [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/ca.key", "-out", d + "/ca.crt",
                "-subj", "/CN=beacond-test-ca", "-days", "2",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/server.key", "-out", d + "/server.csr",
                "-subj", "/CN=localhost",
            ],
            [
                "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.crt", "-CAkey", d + "/ca.key",
                "-CAcreateserial", "-out", d + "/server.crt", "-days", "2", "-extfile", d + "/san.ext",
            ],
        ] {
            let made = try runCommand(openssl, arguments)
            guard made.status == 0 else { throw TestFailure("openssl \(arguments[0]): \(made.stderr)") }
        }
        // mosquitto drops to its own user when started as root, and reads them then.
        for file in ["ca.crt", "server.crt", "server.key"] { chmod(d + "/" + file, 0o644) }
        chmod(d, 0o755)
    }

    /// Starts the broker and waits until it accepts connections.
    public func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["-c", dir.appendingPathComponent("mosquitto.conf").path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        try eventually("mosquitto to listen on \(port)") { Self.accepts(port) }
    }

    /// SIGSTOP: the broker holds its connections open and answers nothing (a hung broker).
    public func pause() { if let p = process { kill(p.processIdentifier, SIGSTOP) } }

    /// SIGCONT after `pause()`.
    public func resume() { if let p = process { kill(p.processIdentifier, SIGCONT) } }

    /// SIGTERM, and waits for it to exit (SIGKILL after 5 s).
    public func stop() {
        guard let p = process else { return }
        process = nil
        let pid = p.processIdentifier
        kill(pid, SIGTERM)
        for _ in 0..<500 where p.isRunning { usleep(10_000) }
        if p.isRunning { kill(pid, SIGKILL) }
        p.waitUntilExit()
    }

    /// Publishes as `mosquitto_pub` does: `-m` text, or `-f` a file for raw bytes; as `user`
    /// (one of `users`) when given. MQTT 5, QoS 1: the broker's answer is in the result, so a
    /// publish an ACL refuses is told apart (mosquitto_pub still exits 0 for it).
    @discardableResult
    public func publish(_ topic: String, _ message: String, retain: Bool = false, as user: String? = nil) throws
        -> CommandOutput
    {
        let login = user.map { ["-u", $0, "-P", users[$0] ?? ""] } ?? []
        let r = try runCommand(
            URL(fileURLWithPath: "/usr/bin/mosquitto_pub"),
            ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-m", message, "-V", "mqttv5", "-q", "1", "-d"] + login
                + (retain ? ["-r"] : []))
        guard r.status == 0 else { throw TestFailure("mosquitto_pub: \(r.stderr)") }
        return r
    }

    public func publish(_ topic: String, file: URL) throws {
        let r = try runCommand(
            URL(fileURLWithPath: "/usr/bin/mosquitto_pub"),
            ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-f", file.path])
        guard r.status == 0 else { throw TestFailure("mosquitto_pub: \(r.stderr)") }
    }

    /// The retained message of `topic` (as `mosquitto_sub` gets it), or nil when there is
    /// none. Subscribed together with `$SYS/broker/version`, which mosquitto always retains:
    /// the broker sends the topic's retained message first if there is one, so the first
    /// message answers at once either way (`-W` cannot: it needs SIGALRM, which a test
    /// process may hand its children blocked).
    public func retained(_ topic: String) throws -> String? {
        // On a locked-down broker, as the read-only consumer `wms` (config/mosquitto's ACL).
        let login = users["wms"].map { ["-u", "wms", "-P", $0] } ?? []
        let r = try runCommand(
            URL(fileURLWithPath: "/usr/bin/mosquitto_sub"),
            ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-t", "$SYS/broker/version", "-C", "1", "-F", "%t %p"]
                + login)
        let line = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard r.status == 0, line.hasPrefix(topic + " ") else { return nil }
        let text = String(line.dropFirst(topic.count + 1))
        return text.isEmpty ? nil : text
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// A loopback TCP port nothing listens on now, below the kernel's ephemeral range (Linux:
/// 32768 and up). Outgoing connections take their local ports from that range, so a port
/// from it could be taken by some test's client while a broker is stopped, and the broker
/// would not listen on it again; tests that run at the same time each get their own.
public func freeLoopbackPort() throws -> Int {
    for _ in 0..<200 {
        let port = Int.random(in: 20_000..<32_000)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if bound { return port }
    }
    throw TestFailure("no free port in 20000..<32000")
}
