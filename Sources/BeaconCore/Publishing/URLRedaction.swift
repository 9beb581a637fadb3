/// A webhook's URL as it may be shown: receivers often take their credential in the URL (a
/// user and password before the host, a `?key=` or `?token=`), and `/v1/status` goes where
/// the secret must not — a Prometheus scrape, a browser, a support ticket. What stays (the
/// scheme, host, port, path and the query's names) is what an operator needs to tell the
/// webhooks apart and check that the host is reachable.
public enum URLRedaction {
    public static let mask = "***"

    /// `https://user:pw@crm.example/hook?key=s3cret&v=2` → `https://***@crm.example/hook?key=***&v=***`.
    public static func redact(_ url: String) -> String {
        let chars = Array(url)
        guard let colon = chars.firstIndex(of: ":"), chars[colon...].starts(with: Array("://")) else { return url }
        var out = String(chars[..<(colon + 3)])
        var i = colon + 3
        var authorityEnd = i
        while authorityEnd < chars.count, !["/", "?", "#"].contains(chars[authorityEnd]) { authorityEnd += 1 }
        let authority = chars[i..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            out += mask + "@" + String(chars[(at + 1)..<authorityEnd])
        } else {
            out += String(authority)
        }
        i = authorityEnd
        let hash = chars[i...].firstIndex(of: "#") ?? chars.count
        let question = chars[i..<hash].firstIndex(of: "?") ?? hash
        out += String(chars[i..<question])
        if question < hash {
            let pairs = chars[(question + 1)..<hash].split(separator: "&", omittingEmptySubsequences: false)
            out +=
                "?"
                + pairs.map { pair -> String in
                    guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
                    return String(pair[..<equals]) + "=" + mask
                }.joined(separator: "&")
        }
        return hash < chars.count ? out + "#" + mask : out
    }
}
