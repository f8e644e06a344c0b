import Foundation

/// A progress line on standard error while long work runs (`import`, `export`, `replay`,
/// snapshots, `run --once`): count, rate and, when the total is known, the time left.
/// It is drawn only when standard error is a terminal, at most ten times a second, and
/// cleared by ``finish()``; piped output gets nothing but the final summary.
///
/// ```swift
/// let progress = ProgressLine(verb: "replayed", noun: "record")
/// progress.update(records)        // from the work's progress callback
/// progress.finish()
/// print("replayed \(records) records\(progress.rateText(records))")
/// ```
final class ProgressLine {
    private let verb: String
    private let noun: String
    private let total: Int?
    private let enabled: Bool
    private let start = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?

    init(verb: String = "", noun: String, total: Int? = nil, enabled: Bool = Console.isErrorTerminal) {
        self.verb = verb
        self.noun = noun
        self.total = total
        self.enabled = enabled
    }

    /// Seconds since the work began.
    var elapsed: Double {
        let duration = start.duration(to: .now)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Shows `done` (throttled to ten draws a second); `fraction` (0…1) of the work done,
    /// when known otherwise than by a total count, gives the time left.
    func update(_ done: Int, fraction: Double? = nil) {
        guard enabled else { return }
        let now = ContinuousClock.now
        if let lastDrawn, lastDrawn.duration(to: now) < .milliseconds(100) { return }
        lastDrawn = now
        var line = text(done)
        if total == nil, let fraction, fraction > 0, fraction < 1 {
            line += "  \(Int(fraction * 100))%  ETA \(Self.duration(elapsed * (1 - fraction) / fraction))"
        }
        Console.progress(line)
    }

    /// Clears the line.
    func finish() {
        guard enabled, lastDrawn != nil else { return }
        Console.endProgress()
    }

    /// The line: `replayed 12,345 of 50,000 records  24,690/s  ETA 2s`.
    func text(_ done: Int) -> String {
        var line = verb.isEmpty ? "" : verb + " "
        line += Self.grouped(done)
        if let total { line += " of \(Self.grouped(total))" }
        line += " \(done == 1 && total == nil ? noun : noun + "s")"
        let seconds = elapsed
        if seconds > 0.05 {
            let rate = Double(done) / seconds
            line += "  \(Self.grouped(Int(rate.rounded())))/s"
            if let total, rate > 0, total > done { line += "  ETA \(Self.duration(Double(total - done) / rate))" }
        }
        return line
    }

    /// ` in 1.2 s (10,234 records/s)` for a summary line.
    func rateText(_ done: Int) -> String {
        let seconds = elapsed
        let rate = seconds > 0 ? Double(done) / seconds : 0
        return " in \(String(format: "%.1f", seconds)) s (\(Self.grouped(Int(rate.rounded()))) \(noun)s/s)"
    }

    /// `1234567` as `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (i, digit) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// `75` as `1m15s`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds < 8_640_000 else { return "?" }
        let whole = Int(seconds.rounded(.up))
        return whole >= 3600 ? "\(whole / 3600)h\(whole % 3600 / 60)m" : whole >= 60 ? "\(whole / 60)m\(whole % 60)s" : "\(whole)s"
    }
}
