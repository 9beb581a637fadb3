extension Sighting {
    /// A batch cut into runs of sightings from one receiver, each with the receiver's name,
    /// made once per run.
    ///
    /// Why: a name is a lookup in the process's table, under its lock (`ReceiverNames`), and
    /// a batch is mostly one adapter's; the scanner's watchdog and the tallies each went
    /// through it per sighting. A run is cut where the interned id changes, or, for names
    /// past the table's limit (`ReceiverID.unlisted`), where the text does.
    public static func receiverRuns(_ batch: [Sighting]) -> [(name: String, range: Range<Int>)] {
        var runs: [(name: String, range: Range<Int>)] = []
        var start = batch.startIndex
        while start < batch.endIndex {
            let id = batch[start].receiverID
            let name = batch[start].receiver
            var end = start + 1
            while end < batch.endIndex, batch[end].receiverID == id, id != .unlisted || batch[end].receiver == name {
                end += 1
            }
            runs.append((name, start..<end))
            start = end
        }
        return runs
    }
}
