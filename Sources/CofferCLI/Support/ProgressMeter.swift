/// A progress line on standard error for bulk work (`grep`, `init` re-encryption, `fsck`): entries done
/// out of the total, the rate, and the time left.
///
/// It is drawn only when standard error is a terminal (not `TERM=dumb`, not `COFFER_PROGRESS=0`) and only
/// once the work has run for a second, so short runs, pipes and scripts never see it. Output printed while
/// it shows calls ``clear()`` first; the next update draws the line again.
final class ProgressMeter: @unchecked Sendable {
    /// What is being done (`decrypting`, `re-encrypting`, `checking`).
    private let label: String
    /// Whether the line may be drawn at all.
    private let enabled: Bool
    /// Where the line goes (standard error).
    private let output: OutputStream
    /// How long the work runs before the line first shows, in seconds.
    private let delay: Double
    /// When the work started and when the line was last drawn (monotonic seconds).
    private let start: Double
    private var lastDrawn: Double = 0
    /// Whether the line is on the screen now.
    private var visible = false

    /// Starts measuring; nothing is drawn yet.
    init(label: String, environment: [String: String], descriptor: Int32 = 2, delay: Double = 1) {
        self.label = label
        output = OutputStream(descriptor: descriptor)
        self.delay = delay
        let term = environment["TERM"] ?? ""
        enabled = isatty(descriptor) == 1 && term != "dumb" && environment["COFFER_PROGRESS"] != "0"
        start = Self.now()
    }

    /// Records that `done` of `total` items are finished, redrawing at most ten times a second; the line
    /// goes away when the last item is done, so that what follows (git's output) starts on a clean line.
    func update(done: Int, total: Int) {
        guard enabled, total > 0 else { return }
        if done >= total {
            clear()
            return
        }
        let now = Self.now()
        let elapsed = now - start
        guard elapsed >= delay, !visible || now - lastDrawn >= 0.1 else { return }
        lastDrawn = now
        output.write(
            "\r\u{1b}[K" + Self.line(label: label, done: done, total: total, elapsed: elapsed))
        visible = true
    }

    /// Erases the line, if it shows, so that other output starts on a clean line.
    func clear() {
        guard visible else { return }
        output.write("\r\u{1b}[K")
        visible = false
    }

    /// The text of the line: `label [=====     ] 312/1000  85/s  8s left`.
    static func line(label: String, done: Int, total: Int, elapsed: Double) -> String {
        let width = 24
        let filled = total > 0 ? min(width, done * width / total) : 0
        let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var text = "\(label) [\(bar)] \(done)/\(total)"
        if rate > 0 {
            text += "  \(Int(rate.rounded()))/s"
            if done < total { text += "  \(duration(Double(total - done) / rate)) left" }
        }
        return text
    }

    /// `42s`, `3m05s`, `1h02m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if whole < 3600 { return "\(whole / 60)m\(twoDigits(whole % 60))s" }
        return "\(whole / 3600)h\(twoDigits(whole % 3600 / 60))m"
    }

    /// Monotonic time in seconds.
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
