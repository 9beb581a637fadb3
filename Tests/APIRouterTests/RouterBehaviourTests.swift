import API
import BeaconCore
import HTTPServer
import Testing

/// Issue 54, item 5: the route table's answers tested in process, in milliseconds, against a
/// router over a running engine (`APIAnswerTests.Fixture`) — what the black-box tests of the
/// daemon would otherwise start a process, a socket and a bus for.
@Suite struct RouterBehaviourTests {
    static func array(_ value: JSONValue?) -> [JSONValue] {
        if case let .array(items)? = value { items } else { [] }
    }

    static func bool(_ value: JSONValue?) -> Bool? {
        if case let .bool(b)? = value { b } else { nil }
    }

    static func code(_ response: HTTPResponse) -> String? {
        (try? JSONParser.parse(String(decoding: response.body, as: UTF8.self)))?["error"]?["code"]?.stringValue
    }

    @Test func anUnknownPathIs404AndAMethodThePathHasNot405NamingThoseItHas() throws {
        let f = try APIAnswerTests.Fixture()
        let unknown = try f.answer("/v1/nowhere")
        #expect(unknown.status == 404 && Self.code(unknown) == "not_found")
        let wrong = try f.answer("DELETE", "/v1/status")
        #expect(wrong.status == 405 && Self.code(wrong) == "method_not_allowed")
        #expect(wrong.headers.contains { $0.name == "Allow" && $0.value.contains("GET") }, "\(wrong.headers)")
    }

    /// An admin route is refused on the request's head alone to a peer that is neither root
    /// nor in the admin group, before any body is read; root is let through.
    @Test func anAdminRouteRefusesAPeerThatIsNeitherRootNorAdmin() throws {
        let f = try APIAnswerTests.Fixture()
        let head = try f.request("PATCH", "/v1/alarms/dock-watch", uid: 4242)
        let early = try #require(f.router.admission(head))
        #expect(early.status == 403 && Self.code(early) == "forbidden")
        #expect(f.router.admission(try f.request("GET", "/v1/alarms", uid: 4242)) == nil, "reading needs no admin")
        let refused = try f.answer("PATCH", "/v1/alarms/dock-watch", body: "{\"active\": false}", uid: 4242)
        #expect(refused.status == 403)
        #expect(Self.bool(Self.array(try f.get("/v1/alarms")["alarms"]).first?["active"]) == true, "unchanged")
    }

    /// `PATCH /v1/alarms/{id}`: switched off, the list says so; only `active` can change; an
    /// unknown alarm is 404.
    @Test func anAlarmSwitchedOffIsListedOffAndOnlyActiveChanges() throws {
        let f = try APIAnswerTests.Fixture()
        let off = try f.answer("PATCH", "/v1/alarms/dock-watch", body: "{\"active\": false}")
        #expect(off.status == 200, "\(String(decoding: off.body, as: UTF8.self))")
        let alarms = Self.array(try f.get("/v1/alarms")["alarms"])
        #expect(Self.bool(alarms.first { $0["id"]?.stringValue == "dock-watch" }?["active"]) == false)
        #expect(Self.bool(alarms.first { $0["id"]?.stringValue == "door-dwell" }?["active"]) == true)
        let other = try f.answer("PATCH", "/v1/alarms/dock-watch", body: "{\"active\": true, \"zones\": []}")
        #expect(other.status == 422 && Self.code(other) == "invalid_alarm")
        let unknown = try f.answer("PATCH", "/v1/alarms/nowhere", body: "{\"active\": false}")
        #expect(unknown.status == 404 && Self.code(unknown) == "unknown_alarm")
    }

    /// A zone's stats refuse what they cannot answer, each with its own code; an unknown zone
    /// is 404; a good query answers. (Was a process test, `ZoneAnalyticsTests`.)
    @Test func zoneStatsRefuseWhatTheyCannotAnswerWithWhatIsWrong() throws {
        let f = try APIAnswerTests.Fixture()
        for (query, code) in [
            ("bucket=week", "bad_bucket"), ("from=yesterday", "bad_from"), ("from=1h&to=2h", "bad_span"),
            ("from=90d&bucket=hour", "too_many_buckets"),
        ] {
            let answer = try f.answer("/v1/zones/dock/stats?\(query)")
            #expect(answer.status == 400 && Self.code(answer) == code, "\(query)")
        }
        #expect(try f.answer("/v1/zones/nowhere/stats").status == 404)
        #expect(try f.answer("/v1/analytics/heatmap?level=x").status == 400)
        let week = try f.get("/v1/zones/dock/stats?from=7d")
        #expect(week["bucket"]?.stringValue == "day" && Self.array(week["buckets"]).count >= 7)
    }

    /// An unknown asset, client or webhook is 404 with a code that names which.
    @Test func unknownNamesAre404WithACodeThatSaysWhichKind() throws {
        let f = try APIAnswerTests.Fixture()
        for (method, path, code) in [
            ("GET", "/v1/assets/nowhere", "unknown_asset"), ("GET", "/v1/clients/nobody/regions", "unknown_client"),
            ("POST", "/v1/webhooks/nowhere/test", "unknown_webhook"),
        ] {
            let answer = try f.answer(method, path)
            #expect(answer.status == 404 && Self.code(answer) == code, "\(method) \(path)")
        }
        #expect(try f.answer("/v1/assets/cart-7").status == 200)
    }
}
