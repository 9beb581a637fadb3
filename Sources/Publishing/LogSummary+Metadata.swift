import BeaconCore
import Logging

extension LogSummary.Report {
    /// The metadata of a line telling it: the count under `count`, then either how long the
    /// sum took (`over_s`) or, for the first, what to do (`next`).
    public func metadata(count: String, at t: Timestamp, next: String) -> Logger.Metadata {
        var metadata: Logger.Metadata = [count: "\(self.count)"]
        if let since {
            metadata["over_s"] = "\(Int((t - since).seconds.rounded()))"
        } else {
            metadata["next"] = "\(next)"
        }
        return metadata
    }
}
