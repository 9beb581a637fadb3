import BeaconCore
import Foundation
import Testing

@testable import API

/// The document and the routes cannot drift apart: every route of `APIRouter.routes` is an
/// operation of docs/openapi.json and every operation a route, the daemon serves the file as
/// the repository holds it, and every event type has its data schema.
@Suite struct OpenAPIDocumentTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.json")

    static func document() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
    }

    @Test func everyRouteIsAnOperationAndEveryOperationARoute() throws {
        let paths = try Self.document()["paths"] as? [String: [String: Any]] ?? [:]
        var documented: Set<String> = []
        for (path, operations) in paths {
            // {client} and the like are one segment each, as `*` is in the route table.
            let pattern = path.split(separator: "/").map { $0.hasPrefix("{") ? "*" : String($0) }.joined(separator: "/")
            for method in operations.keys { documented.insert("\(method.uppercased()) \(pattern)") }
        }
        let routed = Set(APIRouter.routes.map { "\($0.method) \($0.pattern.joined(separator: "/"))" })
        #expect(routed.subtracting(documented).isEmpty, "routes missing from the document")
        #expect(documented.subtracting(routed).isEmpty, "documented operations with no route")
        #expect(routed.count == 30)
    }

    @Test func theDaemonServesTheRepositorysDocument() throws {
        let served = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.text.utf8)) as? NSDictionary
        #expect(
            served == (try Self.document()) as NSDictionary, "run scripts/embed after editing docs/openapi.json"
        )
    }

    @Test func theDaemonServesTheRepositorysFloorView() throws {
        let folder = Self.file.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/API/FloorView")
        let page = try String(contentsOf: folder.appendingPathComponent("floor.html"), encoding: .utf8)
        let script = try String(contentsOf: folder.appendingPathComponent("floor.js"), encoding: .utf8)
        #expect(FloorViewPage.markup + "\n" == page, "run scripts/embed after editing floor.html")
        let analytics = try String(contentsOf: folder.appendingPathComponent("analytics.js"), encoding: .utf8)
        let geometry = try String(contentsOf: folder.appendingPathComponent("geometry.js"), encoding: .utf8)
        #expect(FloorViewScript.text + "\n" == script, "run scripts/embed after editing floor.js")
        #expect(FloorViewAnalyticsScript.text + "\n" == analytics, "run scripts/embed after editing analytics.js")
        #expect(FloorViewGeometryScript.text + "\n" == geometry, "run scripts/embed after editing geometry.js")
        // Served as one page: each script inline where the page names it, nothing to fetch.
        for (tag, text) in [
            (FloorViewPage.scriptTag, script), (FloorViewPage.analyticsTag, analytics),
            (FloorViewPage.geometryTag, geometry),
        ] {
            #expect(page.components(separatedBy: tag).count == 2)
            #expect(!FloorViewPage.html.contains(tag))
            #expect(FloorViewPage.html.contains("<script>\n" + text + "</script>"))
        }
        #expect(!FloorViewPage.html.contains("<script src="))
    }

    @Test func everyEventTypeHasAStandAloneDataSchema() throws {
        for kind in EventPayload.allKinds + ["webhook.test"] {
            let schema = OpenAPIContract.shared.dataSchema(kind: kind)
            #expect(schema?["$id"]?.stringValue == CloudEvent.dataSchema(kind), "\(kind)")
            #expect(schema.map { !$0.serialized.contains("$ref") } == true, "\(kind): references left in")
        }
        #expect(OpenAPIContract.shared.dataSchema(kind: "region.entered") == nil)
    }
}
