import Testing

@testable import BeaconConfig

/// The composer over libyaml: nodes keep their marks, quoting survives (it decides whether
/// `30` may be a number), anchors resolve, and what a configuration cannot mean is refused
/// with a position.
@Suite struct YAMLComposerTests {
    func compose(_ text: String) throws -> Node? { try YAMLComposer.compose(text) }

    func refusal(_ text: String) -> YAMLSyntaxError? {
        do {
            _ = try YAMLComposer.compose(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func nodesKeepOneBasedMarksAndScalarStyles() throws {
        let root = try #require(try compose("gateway:\n  id: \"30\"\n  n: 30\nlist: [a, 'b']\n"))
        guard case let .mapping(top) = root else { Issue.record("root is not a mapping"); return }
        let pairs = Array(top)
        #expect(pairs.map { key, _ in if case let .scalar(s) = key { s.string } else { "?" } } == ["gateway", "list"])
        guard case let .mapping(gateway) = pairs[0].value else { Issue.record("gateway"); return }
        let fields = Array(gateway)
        guard case let .scalar(quoted) = fields[0].value, case let .scalar(plain) = fields[1].value else {
            Issue.record("scalars")
            return
        }
        #expect(quoted.string == "30" && quoted.style == .doubleQuoted && quoted.mark == Mark(line: 2, column: 7))
        #expect(plain.string == "30" && plain.style == .plain && plain.mark == Mark(line: 3, column: 6))
        guard case let .sequence(list) = pairs[1].value else { Issue.record("list"); return }
        #expect(list.count == 2 && list.mark == Mark(line: 4, column: 7))
        guard case let .scalar(b) = list[1] else { Issue.record("b"); return }
        #expect(b.style == .singleQuoted && b.mark == Mark(line: 4, column: 11))
    }

    @Test func anchorsAndAliasesResolveToTheAnchoredNode() throws {
        let root = try #require(try compose("a: &loud -60\nb: *loud\nc: &pair [1, 2]\nd: *pair\n"))
        guard case let .mapping(m) = root else { Issue.record("root"); return }
        let values = Array(m).map(\.value)
        guard case let .scalar(b) = values[1], case let .sequence(d) = values[3] else {
            Issue.record("aliases not resolved")
            return
        }
        #expect(b.string == "-60" && d.count == 2)
    }

    @Test func blockScalarsAndExplicitStringTags() throws {
        let root = try #require(try compose("text: |\n  one\n  two\nid: !!str 42\n"))
        guard case let .mapping(m) = root, case let .scalar(text) = Array(m)[0].value,
            case let .scalar(id) = Array(m)[1].value
        else {
            Issue.record("shape")
            return
        }
        #expect(text.string == "one\ntwo\n" && text.style == .literal)
        #expect(id.string == "42" && id.style != .plain)
    }

    @Test func emptyTextHasNoRoot() throws {
        #expect(try compose("") == nil)
        #expect(try compose("# only a comment\n") == nil)
    }

    @Test func whatAConfigurationCannotMeanIsRefusedWithAPosition() {
        let duplicate = refusal("gateway:\n  id: a\n  id: b\n")
        #expect(duplicate?.message == "duplicate key \"id\" in one mapping")
        #expect(duplicate?.mark == Mark(line: 3, column: 3))
        let alias = refusal("a: 1\nb: *nowhere\n")
        #expect(alias?.message.contains("*nowhere") == true && alias?.mark.line == 2)
        let second = refusal("a: 1\n---\nb: 2\n")
        #expect(second?.message.contains("second YAML document") == true && second?.mark.line == 2)
        let broken = refusal("a: [1, 2\nb: 3\n")
        #expect(broken?.message.hasPrefix("did not find expected") == true && broken?.mark.line == 2)
        #expect(refusal("a: \"unterminated\n") != nil)
    }
}
