import BeaconCore
import Foundation
import Testing

@testable import BeaconConfig

/// SPEC §2: every kind of mistake names file:line:column and the key, and says what was
/// expected and what was found.
@Suite struct ConfigErrorTests {
    func errors(_ yaml: String) -> [String] {
        do {
            _ = try ConfigLoader.load(yaml: yaml, file: "beacond.yaml")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    static let region = """
        clients:
          - id: app
            regions:
              - id: store
                uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0

        """

    @Test func unknownKeyWithSuggestion() {
        #expect(
            errors("bluetooth:\n  scann: active\n") == [
                #"beacond.yaml:2:3: bluetooth.scann: unknown key (did you mean "scan"?)"#
            ])
        #expect(
            errors("monitor:\n  region_limit: 5\n") == [
                #"beacond.yaml:1:1: monitor: unknown key (did you mean "monitoring"?)"#
            ])
        #expect(errors("gateway:\n  colour: blue\n") == ["beacond.yaml:2:3: gateway.colour: unknown key"])
    }

    @Test func wrongTypes() {
        #expect(
            errors("monitoring:\n  exit_timeout: thirty\n")
                == [#"beacond.yaml:2:17: monitoring.exit_timeout: expected a duration like "30s", got "thirty""#])
        #expect(
            errors("monitoring:\n  enter_sightings: two\n")
                == [#"beacond.yaml:2:20: monitoring.enter_sightings: expected an integer, got "two""#])
        #expect(
            errors("monitoring:\n  region_limit: [20]\n")
                == ["beacond.yaml:2:17: monitoring.region_limit: expected an integer, got a list"])
        #expect(errors("clients: {id: app}\n") == ["beacond.yaml:1:10: clients: expected a list, got a mapping"])
        #expect(
            errors(Self.region + "        ranging: yes please\n")
                == [#"beacond.yaml:6:18: clients[0].regions[0].ranging: expected true or false, got "yes please""#])
    }

    @Test func outOfRange() {
        #expect(
            errors("monitoring:\n  min_rssi: -300\n") == [
                "beacond.yaml:2:13: monitoring.min_rssi: must be between -127 and 20, got -300"
            ])
        #expect(
            errors("monitoring:\n  exit_timeout: 500ms\n")
                == [#"beacond.yaml:2:17: monitoring.exit_timeout: must be between 1s and 24h, got "500ms""#])
    }

    @Test func badUUID() {
        let yaml = Self.region.replacingOccurrences(
            of: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", with: "E2C56DB5-DFFB-48D2-B060")
        #expect(
            errors(yaml)
                == [
                    #"beacond.yaml:5:15: clients[0].regions[0].uuid: expected a UUID like "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", got "E2C56DB5-DFFB-48D2-B060""#
                ])
    }

    @Test func minorWithoutMajor() {
        #expect(
            errors(Self.region + "        minor: 7\n")
                == ["beacond.yaml:6:16: clients[0].regions[0].minor: needs major (minor alone cannot match)"])
        #expect(errors(Self.region + "        major: 1\n        minor: 7\n") == [])
    }

    @Test func duplicateIds() {
        let yaml = Self.region + "      - id: store\n        uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n"
        #expect(
            errors(yaml)
                == [
                    #"beacond.yaml:6:13: clients[0].regions[1].id: duplicate id "store" (also at clients[0].regions[0].id)"#
                ])
        #expect(
            errors("clients:\n  - id: a\n  - id: a\n")
                == [#"beacond.yaml:3:9: clients[1].id: duplicate id "a" (also at clients[0].id)"#])
    }

    @Test func dwellOverTwoHours() {
        #expect(
            errors(Self.region + "        dwell: [2m, 3h]\n")
                == [#"beacond.yaml:6:21: clients[0].regions[0].dwell[1]: must be between 1s and 2h, got "3h""#])
        #expect(errors(Self.region + "        dwell: [2m, 2h]\n") == [])
    }

    @Test func regionCountOverTheLimit() {
        var yaml = "monitoring:\n  region_limit: 2\nclients:\n  - id: app\n    regions:\n"
        for i in 1...3 { yaml += "      - {id: r\(i), uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n" }
        #expect(
            errors(yaml)
                == [
                    "beacond.yaml:6:7: clients[0].regions: 3 regions, over monitoring.region_limit (2); a client may monitor at most 2"
                ])
    }

    @Test func missingRequiredKeys() {
        #expect(
            errors("clients:\n  - id: app\n    regions:\n      - id: store\n")
                == [#"beacond.yaml:4:9: clients[0].regions[0]: missing key "uuid""#])
    }

    @Test func unknownReferences() {
        let yaml = """
            zones:
              - {id: door, receiver: hci9, within: 2}
            alarms:
              - {id: a, zones: [door, nowhere], assets: [cart]}

            """
        #expect(
            errors(yaml) == [
                #"beacond.yaml:2:26: zones[0].receiver: unknown receiver "hci9" (not in receivers)"#,
                #"beacond.yaml:4:27: alarms[0].zones[1]: unknown zone "nowhere" (not in zones)"#,
                #"beacond.yaml:4:46: alarms[0].assets[0]: unknown asset "cart" (not in assets)"#,
            ])
    }

    /// Outlines an operator cannot have meant: two corners swapped (a bow tie, whose "inside"
    /// is two triangles and a hole), an edge turning back on itself, points on one line.
    @Test func outlinesThatCannotBeWhatWasMeantAreRefused() {
        #expect(
            errors("zones:\n  - {id: aisle, polygon: [[0, 0], [4, 0], [0, 3], [4, 3]]}\n") == [
                "beacond.yaml:2:26: zones[0].polygon: its edges 1→2 and 3→0 cross (corners out of order?): "
                    + "list the corners in order around the outline"
            ])
        #expect(
            errors("zones:\n  - {id: aisle, polygon: [[0, 0], [4, 0], [2, 0], [2, 3]]}\n") == [
                "beacond.yaml:2:26: zones[0].polygon: its edges 0→1 and 1→2 cross (corners out of order?): "
                    + "list the corners in order around the outline"
            ])
        #expect(
            errors("zones:\n  - {id: aisle, polygon: [[0, 0], [1, 1], [3, 3]]}\n") == [
                "beacond.yaml:2:26: zones[0].polygon: encloses no area: its points lie on one line"
            ])
        #expect(
            errors("positioning:\n  floor: [[0, 0], [0, 0], [5, 5], [0, 0]]\n") == [
                "beacond.yaml:2:10: positioning.floor: a polygon needs at least 3 different points, got 2"
            ])
        #expect(
            errors("positioning:\n  floor: [[0, 0], [9, 9], [9, 0], [0, 9]]\n").first?.hasPrefix(
                "beacond.yaml:2:10: positioning.floor: its edges 0→1 and 2→3 cross") == true)
        // Closed as GeoJSON closes it, or with a corner written twice: the same outline.
        let square = [[0.0, 0.0], [4, 0], [4, 3], [0, 3]]
        for written in ["[[0, 0], [4, 0], [4, 3], [0, 3], [0, 0]]", "[[0, 0], [4, 0], [4, 0], [4, 3], [0, 3]]"] {
            let config = try? ConfigLoader.load(yaml: "zones: [{id: a, polygon: \(written)}]\n", file: "beacond.yaml")
            #expect(config?.zones.first?.shape == .polygon(level: 0, points: square), "\(written)")
        }
        let many = (0..<1_001).map { "[\($0), \($0 % 2)]" }.joined(separator: ", ")
        #expect(
            errors("positioning: {floor: [\(many)]}\n") == [
                "beacond.yaml:1:22: positioning.floor: at most 1000 points, got 1001: simplify the outline"
            ])
        // A concave outline, listed clockwise, is what was meant.
        #expect(errors("zones: [{id: l, polygon: [[0, 0], [0, 4], [1, 4], [1, 1], [4, 1], [4, 0]]}]\n") == [])
    }

    /// Zones no asset can ever be in: wholly off the floor, or on a level with no receiver.
    @Test func zonesNoAssetCanEverBeInAreRefused() {
        let site = """
            receivers:
              - {id: a, position: {x: 0, y: 0, level: 0}}
              - {id: b, position: {x: 9, y: 0, level: 2}}
            positioning:
              floor: [[0, 0], [10, 0], [10, 10], [0, 10]]

            """
        #expect(
            errors(
                site + """
                    zones:
                      - {id: yard, polygon: [[20, 20], [25, 20], [25, 25]]}
                      - {id: edge, polygon: [[8, 8], [12, 8], [12, 12], [8, 12]]}
                      - {id: mezzanine, level: 1, polygon: [[0, 0], [2, 0], [2, 2]]}
                      - {id: top, level: 2, polygon: [[0, 0], [2, 0], [2, 2]]}

                    """) == [
                    "beacond.yaml:7:25: zones[0].polygon: lies wholly outside positioning.floor, where positions are "
                        + "placed: no asset is ever in this zone",
                    "beacond.yaml:9:28: zones[2].level: no receiver is on level 1 (receivers are on 0, 2): no asset "
                        + "is ever placed in this zone",
                ])
        // Without `level`, a zone is on level 0.
        let upstairs = "receivers: [{id: a, position: {x: 0, y: 0, level: 1}}]\n"
        #expect(
            errors(upstairs + "zones: [{id: z, polygon: [[0, 0], [2, 0], [2, 2]]}]\n") == [
                "beacond.yaml:2:9: zones[0]: no receiver is on level 0 (receivers are on 1): no asset is ever placed "
                    + "in this zone"
            ])
        // No receivers written: nothing to check against.
        #expect(errors("zones: [{id: z, level: 3, polygon: [[0, 0], [2, 0], [2, 2]]}]\n") == [])
    }

    @Test func everyErrorIsReportedNotJustTheFirst() {
        let yaml = "gateway:\n  idd: x\nmonitoring:\n  exit_timeout: soon\n  min_rssi: loud\n"
        #expect(errors(yaml).count == 3)
    }

    @Test func yamlSyntaxErrorsAreLocated() {
        let e = errors("gateway:\n  id: [unclosed\n")
        #expect(e.count == 1)
        #expect(e[0].hasPrefix("beacond.yaml:3:1: YAML syntax:"))
        #expect(errors("gateway:\n  id: a\n  id: b\n").first?.contains("duplicate key \"id\"") == true)
    }

    /// An editor's tab: libyaml says "found character that cannot start any token"; the
    /// operator is told what it is.
    @Test func aTabIsNamed() {
        #expect(
            errors("gateway:\n\tid: a\n") == [
                "beacond.yaml:2:1: YAML syntax: a tab character; YAML indents with spaces only"
            ])
        let other = errors("gateway:\n  id: a\n  @x: b\n")
        #expect(other.count == 1 && !(other.first?.contains("tab") ?? true), "\(other)")
    }

    /// Issue 25, item 11: a URL with a space, a tag asking a loader to build an object, and
    /// a duplicate key are located, with the key, like every other mistake.
    @Test func urlsTagsAndDuplicateKeysAreLocatedWithTheirKey() {
        #expect(
            errors("webhooks:\n  - id: crm\n    url: https://crm.example/a hook\n") == [
                "beacond.yaml:3:10: webhooks[0].url: a URL may not contain a space (write a space as %20)"
            ])
        #expect(
            errors("webhooks:\n  - id: crm\n    url: https:///hook\n") == [
                #"beacond.yaml:3:10: webhooks[0].url: expected a host after the scheme, got "https:///hook""#
            ])
        #expect(
            errors("gateway:\n  id: !!python/object:os.system a\n") == [
                "beacond.yaml:2:7: YAML tag !!python/object:os.system is not allowed here; remove it"
            ])
        #expect(
            errors("webhooks:\n  - id: crm\n    url: https://a.example/\n    url: https://b.example/\n") == [
                #"beacond.yaml:4:5: webhooks[0].url: duplicate key "url" in one mapping"#
            ])
        #expect(errors("gateway:\n  id: !!str 42\n") == [])
    }

    @Test func secretFilesMustBeReadableAndAreNeverQuoted() {
        let yaml =
            "webhooks:\n  - id: crm\n    url: https://crm.example/hook\n    secret_file: /etc/beacond/crm.secret\n"
        let errors: [String]
        do {
            _ = try ConfigLoader.load(yaml: yaml, file: "beacond.yaml", fileReadable: { _ in "permission denied" })
            errors = []
        } catch {
            errors = error.errors.map(\.description)
        }
        #expect(
            errors == [
                #"beacond.yaml:4:18: webhooks[0].secret_file: cannot use "/etc/beacond/crm.secret": permission denied"#
            ])
    }

    @Test func aFloorImageMustBeAnImageThatCanBeRead() throws {
        let yaml = "positioning:\n  floor_image: {file: /etc/beacond/plan.png, scale: 20, origin: [10, 190]}\n"
        func load(_ head: FileHead) -> [String] {
            do {
                let config = try ConfigLoader.load(yaml: yaml, file: "beacond.yaml", fileHead: { _ in head })
                return ["ok \(config.floorImage?.mediaType ?? "-") \(config.floorImage?.scale ?? 0)"]
            } catch {
                return error.errors.map(\.description)
            }
        }
        #expect(load(.bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0])) == ["ok image/png 20.0"])
        #expect(load(.bytes(Array("<?xml version=\"1.0\"?><svg xmlns=".utf8))) == ["ok image/svg+xml 20.0"])
        #expect(
            load(.unreadable("No such file or directory")) == [
                #"beacond.yaml:2:23: positioning.floor_image.file: cannot use "/etc/beacond/plan.png": No such file or directory"#
            ])
        #expect(
            load(.bytes(Array("name,x,y\n".utf8))) == [
                #"beacond.yaml:2:23: positioning.floor_image.file: "/etc/beacond/plan.png" is not a PNG, JPEG, WebP or SVG image"#
            ])
    }

    @Test func historyRetentionIsReadPerClassWithinBounds() throws {
        let config = try ConfigLoader.load(
            yaml: "history:\n  alerts: {max_age: 90d}\n  telemetry: {max_age: 2h, max_events: 50000}\n",
            file: "beacond.yaml")
        #expect(config.history.alerts == .init(maxAge: .hours(24 * 90), maxEvents: HistoryRetention().alerts.maxEvents))
        #expect(config.history.telemetry == .init(maxAge: .hours(2), maxEvents: 50_000))
        #expect(
            errors("history:\n  positions: {max_age: 1h}\n  telemetry: {max_events: 10}\n") == [
                "beacond.yaml:2:3: history.positions: unknown key",
                "beacond.yaml:3:27: history.telemetry.max_events: must be between 100 and 5000000, got 10",
            ])
    }

    @Test func aStandardSignatureNeedsAWhsecSecretFile() {
        func load(_ hook: String, secret: String?) -> [String] {
            let yaml = "webhooks:\n  - id: crm\n    url: https://crm.example/hook\n" + hook
            do {
                let config = try ConfigLoader.load(yaml: yaml, file: "beacond.yaml", secretText: { _ in secret })
                return ["ok \(config.webhooks[0].signature)"]
            } catch {
                return error.errors.map(\.description)
            }
        }
        let file = "    secret_file: /etc/beacond/crm.secret\n"
        #expect(
            load(file + "    signature: standard\n", secret: "whsec_" + String(repeating: "A", count: 32)) == [
                "ok standard"
            ])
        #expect(load(file, secret: "anything") == ["ok beacond"])
        #expect(
            load("    signature: standard\n", secret: nil) == [
                "beacond.yaml:4:16: webhooks[0].signature: signature: standard needs secret_file, a file holding a whsec_ secret"
            ])
        #expect(
            load(file + "    signature: standard\n", secret: "s3cret") == [
                #"beacond.yaml:5:16: webhooks[0].signature: /etc/beacond/crm.secret is not a Standard Webhooks secret: a Standard Webhooks secret starts with "whsec_""#
            ])
        #expect(
            load(file + "    signature: github\n", secret: nil) == [
                #"beacond.yaml:5:16: webhooks[0].signature: expected beacond or standard, got "github""#
            ])
    }

    @Test func simulationAndPositioningExtensionsAreChecked() {
        #expect(
            errors("simulation:\n  sigma_db: loud\n  walls: [[0, 0, 1]]\n  pause: [1m, 5s]\n")
                == [
                    "beacond.yaml:2:13: simulation.sigma_db: expected a number, got \"loud\"",
                    "beacond.yaml:3:11: simulation.walls[0]: expected [x0, y0, x1, y1, loss_db]",
                    "beacond.yaml:4:10: simulation.pause: expected [low, high] with low <= high",
                ])
        let tagged = "assets:\n  - {id: cart, beacon: {address: \"D0:00:00:00:00:01\"}}\nsimulation:\n  tags:\n"
        #expect(
            errors(tagged + "    - {asset: crat, interval: 5ms, telemetry: ibeacon}\n    - {interval: 1s}\n") == [
                "beacond.yaml:5:15: simulation.tags[0].asset: no asset \"crat\" in assets: (did you mean \"cart\"?)",
                "beacond.yaml:6:7: simulation.tags[1]: missing key \"asset\"",
            ])
        #expect(
            errors(tagged + "    - {asset: cart, interval: 5ms, telemetry: ibeacon, battery: {volts: 3}}\n") == [
                "beacond.yaml:5:31: simulation.tags[0].interval: must be between 20ms and 1m, got \"5ms\"",
                "beacond.yaml:5:47: simulation.tags[0].telemetry: expected one of none, tlm, ruuvi, got \"ibeacon\"",
                "beacond.yaml:5:66: simulation.tags[0].battery.volts: unknown key",
            ])
        #expect(errors("positioning:\n  floor: [[0, 0], [1, 1]]\n").first?.contains("at least 3 points") == true)
        #expect(
            errors("positioning:\n  zone_hysteresis: -1\n").first?.hasPrefix(
                "beacond.yaml:2:20: positioning.zone_hysteresis") == true)
        #expect(
            errors("positioning:\n  estimator: kalman\n") == [
                "beacond.yaml:2:14: positioning.estimator: expected one of bayes, least_squares, got \"kalman\""
            ])
        let chosen = try? ConfigLoader.load(yaml: "positioning: {estimator: least_squares}\n", file: "beacond.yaml")
        #expect(chosen?.positioning.estimator == .leastSquares)
        #expect((try? ConfigLoader.load(yaml: "", file: "beacond.yaml"))?.positioning.estimator == .bayes)
        #expect(
            errors("positioning:\n  motion: running\n") == [
                "beacond.yaml:2:11: positioning.motion: expected one of continuous, stop_and_go, parked, got \"running\""
            ])
        let motion = try? ConfigLoader.load(yaml: "positioning: {motion: stop_and_go}\n", file: "beacond.yaml")
        #expect(motion?.positioning.motion == .stopAndGo)
        #expect((try? ConfigLoader.load(yaml: "", file: "beacond.yaml"))?.positioning.motion == .continuous)
        #expect(
            errors("positioning:\n  body_loss_db: -3\n").first?.hasPrefix(
                "beacond.yaml:2:17: positioning.body_loss_db") == true)
        let body = try? ConfigLoader.load(yaml: "positioning: {body_loss_db: 4.5}\n", file: "beacond.yaml")
        #expect(body?.positioning.bodyLossDB == 4.5)
    }
}

