import Tributary
import TributaryStreams

extension PipelineRunner {
    /// Leaves a chain hash (`StreamRecord.chainHash`) only where it vouches for history: on
    /// the last of `records` of each transaction read whole through `completeThrough`. Records
    /// arrive in position order, after the transforms (which may drop some), so a sink that
    /// has delivered that record has delivered every record of its transaction it will get.
    /// The records of a transaction that the next read continues carry none; the next read's
    /// last record of it does.
    static func keepChainHashesOnTransactionEnds(_ records: inout [StreamRecord], completeThrough: Int64) {
        for index in records.indices where records[index].chainHash != nil {
            let token = records[index].position.token
            let next = records.index(after: index)
            let endsTransaction = next == records.endIndex ? token <= completeThrough : records[next].position.token != token
            if !endsTransaction { records[index].chainHash = nil }
        }
    }
}
