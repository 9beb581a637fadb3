/// The floor view as served (`GET /`): the page with its script inline where it names
/// floor.js, so that it works with no network beyond the gateway. Page and script are kept in
/// two files (Sources/API/FloorView), each embedded by `scripts/embed`: the markup and style
/// of the view apart from the code that draws it.
extension FloorViewPage {
    static let scriptTag = #"<script src="floor.js"></script>"#

    static let html = markup.replacing(scriptTag, with: "<script>\n" + FloorViewScript.text + "\n</script>")
}
