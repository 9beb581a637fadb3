import CLoader
import Glibc
import Testing

/// The loader behind libcurl, libcrypto and libmosquitto (loaded at first use): every function
/// resolved into its place, or a reason that names the file or the missing function.
struct LibraryLoaderTests {
    /// Loads `file` for `names`; the addresses found, or the reason.
    static func load(_ file: String, _ names: [String]) -> Result<[UnsafeMutableRawPointer?], LoadFailure> {
        var slots = [UnsafeMutableRawPointer?](repeating: nil, count: names.count)
        var error = [CChar](repeating: 0, count: 256)
        let handle = slots.withUnsafeMutableBufferPointer { places in
            let cNames = names.map { strdup($0) }
            defer { cNames.forEach { free($0) } }
            let symbols = (0..<names.count).map {
                beacond_symbol(name: cNames[$0], slot: places.baseAddress! + $0)
            }
            return beacond_load_library(file, symbols, symbols.count, &error, error.count)
        }
        guard handle != nil else {
            return .failure(
                LoadFailure(reason: String(decoding: error.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self)))
        }
        return .success(slots)
    }

    struct LoadFailure: Error, Equatable {
        var reason: String
    }

    @Test func everyFunctionIsResolvedIntoItsPlace() throws {
        let found = try Self.load("libc.so.6", ["strlen", "getpid"]).get()
        #expect(found.count == 2 && found.allSatisfy { $0 != nil } && found[0] != found[1])
        let strlen = unsafeBitCast(found[0], to: (@convention(c) (UnsafePointer<CChar>) -> Int).self)
        #expect(strlen("beacond") == 7)
    }

    @Test func aLibraryThatIsNotThereIsNamed() {
        guard case let .failure(failure) = Self.load("libbeacond-absent.so.9", ["anything"]) else {
            Issue.record("loaded a library that does not exist")
            return
        }
        #expect(failure.reason.hasPrefix("cannot load libbeacond-absent.so.9: "), "\(failure.reason)")
    }

    @Test func aMissingFunctionIsNamedWithItsLibrary() {
        #expect(
            Self.load("libc.so.6", ["strlen", "beacond_no_such_function"])
                == .failure(LoadFailure(reason: "libc.so.6 has no beacond_no_such_function")))
    }

    /// A library missing one function is unloaded again, and no slot keeps a pointer into it.
    @Test func aLibraryMissingAFunctionIsUnloaded() throws {
        let file = "libbz2.so.1.0"
        try #require(dlopen(file, RTLD_NOW | RTLD_NOLOAD) == nil, "\(file) is already loaded by something else")
        var slots = [UnsafeMutableRawPointer?](repeating: nil, count: 2)
        var error = [CChar](repeating: 0, count: 256)
        let handle = slots.withUnsafeMutableBufferPointer { places in
            let names: [String] = ["BZ2_bzlibVersion", "beacond_no_such_function"]
            let cNames = names.map { strdup($0) }
            defer { cNames.forEach { free($0) } }
            let symbols = (0..<2).map { beacond_symbol(name: cNames[$0], slot: places.baseAddress! + $0) }
            return beacond_load_library(file, symbols, symbols.count, &error, error.count)
        }
        #expect(handle == nil)
        #expect(slots.allSatisfy { $0 == nil }, "a slot still points into the library")
        let still = dlopen(file, RTLD_NOW | RTLD_NOLOAD)
        #expect(still == nil, "\(file) is still loaded after the failed load")
        if let still { dlclose(still) }
    }
}
