import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `git-merge-driver BASE OURS THEIRS PATH`: the merge driver git runs for `*.gpg` (`merge=coffer`).
///
/// git runs it at the top of the work tree, which is the store. Exits 0 when the merge is clean, 1 when
/// a conflict was kept inside the entry, 2 when it could not merge (git then reports a conflict).
enum MergeDriverCommand {
    /// `git-merge-driver`, run by git.
    static let command = Command(
        names: ["git-merge-driver"], usage: "BASE OURS THEIRS PATH", origin: .hidden, operands: .none,
        help: { _ in ["Merge three encrypted versions of an entry (git runs it)."] }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard arguments.count == 4 else { throw invocation.usage("BASE OURS THEIRS PATH") }
        var configuration = invocation.store.configuration
        configuration.root = currentDirectory()
        let store = PasswordStore(configuration: configuration)
        do {
            let clean = try store.mergeEntry(
                base: arguments[0], ours: arguments[1], theirs: arguments[2], path: arguments[3])
            if !clean { throw Exit(1) }
        } catch let exit as Exit {
            throw exit
        } catch {
            throw Exit(2, "\(invocation.program): cannot merge \(arguments[3]): \(error)")
        }
    }
}

/// The process's working folder.
func currentDirectory() -> String {
    guard let path = getcwd(nil, 0) else { return "." }
    defer { free(path) }
    return String(cString: path)
}
