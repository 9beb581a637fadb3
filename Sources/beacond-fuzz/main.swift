// beacond-fuzz TARGET [libFuzzer options | FILE or DIRECTORY ...]
//
// Built by fuzz/run with libFuzzer, it fuzzes TARGET (sightings, config, http). Built
// plainly, as every `swift build` does, it runs each file given (every file of a directory)
// through TARGET once: the fuzzer's corpus and past crashes, replayed by the tests.
import CFuzzer

#if canImport(Glibc)
    import Glibc
#endif

let usage = "usage: beacond-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) [FILE...]\n"
// The target is the first argument. libFuzzer starts copies of itself (-merge, -fork) with
// its own options only, so the choice is also passed on in the environment.
let named = CommandLine.arguments.count >= 2 ? FuzzTarget(rawValue: CommandLine.arguments[1]) : nil
guard let chosen = named ?? getenv("BEACOND_FUZZ_TARGET").flatMap({ FuzzTarget(rawValue: String(cString: $0)) })
else {
    complain(usage)
    exit(64)
}
setenv("BEACOND_FUZZ_TARGET", chosen.rawValue, 1)
nonisolated(unsafe) var target = chosen

// libFuzzer reads its own options from argv: hand it the arguments after the target.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
if named != nil {
    CommandLine.unsafeArgv[1] = CommandLine.unsafeArgv[0]
    argc -= 1
    argv = CommandLine.unsafeArgv.advanced(by: 1)
}
let status = cfuzzer_run(&argc, &argv) { data, size in
    target.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}
if status >= 0 { exit(status) }

func complain(_ message: String) {
    var text = message
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Without libFuzzer: every named file, or every file in a named directory, once.
func files(in path: String) -> [String] {
    guard let dir = opendir(path) else { return [path] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if !name.hasPrefix(".") { names.append(path + "/" + name) }
    }
    return names.sorted()
}

func contents(of path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[..<n]
    }
    return bytes
}

var ran = 0
for path in CommandLine.arguments.dropFirst(named != nil ? 2 : 1).flatMap(files(in:)) {
    guard let bytes = contents(of: path) else {
        complain("beacond-fuzz: cannot read \(path)\n")
        exit(66)
    }
    bytes.withUnsafeBufferPointer { target.run($0) }
    ran += 1
}
print("beacond-fuzz \(target.rawValue): \(ran) inputs ran")
