/// Ends a command with an exit status, after printing `message` (when there is one) on standard error.
///
/// Commands throw this where pass calls `die` or `exit`; ``CofferCLI/main(_:)`` prints and returns it.
struct Exit: Error {
    /// The process exit status.
    var status: Int32
    /// The line printed on standard error before exiting, without its newline.
    var message: String?

    /// Exits with `status` and nothing more to say.
    init(_ status: Int32, _ message: String? = nil) {
        self.status = status
        self.message = message
    }

    /// pass's `die`: prints `message` and exits 1.
    static func die(_ message: String) -> Exit { Exit(1, message) }

    /// Exits successfully.
    static let success = Exit(0)
}
