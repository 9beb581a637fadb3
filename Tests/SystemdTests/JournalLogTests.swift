import Logging
import Logs
import TestSupport
import Testing

@testable import Systemd

/// Log events to journal fields and logfmt lines: made from swift-log's metadata, never parsed
/// back from text.
@Suite struct JournalLogTests {
    /// Issue 26: a value with spaces reaches the journal whole (it was cut at its first space).
    @Test func eachMetadataValueBecomesOneWholeJournalField() {
        let fields = JournalLogHandler.fields(
            event: "simulation.started",
            metadata: ["next": "no BlueZ; sightings come from the site simulator", "retry-in": "2s", "tags": "6"])
        #expect(
            fields == [
                "BEACOND_EVENT=simulation.started", "BEACOND_RETRY_IN=2s", "BEACOND_TAGS=6",
                "BEACOND_NEXT=no BlueZ; sightings come from the site simulator",
            ])
    }

    /// Issue 25, item 9: a value with a newline or an escape sequence cannot forge a second
    /// line or repaint the operator's terminal, on standard error or in the journal.
    @Test func controlCharactersInValuesAreWrittenOut() throws {
        let forged = "relay\nlevel=error event=forged \u{1B}[31mred\u{7F}"
        let line = Logfmt.line(level: .warning, event: "sightings.stale", metadata: ["receiver": "\(forged)"])
        #expect(!line.contains("\n") && !line.contains("\u{1B}") && !line.contains("\u{7F}"))
        let parsed = try LogfmtReader.fields(line)
        #expect(parsed["receiver"] == forged && parsed["event"] == "sightings.stale" && parsed.count == 3)
        let journal = JournalLogHandler.fields(event: "sightings.stale", metadata: ["receiver": "\(forged)"])
        #expect(journal.last == "BEACOND_RECEIVER=relay\\nlevel=error event=forged \\u001b[31mred\\u007f")
        #expect(Logfmt.escapingControlCharacters("plain é line") == "plain é line")
    }

    @Test func standardErrorLinesAreLogfmtWithTheEventFirstAndWhatToDoLast() throws {
        let line = Logfmt.line(
            level: .warning, event: "webhook.failed",
            metadata: [
                "next": "retrying", "webhook": "crm", "error": "HTTP 500 from \"crm\"", "attempts": "3", "empty": "",
            ])
        #expect(
            line
                == #"level=warning event=webhook.failed attempts=3 empty="" webhook=crm error="HTTP 500 from \"crm\"" next=retrying"#
        )
        let pairs = try LogfmtReader.pairs(line)
        #expect(pairs.map(\.key) == ["level", "event", "attempts", "empty", "webhook", "error", "next"])
        #expect(pairs[5].value == "HTTP 500 from \"crm\"" && pairs[3].value == "")
        #expect(Logfmt.line(level: .info, event: "a=b", metadata: [:]) == #"level=info event="a=b""#)
    }

    @Test func levelsMapToSyslogPriorities() {
        let priorities = [Logger.Level.trace, .debug, .info, .notice, .warning, .error, .critical].map {
            JournalLogHandler.priority($0)
        }
        #expect(priorities == [7, 7, 6, 5, 4, 3, 2])
        #expect(JournalLog.Level(name: "notice") == .notice && JournalLog.Level(name: "loud") == nil)
        #expect(JournalLog.Level.warning >= JournalLog.Level.info && !(JournalLog.Level.debug >= .info))
    }

    @Test func outsideSystemdLinesGoToStandardError() {
        // The test runner's stderr is not a journal stream
        #expect(JournalLog(threshold: .info).toJournal == false)
    }

    /// Warnings and errors reach `/v1/status`'s recent errors as their logfmt lines.
    @Test func warningsAndErrorsAreHandedToTheProblemsSink() throws {
        let seen = CapturedLog()
        let log = JournalLog(threshold: .debug, problems: { seen.write($0) })
        log.logger.info("quiet.event")
        log.logger.warning("radios.blind", metadata: ["next": "no region exits"])
        #expect(seen.all == [#"level=warning event=radios.blind next="no region exits""#])
    }

    /// A reload's `gateway.log_level` reaches loggers already handed out.
    @Test func aNewThresholdReachesEveryCopyOfTheLogger() {
        let log = JournalLog(threshold: .warning)
        let handedOut = log.logger
        log.setThreshold(.debug)
        #expect(handedOut.logLevel == .debug && log.threshold == .debug)
        log.setThreshold(.error)
        #expect(handedOut.logLevel == .error && log.logger.logLevel == .error)
    }

    @Test func theThresholdFiltersThroughSwiftLog() {
        let log = JournalLog(threshold: .warning)
        #expect(log.logger.logLevel == .warning)
        var handler = JournalLogHandler(level: .info, toJournal: false)
        handler[metadataKey: "adapter"] = "hci0"
        #expect(handler.metadata["adapter"] == "hci0")
    }
}
