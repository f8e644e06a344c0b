import Foundation

/// Timing and scratch space for benchmarks.
enum Harness {
    /// Seconds taken by `body`.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return seconds(clock.now - start)
    }

    /// A duration in seconds.
    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Runs each side `rounds` times, interleaved (a, b, a, b, …), and returns the best
    /// (smallest) time of each: both sides see the same machine state.
    static func interleaved(rounds: Int = 3, _ sides: [() throws -> Double]) throws -> [Double] {
        var best = Array(repeating: Double.infinity, count: sides.count)
        for _ in 0..<rounds {
            for (i, side) in sides.enumerated() { best[i] = min(best[i], try side()) }
        }
        return best
    }

    /// A fresh directory, removed after `body`.
    static func withDirectory<T>(_ body: (URL) throws -> T) rethrows -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-bench-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }

    /// Peak resident memory of this process so far, in MB (VmHWM).
    static func peakRSSMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
            return kb / 1024
        }
        return 0
    }
}
