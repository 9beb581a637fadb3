#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a text file line by line with `getline`, so a trace of millions of records is
/// replayed in constant memory.
public final class LineReader: Sequence, IteratorProtocol {
    private let file: UnsafeMutablePointer<FILE>
    private let ownsFile: Bool
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    /// Opens `path` ("-" for standard input), or throws a message naming the path and reason.
    public init(path: String) throws(FileError) {
        if path == "-" {
            file = fdopen(0, "r")
            ownsFile = false
            return
        }
        guard let f = fopen(path, "r") else {
            throw FileError(path: path, reason: String(cString: strerror(errno)))
        }
        // A directory opens, and then reads as nothing: a config path that names one would
        // load as an empty file and run on defaults.
        var info = stat()
        if fstat(fileno(f), &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            fclose(f)
            throw FileError(path: path, reason: "is a directory, not a file")
        }
        file = f
        ownsFile = true
    }

    public func next() -> String? {
        let n = getline(&buffer, &capacity, file)
        guard n >= 0, let buffer else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: buffer, count: n), as: UTF8.self)
    }

    deinit {
        free(buffer)
        if ownsFile { fclose(file) }
    }
}

public struct FileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot read \"\(path)\": \(reason)" }
}

/// Why a webhook's `secret_file` cannot sign, or nil when it can: unreadable, a directory,
/// or empty once its trailing newline and spaces are taken off — a key of nothing is one
/// anyone can sign with, so it is refused rather than used.
public func secretFileProblem(_ path: String) -> String? {
    guard access(path, R_OK) == 0 else { return String(cString: strerror(errno)) }
    do {
        let text = try readTextFile(path)
        if text.allSatisfy({ $0.isWhitespace }) {
            return "the file is empty or only whitespace: a signature with an empty key can be forged by anyone"
        }
        return nil
    } catch {
        return error.reason
    }
}

/// Reads a whole (small) file, such as the configuration.
public func readTextFile(_ path: String) throws(FileError) -> String {
    let reader = try LineReader(path: path)
    var text = ""
    for line in reader { text += line }
    return text
}
