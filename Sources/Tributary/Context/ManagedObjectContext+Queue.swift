import Foundation

extension ManagedObjectContext {
    /// Marks a private queue as the context's, so ``runOnQueueAndWait(_:)`` knows when it is on it.
    static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Marks the main queue, which `swift test` (parked in `dispatch_main`) may drain on another thread than the main one.
    static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the caller runs on the context's queue.
    var isOnQueue: Bool {
        if concurrencyType == .mainQueue { return Thread.isMainThread || DispatchQueue.getSpecific(key: Self.mainQueueKey) == true }
        return DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self)
    }

    /// Runs `body` on the context's queue and waits for it without blocking a thread.
    func onQueue(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                body()
                continuation.resume()
            }
        }
    }

    /// Runs `body` on the context's queue: at once when already on it, otherwise waiting for it.
    func runOnQueueAndWait(_ body: () -> Void) {
        if isOnQueue { body() } else { queue.sync(execute: body) }
    }
}

extension DispatchQueue {
    /// Tags a context's private queue with the context (not the main queue, which contexts share).
    func setSpecificIfPrivate(for context: ManagedObjectContext) {
        guard context.concurrencyType == .privateQueue else { return }
        setSpecific(key: ManagedObjectContext.queueKey, value: ObjectIdentifier(context))
    }
}
