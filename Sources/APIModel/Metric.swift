/// Every metric `/metrics` exposes, named once: the daemon writes them by these cases, and
/// tests and docs check against `allCases`. Counters end in `_total`, as Prometheus' naming
/// asks; everything else is a gauge.
public enum Metric: String, CaseIterable, Sendable {
    case advertisementsReceivedTotal = "beacond_advertisements_received_total"
    case advertisementsDecodedTotal = "beacond_advertisements_decoded_total"
    case advertisementsDroppedTotal = "beacond_advertisements_dropped_total"
    case advertisementsAssetTagsTotal = "beacond_advertisements_asset_tags_total"
    case advertisementsLateTotal = "beacond_advertisements_late_total"
    case advertisementsStaleTotal = "beacond_advertisements_stale_total"
    case advertisementsClockAheadTotal = "beacond_advertisements_clock_ahead_total"
    case beacons = "beacond_beacons"
    case beaconsEvictedTotal = "beacond_beacons_evicted_total"
    case eventsHeld = "beacond_events_held"
    case eventsDroppedTotal = "beacond_events_dropped_total"
    case stateStoreEmptiedTotal = "beacond_state_store_emptied_total"
    case stateWalBytes = "beacond_state_wal_bytes"
    case stateWrittenBytesTotal = "beacond_state_written_bytes_total"
    case eventsTotal = "beacond_events_total"
    case outboxDepth = "beacond_outbox_depth"
    case outboxOldestAgeSeconds = "beacond_outbox_oldest_age_seconds"
    case deadLetters = "beacond_dead_letters"
    case deadLettersDiscardedTotal = "beacond_dead_letters_discarded_total"
    case webhookRequestsTotal = "beacond_webhook_requests_total"
    case webhookEventsDeliveredTotal = "beacond_webhook_events_delivered_total"
    case webhookPositionsConflatedTotal = "beacond_webhook_positions_conflated_total"
    case bluezReachable = "beacond_bluez_reachable"
    case dbusSignalsTotal = "beacond_dbus_signals_total"
    case dbusReconnectsTotal = "beacond_dbus_reconnects_total"
    case adapterUp = "beacond_adapter_up"
    case esphomeProxyUp = "beacond_esphome_proxy_up"
    case esphomeAdvertisementsTotal = "beacond_esphome_advertisements_total"
    case esphomeAdvertisementsRefusedTotal = "beacond_esphome_advertisements_refused_total"
    case esphomeAdvertisementsShedTotal = "beacond_esphome_advertisements_shed_total"
    case engineTurnsTotal = "beacond_engine_turns_total"
    case engineBusySecondsTotal = "beacond_engine_busy_seconds_total"
    case engineLastTurnSeconds = "beacond_engine_last_turn_seconds"
    case engineLastTurnTimestampSeconds = "beacond_engine_last_turn_timestamp_seconds"
    case streamClients = "beacond_stream_clients"
    case apiConnections = "beacond_api_connections"
    case apiBufferedRequestBytes = "beacond_api_buffered_request_bytes"
    case apiRefusedTotal = "beacond_api_refused_total"
    case httpConnections = "beacond_http_connections"
    case httpRefusedTotal = "beacond_http_refused_total"
    case streamClientsDroppedTotal = "beacond_stream_clients_dropped_total"
    case uptimeSeconds = "beacond_uptime_seconds"
    case mqttConnected = "beacond_mqtt_connected"
    case mqttReconnectsTotal = "beacond_mqtt_reconnects_total"
    case mqttPublishRefusedTotal = "beacond_mqtt_publish_refused_total"
    case siteQueuedSightings = "beacond_site_queued_sightings"
    case siteBatchesSentTotal = "beacond_site_batches_sent_total"
    case siteSightingsUnsentTotal = "beacond_site_sightings_unsent_total"
    case siteBatchesReceivedTotal = "beacond_site_batches_received_total"
    case siteBatchesLostTotal = "beacond_site_batches_lost_total"
    case siteDroppedTotal = "beacond_site_dropped_total"
    case siteForeignSightingsTotal = "beacond_site_foreign_sightings_total"
    case siteSilentTopics = "beacond_site_silent_topics"
    case siteLocator = "beacond_site_locator"
    case buildInfo = "beacond_build_info"
    case configReloadsTotal = "beacond_config_reloads_total"
    case receiverSightingsTotal = "beacond_receiver_sightings_total"
    case receiverLastHeardAgeSeconds = "beacond_receiver_last_heard_age_seconds"
    case assetsMissing = "beacond_assets_missing"
    case assetsBatteryLow = "beacond_assets_battery_low"
    case assetBatteryPercent = "beacond_asset_battery_percent"
    case assetBatteryVolts = "beacond_asset_battery_volts"
    case zoneOccupancy = "beacond_zone_occupancy"
    case zoneVisitsTotal = "beacond_zone_visits_total"
    case zoneFlappingTotal = "beacond_zone_flapping_total"

