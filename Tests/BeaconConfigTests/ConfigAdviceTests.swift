import BeaconConfig
import Foundation
import Testing

/// A valid configuration that does less than it says is reported (issue 29, item 6): globs
/// that match no event type, a webhook or alarm that can never fire, a daemon that watches
/// nothing, and keys that only the indentation put in the wrong place.
struct ConfigAdviceTests {
    func warnings(_ yaml: String) throws -> [String] {
        try ConfigLoader.loadReporting(yaml: yaml, file: "beacond.yaml").warnings.map(\.description)
    }

    func errors(_ yaml: String) -> [String] { ConfigErrorTests().errors(yaml) }

    static let region =
        "clients:\n  - id: app\n    regions:\n      - {id: door, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n"
    static let site = """
        receivers:
          - {id: r1, position: {x: 0, y: 0}}
        assets:
          - {id: cart, beacon: {address: "D0:00:00:00:00:01"}}
        zones:
          - {id: till, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]}

        """

    @Test func aGlobThatMatchesNoEventTypeIsNamedWithTheLikelyOne() throws {
        let said = try warnings(
            Self.region
                + "webhooks:\n  - id: crm\n    url: https://crm.example/hook\n    events: [\"regoin.*\", \"zone.enterd\"]\n"
        )
        #expect(said.count == 2, "\(said)")
        #expect(
            said[0].hasPrefix(
                #"beacond.yaml:8:14: warning: webhooks[0].events[0]: "regoin.*" matches no event type (did you mean "region.*"?); the types are region.state, "#
            ))
        #expect(
            said[1].hasPrefix(
                #"beacond.yaml:8:26: warning: webhooks[0].events[1]: "zone.enterd" matches no event type (did you mean "zone.enter"?)"#
            ))
    }

    @Test func aWebhookThatCanNeverFireSaysWhy() throws {
        // zone.* takes zone.visit too, which needs no alarm: that webhook can fire.
        #expect(
            try warnings(
                Self.site + "webhooks:\n  - id: wms\n    url: https://wms.example/hook\n    events: [\"zone.*\"]\n"
            ).isEmpty)
        let zones =
            "webhooks:\n  - id: wms\n    url: https://wms.example/hook\n    events: [zone.enter, zone.exit, zone.dwell]\n"
        #expect(
            try warnings(Self.site + zones) == [
                "beacond.yaml:10:13: warning: webhooks[0].events: webhook wms can never fire: it takes zone.enter, "
                    + "zone.exit, zone.dwell, and no alarms are configured (alarms:); zone events come from alarms"
            ])
        let dwell =
            Self.site + "alarms:\n  - {id: a, zones: [till], on: [enter]}\n"
            + "webhooks:\n  - id: wms\n    url: https://wms.example/hook\n    events: [zone.dwell]\n"
        #expect(
            try warnings(dwell).map {
                $0.contains("webhook wms can never fire: it takes zone.dwell, and no alarm has on: [dwell]")
            } == [true])
        // With an alarm on dwell it can
        #expect(
            try warnings(dwell.replacingOccurrences(of: "on: [enter]", with: "on: [enter, dwell], dwell: 5m")).isEmpty)
        // Region events can always come: regions may be added through the API
        #expect(
            try warnings("webhooks:\n  - {id: crm, url: \"https://crm.example/\", events: [\"region.*\"]}\n").count == 1
        )
    }

    @Test func anAlarmWithNoAssetsCanNeverFire() throws {
        let yaml = """
            receivers:
              - {id: r1, position: {x: 0, y: 0}}
            zones:
              - {id: till, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]}
            alarms:
              - {id: till-open, zones: [till], on: [enter]}
            webhooks:
              - {id: crm, url: "https://crm.example/"}

            """
        let said = try warnings(yaml)
        #expect(
            said.contains(
                "beacond.yaml:6:5: warning: alarms[0]: alarm till-open can never fire: no assets are configured, so none can enter its zones"
            ), "\(said)")
    }

    @Test func aDaemonThatWatchesNothingOrSendsNowhereIsWarned() throws {
        #expect(
            try warnings("gateway: {id: gw1}\n") == [
                "beacond.yaml:1:1: warning: no clients (regions to monitor) and no assets (tags to place): the daemon "
                    + "will only count advertisements; regions can still be added through the API",
                "beacond.yaml:1:1: warning: no webhooks: events go only to the history, the API's stream and standard "
                    + "output",
            ])
        #expect(try warnings(Self.region + "webhooks:\n  - {id: crm, url: \"https://crm.example/\"}\n").isEmpty)
    }

    @Test func aKeyInTheWrongMappingNamesWhereItBelongsAndItsIndentation() {
        // A section indented under the one before it
        #expect(
            errors("monitoring:\n  exit_timeout: 30s\n  webhooks:\n    - {id: crm, url: \"https://crm.example/\"}\n")
                == [
                    #"beacond.yaml:3:3: monitoring.webhooks: unknown key here: "webhooks" is a top-level section, which starts at column 1; it is indented 2 spaces here"#
                ])
        // A section's key written at the top level, under a section the file has
        #expect(
            errors("monitoring:\n  enter_sightings: 2\nexit_timeout: 30s\n") == [
                #"beacond.yaml:3:1: exit_timeout: unknown key here: "exit_timeout" is a key of monitoring, whose keys start at column 3; it is at column 1"#
            ])
        // ... and under one it does not have
        #expect(
            errors("gateway: {id: gw1}\nexit_timeout: 30s\n") == [
                #"beacond.yaml:2:1: exit_timeout: unknown key here: "exit_timeout" is a key of monitoring, which this file does not have: write it indented under a "monitoring" line"#
            ])
        // A misspelling keeps its suggestion
        #expect(
            errors("bluetooth:\n  scann: active\n") == [
                #"beacond.yaml:2:3: bluetooth.scann: unknown key (did you mean "scan"?)"#
            ])
    }

    /// Issue 40: a tag configured to advertise so slowly (`simulation.tags`) that its
    /// `missing_after` is under three of its intervals is named, with the value that would do;
    /// one that leaves room is not; and a webhook that takes only the tag events has them
    /// (they need assets, not receiver positions).
    @Test func aTagSlowerThanItsMissingAfterIsNamed() throws {
        let slow = Self.site + "simulation:\n  tags:\n    - {asset: cart, interval: 30s}\n"
        // Ten minutes leave room for three 30 s intervals.
        #expect(try warnings(slow).filter { $0.contains("simulation.tags") }.isEmpty)
        let short = slow.replacingOccurrences(
            of: "beacon: {address: \"D0:00:00:00:00:01\"}}",
            with: "beacon: {address: \"D0:00:00:00:00:01\"}, missing_after: 1m}")
        let said = try warnings(short).filter { $0.contains("simulation.tags") }
        #expect(
            said == [
                "beacond.yaml:9:31: warning: simulation.tags[0].interval: asset cart advertises every 30s, and its "
                    + "missing_after (1m) is shorter than three of those: it would be reported missing between its own "
                    + "packets; raise missing_after to 90s or more"
            ], "\(said)")
        #expect(
            try warnings(short.replacingOccurrences(of: "interval: 30s", with: "interval: 10s")).filter {
                $0.contains("simulation.tags")
            }.isEmpty)
        let hook =
            Self.site
            + "webhooks:\n  - id: ops\n    url: https://ops.example/hook\n    events: [\"asset.missing\", \"asset.battery_low\"]\n"
        #expect(try warnings(hook).isEmpty)
    }
}
