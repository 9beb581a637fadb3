import BeaconCore

/// `http:` (extension): the read-only TCP listener for what cannot reach the Unix socket — a
/// Prometheus on another machine, a browser on the floor view (docs/configuration.md).
public struct HTTPListenSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// Every request must carry this file's token (`Authorization: Bearer`, or the page's
    /// cookie); nil: none is asked for.
    public var tokenFile: String?
    /// Listen on an address other than loopback without a token: said, never assumed.
    public var allowUnauthenticated = false

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// 127.0.0.0/8 (as a dotted quad), ::1 and localhost: reachable from this machine only.
    /// A name that merely starts with "127." (`127.attacker.example`) is not.
    public var isLoopback: Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        let quad =
            parts.count == 4
            && parts.allSatisfy { p in !p.isEmpty && p.count <= 3 && p.allSatisfy { ("0"..."9").contains($0) } }
            && parts.allSatisfy { Int($0)! <= 255 }
        return host == "localhost" || host == "::1" || (quad && parts[0] == "127")
    }
}

extension SectionReader {
    func readHTTP(_ node: Node) -> HTTPListenSettings? {
        let fields: [ConfigField<HTTPListenSettings>] = [
            .init("token_file") { r, n, p, http in http.tokenFile = r.readableFile(n, p) },
            .flag("allow_unauthenticated", \.allowUnauthenticated),
        ]
        // The address first: the rest is read into a listener that has one.
        guard let f = reader.mapping(node, "http", allowed: ["listen"] + fields.map(\.key)),
            let listenNode = required(f, "listen", in: node), let text = reader.string(listenNode, f.path("listen"))
        else { return nil }
        guard let (host, port) = Self.hostAndPort(text) else {
            reader.fail(
                listenNode, f.path("listen"),
                "expected host:port such as \"127.0.0.1:9750\", \"0.0.0.0:9750\" or \"[::1]:9750\", got \"\(text)\"")
            return nil
        }
        var http = HTTPListenSettings(host: host, port: port)
        apply(fields, f, in: node, into: &http)
        if http.tokenFile == nil && !http.isLoopback && !http.allowUnauthenticated {
            reader.fail(
                listenNode, f.path("listen"),
                "\(text) without token_file would show the store's positions and events to anyone on the network: "
                    + "give token_file, listen on 127.0.0.1, or say allow_unauthenticated: true")
        }
        return http
    }

    /// `host:port`, `[v6]:port`; the port 1…65535.
    static func hostAndPort(_ text: String) -> (String, Int)? {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains(" "), let port = Int(portText), (1...65535).contains(port) else {
            return nil
        }
        return (String(host), port)
    }
}
