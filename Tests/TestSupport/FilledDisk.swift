import Foundation

/// Fills the filesystem holding `directory` to the last byte with a file of zeros there, as a
/// gateway's disk fills. Returns the file, whose removal makes room again, and what `dd` said
/// when its write ended for another reason than a full disk (nil when the disk is full).
public func fillFilesystem(at directory: URL) throws -> (filler: String, failure: String?) {
    let filler = directory.appendingPathComponent("filler").path
    let dd = try runCommand(URL(fileURLWithPath: "/bin/dd"), ["if=/dev/zero", "of=\(filler)", "bs=64k"])
    return (filler, dd.stderr.contains("No space left") ? nil : dd.stderr)
}
