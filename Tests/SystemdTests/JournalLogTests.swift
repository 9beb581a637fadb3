import Logging
import Testing

@testable import Systemd

/// Log lines to journal fields: the priority from the level word, one BEACOND_ field per key.
@Suite struct JournalLogTests {
    /// Issue 25, item 9: a value with a newline or an escape sequence cannot forge a second
    /// line or repaint the operator's terminal.
    @Test func controlCharactersInValuesAreWrittenOut() {
        let line = "warning: sightings.stale receiver=relay\nerror: forged \u{1B}[31mred\u{7F}"
        #expect(
            JournalLog.escapingControlCharacters(line)
                == "warning: sightings.stale receiver=relay\\nerror: forged \\u{1B}[31mred\\u{7F}")
        #expect(JournalLog.escapingControlCharacters("info: plain é line") == "info: plain é line")
    }

    @Test func levelsMapToSyslogPriorities() {
        #expect(JournalLog.level(of: "error: state.write_failed error=x") == .error)
        #expect(JournalLog.level(of: "warning: bluez.gone reason=x").rawValue == 4)
        #expect(JournalLog.level(of: "info: beacond.started").rawValue == 6)
        #expect(JournalLog.level(of: "no level here") == .info)
        #expect(JournalLog.Level.warning >= JournalLog.Level.info && !(JournalLog.Level.debug >= .info))
    }

    @Test func keyValuesBecomeStructuredFields() {
        #expect(
            JournalLog.structuredFields(
                "warning: webhook.failed webhook=crm error=\"HTTP 500\" attempts=3 retry-in=2s")
                == [
                    "BEACOND_EVENT=webhook.failed", "BEACOND_WEBHOOK=crm", "BEACOND_ERROR=HTTP 500",
                    "BEACOND_ATTEMPTS=3",
                    "BEACOND_RETRY_IN=2s",
                ])
        #expect(JournalLog.structuredFields("info: adapter.state adapter=hci0").contains("BEACOND_ADAPTER=hci0"))
    }

    @Test func outsideSystemdLinesGoToStandardError() {
        // The test runner's stderr is not a journal stream
        #expect(JournalLog(threshold: .info).toJournal == false)
    }

    @Test func theSwiftLogBackendRendersLevelMessageAndMetadataAsOneLine() {
        let text = JournalLogHandler.text(
            level: .warning, message: "webhook.failed webhook=crm",
            metadata: ["status": "500", "error": "HTTP 500 from crm"])
        #expect(text == "warning: webhook.failed webhook=crm error=\"HTTP 500 from crm\" status=500")
        // The journal fields come from the same text, metadata included
        #expect(
            JournalLog.structuredFields(text) == [
                "BEACOND_EVENT=webhook.failed", "BEACOND_WEBHOOK=crm", "BEACOND_ERROR=HTTP 500 from crm",
                "BEACOND_STATUS=500",
            ])
        #expect(JournalLog.level(of: text) == .warning)
        let priorities = [Logger.Level.trace, .debug, .info, .notice, .warning, .error, .critical].map {
            JournalLogHandler.priority($0)
        }
        #expect(priorities == [7, 7, 6, 5, 4, 3, 2])
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