/// `calibration:` (extension): its values are checked, and two receivers whose ids would
/// advertise as the same beacon are refused where advertising is switched on.
extension ConfigErrorTests {
    @Test func calibrationValuesAreCheckedWhereTheyAreWritten() throws {
        #expect(
            errors("calibration:\n  uuid: not-a-uuid\n  tx_power: 40\n  tag_offset_db: 3\n") == [
                #"beacond.yaml:2:9: calibration.uuid: expected a UUID like "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", got "not-a-uuid""#,
                "beacond.yaml:3:13: calibration.tx_power: must be between -127 and 20, got 40",
            ])
        let config = try ConfigLoader.load(
            yaml: "calibration: {advertise: true, tag_offset_db: 4.5}\n", file: "beacond.yaml")
        #expect(config.calibration.advertise && config.calibration.tagOffset == 4.5)
        #expect(config.siteModel.calibrationUUID == AutoCalibration.defaultUUID)
    }

    @Test func receiversThatWouldAdvertiseAlikeAreRefused() {
        let receivers = """
            receivers:
              - {id: rx228978, position: {x: 0, y: 0}}
              - {id: rx1033306, position: {x: 5, y: 0}}

            """
        // The same ids are fine while nobody advertises.
        #expect(errors(receivers + "calibration: {advertise: false}\n").isEmpty)
        #expect(
            errors(receivers + "calibration: {advertise: true}\n") == [
                "beacond.yaml:4:26: calibration.advertise: receivers \"rx228978\" and \"rx1033306\" would advertise "
                    + "as the same major and minor (their ids hash alike); rename one"
            ])
    }
}
