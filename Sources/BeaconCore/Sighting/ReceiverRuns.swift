extension Sighting {
    /// A batch cut into runs of sightings from one receiver, each with the receiver's name,
    /// made once per run.
    ///
    /// Why: a name is a lookup in the process's table, under its lock (`ReceiverNames`), and
    /// a batch is mostly one adapter's; the scanner's watchdog and the tallies each went
    /// through it per sighting. A run is cut where the interned id changes, or, for names
    /// past the table's limit (`ReceiverID.unlisted`), where the text does.
    public static func receiverRuns(_ batch: [Sighting]) -> [(name: String, range: Range<Int>)] {
        receiverRanges(batch).map { (batch[$0.lowerBound].receiver, $0) }
    }

    /// The same runs without their names, for who needs only the first sighting of each
    /// (the engine's tallies look the receiver up by its id).
    public static func receiverRanges(_ batch: [Sighting]) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = batch.startIndex
        while start < batch.endIndex {
            let id = batch[start].receiverID
            var end = start + 1
            if id == .unlisted {
                let name = batch[start].receiver
                while end < batch.endIndex, batch[end].receiverID == id, batch[end].receiver == name { end += 1 }
            } else {
                while end < batch.endIndex, batch[end].receiverID == id { end += 1 }
            }
            runs.append(start..<end)
            start = end
        }
        return runs
    }
}
