import BeaconConfig

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

/// Reads a file (or standard input) in large blocks and hands each line's bytes, without
/// its newline, to a closure: no `String` and no copy per line, for traces of millions of
/// records. Memory is one block, grown only for a line longer than it.
public final class BlockLineReader {
    private let fd: Int32
    private let ownsFile: Bool
    private var buffer: UnsafeMutableRawBufferPointer
    public static let blockSize = 1 << 20

    /// Opens `path` ("-" for standard input), or throws a message naming the path and reason.
    public init(path: String) throws(FileError) {
        if path == "-" {
            fd = 0
            ownsFile = false
        } else {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw FileError(path: path, reason: String(cString: strerror(errno))) }
            var info = stat()
            if fstat(opened, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                close(opened)
                throw FileError(path: path, reason: "is a directory, not a file")
            }
            fd = opened
            ownsFile = true
        }
        buffer = .allocate(byteCount: Self.blockSize, alignment: 16)
    }

    deinit {
        buffer.deallocate()
        if ownsFile { close(fd) }
    }

    /// Calls `body` with each line (1-based number), the last one even without a newline.
    public func forEachLine(_ body: (UnsafeRawBufferPointer, Int) -> Void) {
        var filled = 0
        var number = 0
        while true {
            if filled == buffer.count {
                // One line fills the block: make room for more of it.
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
                bigger.copyMemory(from: UnsafeRawBufferPointer(buffer))
                buffer.deallocate()
                buffer = bigger
            }
            let n = read(fd, buffer.baseAddress! + filled, buffer.count - filled)
            if n < 0 && errno == EINTR { continue }
            let end = filled + max(n, 0)
            var start = 0
            let base = UnsafeRawPointer(buffer.baseAddress!)
            while start < end, let newline = memchr(base + start, 0x0A, end - start) {
                let at = base.distance(to: UnsafeRawPointer(newline))
                number += 1
                body(UnsafeRawBufferPointer(start: base + start, count: at - start), number)
                start = at + 1
            }
            if n <= 0 {
                if start < end {
                    number += 1
                    body(UnsafeRawBufferPointer(start: base + start, count: end - start), number)
                }
                return
            }
            // Keep the partial line at the front for the next read.
            filled = end - start
            if filled > 0, start > 0 { memmove(buffer.baseAddress!, base + start, filled) }
        }
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

/// A secret's file (a webhook's key, the broker's password) as its key: the whole text
/// without the trailing newline and spaces an editor or `echo` leaves.
public func readSecretFile(_ path: String) throws(FileError) -> String {
    var text = try readTextFile(path)
    while let last = text.last, last.isNewline || last == " " { text.removeLast() }
    return text
}

/// A file's first 64 bytes, for the configuration's checks of what kind of file it is (a
/// floor image).
public func fileHead(_ path: String) -> FileHead {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .unreadable(String(cString: strerror(errno))) }
    defer { close(fd) }
    var info = stat()
    if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return .unreadable("it is a directory") }
    var bytes = [UInt8](repeating: 0, count: 64)
    let n = read(fd, &bytes, bytes.count)
    guard n >= 0 else { return .unreadable(String(cString: strerror(errno))) }
    return .bytes(Array(bytes[0..<n]))
}

/// A secret file's key text, or nil when it cannot be read (`secretFileProblem` says why).
public func secretFileText(_ path: String) -> String? { try? readSecretFile(path) }

/// Reads a whole (small) file, such as the configuration.
public func readTextFile(_ path: String) throws(FileError) -> String {
    let reader = try LineReader(path: path)
    var text = ""
    for line in reader { text += line }
    return text
}