    /// The family's `# HELP` text.
    public var help: String {
        switch self {
        case .advertisementsReceivedTotal:
            "Advertisements handed to the engine."
        case .advertisementsDecodedTotal:
            "Advertisements decoded as a beacon frame."
        case .advertisementsDroppedTotal:
            "Advertisements that are not beacons, by reason."
        case .advertisementsAssetTagsTotal:
            "Advertisements of assets' address tags that are no beacon frame, used for positions."
        case .advertisementsLateTotal:
            "Sightings older than the engine's clock."
        case .advertisementsStaleTotal:
            "Sightings older than exit_timeout when they arrived (a relay's backlog or clock behind): dropped."
        case .advertisementsClockAheadTotal:
            "Sightings stamped over a second later than this gateway's clock (a relay's clock runs fast), taken at its time."
        case .beacons:
            "Beacons currently remembered."
        case .beaconsEvictedTotal:
            "Beacons forgotten early because the beacon table was full (a flood of made-up identities?)."
        case .eventsHeld:
            "Events held in memory because the state store cannot write (a full disk)."
        case .eventsDroppedTotal:
            "Events given up on while the state store could not write them."
        case .stateStoreEmptiedTotal:
            "Times the state file was found corrupt while running and emptied in place (a failing storage card?)."
        case .stateWrittenBytesTotal:
            "Bytes the daemon has written to its disk since it started (its state file, write-ahead log and checkpoints; /proc/self/io): what the flash card takes from it."
        case .stateWalBytes:
            "Size of the state file's write-ahead log; it grows past 6 MB only while another process holds a read open on the file."
        case .eventsTotal:
            "Events published, by type."
        case .outboxDepth:
            "Events waiting for a webhook."
        case .outboxOldestAgeSeconds:
            "Age of the oldest event waiting for a webhook."
        case .deadLetters:
            "Events given up on and kept, by webhook."
        case .deadLettersDiscardedTotal:
            "Dead letters discarded, oldest first, past the newest kept per webhook (state store limit)."
        case .webhookRequestsTotal:
            "Webhook requests by result."
        case .webhookPositionsConflatedTotal:
            "Positions replaced by a newer one of the same asset, or older than max_age, before a webhook took them (SPEC §4.4)."
        case .webhookEventsDeliveredTotal:
            "Events acknowledged by a webhook."
        case .bluezReachable:
            "1 when bluetoothd owns org.bluez on the system bus."
        case .dbusSignalsTotal:
            "D-Bus signals handled."
        case .dbusReconnectsTotal:
            "Times the D-Bus connection was re-established."
        case .adapterUp:
            "1 when the adapter is present, powered and discovering."
        case .esphomeProxyUp:
            "1 when the ESPHome proxy is connected and subscribed to its advertisements (SPEC §9)."
        case .esphomeAdvertisementsTotal:
            "Advertisements an ESPHome proxy forwarded, taken as sightings of its receiver."
        case .esphomeAdvertisementsRefusedTotal:
            "Advertisements an ESPHome proxy forwarded whose AD structures ran past their data, not taken."
        case .esphomeAdvertisementsShedTotal:
            "Advertisements an ESPHome proxy forwarded over 2,000 a second, dropped."
        case .engineTurnsTotal:
            "Engine turns (a batch of input, then due timers)."
        case .engineBusySecondsTotal:
            "Time spent inside engine turns."
        case .engineLastTurnSeconds:
            "Duration of the latest engine turn."
        case .engineLastTurnTimestampSeconds:
            "When the engine last answered or finished a turn (at least once a second while it runs; an alert on its age finds a stuck engine)."
        case .streamClients:
            "Open event streams."
        case .apiConnections:
            "Connections open to the API socket."
        case .apiBufferedRequestBytes:
            "Bytes of request bodies held against the API's 16 MiB body budget."
        case .apiRefusedTotal:
            "Connections and requests the API refused or closed, by reason (limits in docs/api.md)."
        case .httpConnections:
            "Connections open on the read-only TCP listener (http.listen)."
        case .httpRefusedTotal:
            "Connections and requests the read-only TCP listener refused, by reason (no token, a foreign Host, one address's limit, an idle connection closed to make room)."
        case .streamClientsDroppedTotal:
            "Event streams closed because the client stopped reading."
        case .uptimeSeconds:
            "Seconds since start."
        case .mqttConnected:
            "1 while connected to the site's broker."
        case .mqttReconnectsTotal:
            "Connections to the site's broker made again after one was lost."
        case .mqttPublishRefusedTotal:
            "Messages the site's broker refused (its MQTT 5 reason, such as an ACL's not authorized), by reason."
        case .siteSilentTopics:
            "Other systems' topic filters (ESPresense, OpenMQTTGateway) on which nothing arrived since this gateway connected 30 s or more ago."
        case .siteQueuedSightings:
            "This gateway's sightings waiting for the next batch to the site."
        case .siteBatchesSentTotal:
            "Batches of this gateway's sightings published to the site."
        case .siteSightingsUnsentTotal:
            "This gateway's sightings not published: the broker was away or too many waited."
        case .siteBatchesReceivedTotal:
            "Batches taken from the site's other gateways and radios, by sender."
        case .siteBatchesLostTotal:
            "Batches missing from a gateway's sequence, by sender."
        case .siteDroppedTotal:
            "Messages refused whole and records dropped from the site's topics (sightings, and what gateways say of themselves), by reason."
        case .siteForeignSightingsTotal:
            "Sightings taken from another system's receiver on the site's broker (ESPresense, OpenMQTTGateway), by receiver."
        case .siteLocator:
            "1 while this gateway is the site's locator (it delivers the site's events)."
        case .buildInfo:
            "Always 1; the version and architecture of this build are its labels."
        case .configReloadsTotal:
            "Configuration reloads (SIGHUP), applied or refused (the file had errors; the old one runs on)."
        case .receiverSightingsTotal:
            "Sightings each receiver gave the engine: configured receivers, local adapters and relays."
        case .receiverLastHeardAgeSeconds:
            "Seconds since each receiver was last heard, or since the daemon started if it has not been."
        case .assetsMissing:
            "Assets whose tag was heard and then not for its missing_after."
        case .assetsBatteryLow:
            "Assets whose tag's battery is below tags.battery_low."
        case .assetBatteryPercent:
            "Each tag's battery in percent, where its telemetry gives one."
        case .assetBatteryVolts:
            "Each tag's battery in volts (Prometheus' base unit), from its latest telemetry frame."
        case .zoneOccupancy:
            "Assets inside each zone now."
        case .zoneVisitsTotal:
            "Visits begun in each zone since the daemon started, counted as the roll-ups count them (SPEC §8, §10)."
        case .zoneFlappingTotal:
            "Times an asset began to flap in a zone (zone.flapping) since the daemon started or was reloaded."
        }
    }

    /// `counter` or `gauge`, for the family's `# TYPE` line.
    public var type: String { rawValue.hasSuffix("_total") ? "counter" : "gauge" }
}
