import CCurl
import POSIX

#if canImport(Glibc)
    import Glibc
#endif

/// POSTs a webhook batch with libcurl (HTTP and HTTPS, keep-alive to the same host).
/// One poster per webhook thread: a connection cache is not shared between threads. Only
/// `abort(at:)` may be called from another thread (it sets an atomic deadline).
/// `@unchecked Sendable`: the curl handle is its worker thread's; only the atomic deadline
/// crosses.
final class HTTPPoster: @unchecked Sendable {
    enum Outcome: Equatable {
        case status(Int)
        case failed(String)
    }

    private let client: OpaquePointer?

    init() { client = beacond_http_client_new() }
    deinit { beacond_http_client_free(client) }

    /// Aborts any request still running at `millis` of `SystemClock.monotonicMillis` (from
    /// any thread).
    func abort(at millis: Int64) { beacond_http_client_set_deadline(client, millis) }

    func post(url: String, body: ArraySlice<UInt8>, headers: [String], timeoutMillis: Int) -> Outcome {
        guard let client else {
            return .failed(beacond_http_unavailable_reason().map { String(cString: $0) } ?? "libcurl could not start")
        }
        var result = beacond_http_result()
        let code = withCStringArray(headers) { list in
            body.withUnsafeBufferPointer { bytes in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(bytes.count, 1)) { chars in
                    beacond_http_post(
                        client, url, chars, bytes.count, list, Int32(headers.count), timeoutMillis, &result)
                }
            }
        }
        if code == 0 { return .status(Int(result.status)) }
        let message = withUnsafeBytes(of: &result.error) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return .failed(message)
    }
}

/// Calls `body` with a C array of C strings that lives for the call.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
