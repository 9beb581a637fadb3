import BeaconCore

/// `positioning.floor_image` (extension): a floor plan drawn under the floor view, placed by
/// its scale and where the site's origin is on it, so that the plan and the receivers' metres
/// line up.
public struct FloorImage: Sendable, Equatable {
    public var file: String
    /// Pixels per metre.
    public var scale: Double
    /// The pixel (from the image's top left) where the site's (0, 0) is.
    public var origin: [Double]
    /// `image/png`, `image/jpeg`, `image/webp` or `image/svg+xml`, from the file's first bytes.
    public var mediaType: String

    /// The media type a file's first bytes say it is, or nil when it is none the view draws.
    public static func mediaType(of head: [UInt8]) -> String? {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.count >= 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) {
            return "image/webp"
        }
        let text = String(decoding: head, as: UTF8.self).trimmingWhitespace
        if text.hasPrefix("<svg") || (text.hasPrefix("<?xml") && text.contains("<svg")) { return "image/svg+xml" }
        return nil
    }
}

/// A file's first bytes, for what kind of file it is; injected into the loader so that its
/// checks stay pure and testable.
public enum FileHead: Sendable {
    /// Not looked at (the loader's default, for tests of other sections).
    case unchecked
    case unreadable(String)
    case bytes([UInt8])
}

extension SectionReader {
    func readFloorImage(_ node: Node, _ path: String) -> FloorImage? {
        let fields: [ConfigField<FloorImage>] = [
            .number("scale", 0.001...100_000, \.scale).required,
            .init("origin") { r, n, p, image in
                guard let list = r.reader.sequence(n, p), list.count == 2,
                    case let values = list.enumerated().compactMap({ r.reader.double($1, "\(p)[\($0)]", -1e7...1e7) }),
                    values.count == 2
                else { return r.reader.fail(n, p, "expected [x, y]: the pixel where the site's (0, 0) is") }
                image.origin = values
            },
        ]
        // The file first: what it is decides whether the rest matters.
        guard let f = reader.mapping(node, path, allowed: ["file"] + fields.map(\.key)),
            let fileNode = required(f, "file", in: node), let file = absolutePath(fileNode, f.path("file"))
        else { return nil }
        var image = FloorImage(file: file, scale: 1, origin: [0, 0], mediaType: "")
        switch fileHead(file) {
        case .unchecked: break
        case let .unreadable(problem):
            reader.fail(fileNode, f.path("file"), "cannot use \"\(file)\": \(problem)")
            return nil
        case let .bytes(head):
            guard let type = FloorImage.mediaType(of: head) else {
                reader.fail(fileNode, f.path("file"), "\"\(file)\" is not a PNG, JPEG, WebP or SVG image")
                return nil
            }
            image.mediaType = type
        }
        apply(fields, f, in: node, into: &image)
        return image
    }
}
