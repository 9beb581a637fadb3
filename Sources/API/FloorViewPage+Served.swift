/// The floor view as served (`GET /`): the page with its scripts inline where it names
/// geometry.js, analytics.js and floor.js, so that it works with no network beyond the
/// gateway. Page and scripts are kept in their own files (Sources/API/FloorView), each
/// embedded by `scripts/embed`: the markup and style of the view apart from the code that
/// draws it, and the geometry and the zone analytics apart from the floor.
extension FloorViewPage {
    static let scriptTag = #"<script src="floor.js"></script>"#
    static let analyticsTag = #"<script src="analytics.js"></script>"#
    static let geometryTag = #"<script src="geometry.js"></script>"#

    static let html =
        markup
        .replacing(geometryTag, with: "<script>\n" + FloorViewGeometryScript.text + "\n</script>")
        .replacing(analyticsTag, with: "<script>\n" + FloorViewAnalyticsScript.text + "\n</script>")
        .replacing(scriptTag, with: "<script>\n" + FloorViewScript.text + "\n</script>")
}
