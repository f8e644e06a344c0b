import Foundation

/// One listening ``StoreChangeMonitor`` per store in the process, shared by every iteration
/// of ``RemoteChangeSequence``: each subscriber is told every change from its subscription
/// on. The monitor (a thread, a connection, a pipe, an inotify descriptor) stops ``linger``
/// after its last subscriber leaves, so a follower that waits again after each step (a
/// pipeline or an exporter going idle after every commit) keeps one instead of starting
/// and stopping one per wait.
enum SharedStoreMonitor {
    /// How long a monitor outlives its last subscriber.
    static let linger: DispatchTimeInterval = .seconds(1)

    /// A subscription: ends with ``cancel()``.
    struct Subscription: Sendable {
        let target: StoreChangeMonitor.Target
        let id: UUID

        func cancel() { SharedStoreMonitor.unsubscribe(self) }
    }

    private struct Subscriber {
        let deliver: @Sendable (RemoteChange) -> Void
        let finish: @Sendable () -> Void
    }

    private struct Entry {
        var monitor: StoreChangeMonitor?
        /// Which start of a monitor this entry holds (a stopped one's end must not end a newer).
        var monitorID: UUID?
        var subscribers: [UUID: Subscriber] = [:]
        /// Bumped at each change of subscribers, so that a pending stop sees it was overtaken.
        var generation = 0
    }

    private static let entries = Locked<[StoreChangeMonitor.Target: Entry]>([:])
    /// Serialises the start of monitors: a monitor's init waits for its thread's baseline.
    private static let starting = NSLock()

    /// Subscribes to the changes of `target`, starting its monitor if none runs; returns
    /// once the monitor has its baseline, so every commit after this call is reported.
    static func subscribe(_ target: StoreChangeMonitor.Target, deliver: @escaping @Sendable (RemoteChange) -> Void,
                          finish: @escaping @Sendable () -> Void) -> Subscription {
        let subscription = Subscription(target: target, id: UUID())
        starting.lock()
        defer { starting.unlock() }
        let running = entries.withLock { entries -> Bool in
            entries[target, default: Entry()].subscribers[subscription.id] = Subscriber(deliver: deliver, finish: finish)
            entries[target]?.generation += 1
            return entries[target]?.monitorID != nil
        }
        if !running {
            let id = UUID()
            entries.withLock { $0[target]?.monitorID = id }
            let monitor = StoreChangeMonitor(target: target, deliver: { fanOut(target, $0) }, finish: { ended(target, id) })
            entries.withLock { entries in
                if entries[target]?.monitorID == id { entries[target]?.monitor = monitor }
            }
        }
        return subscription
    }

    private static func fanOut(_ target: StoreChangeMonitor.Target, _ change: RemoteChange) {
        let subscribers = entries.withLock { $0[target]?.subscribers.values.map(\.deliver) ?? [] }
        for deliver in subscribers { deliver(change) }
    }

    /// The monitor's thread ended (stopped, or it could not listen): its subscribers are finished.
    private static func ended(_ target: StoreChangeMonitor.Target, _ id: UUID) {
        let finished = entries.withLock { entries -> [Subscriber] in
            guard entries[target]?.monitorID == id else { return [] }
            let subscribers = entries[target].map { Array($0.subscribers.values) } ?? []
            entries[target] = nil
            return subscribers
        }
        for subscriber in finished { subscriber.finish() }
    }

    private static func unsubscribe(_ subscription: Subscription) {
        let target = subscription.target
        let generation = entries.withLock { entries -> Int? in
            guard entries[target]?.subscribers.removeValue(forKey: subscription.id) != nil else { return nil }
            entries[target]?.generation += 1
            return entries[target]?.subscribers.isEmpty == true ? entries[target]?.generation : nil
        }
        guard let generation else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + linger) {
            let idle = entries.withLock { entries -> StoreChangeMonitor? in
                guard let entry = entries[target], entry.generation == generation, entry.subscribers.isEmpty else { return nil }
                entries[target] = nil
                return entry.monitor
            }
            idle?.stop()
        }
    }
}
