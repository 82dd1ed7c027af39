import Coffer

/// `git-merge-driver BASE OURS THEIRS PATH`: the merge driver git runs for `*.gpg` (`merge=coffer`).
///
/// git runs it at the top of the work tree, which is the store. Exits 0 when the entry is merged: cleanly,
/// or with a field both sides changed kept inside the entry with both values (then it says so on standard
/// error, and `coffer show` and `fsck` point at it until `coffer edit` resolves it), so that a `git merge`
/// or `git pull` by hand can be committed as it is. Exits 2 when it could not merge (it cannot decrypt or
/// encrypt the entry): git then reports a conflict and keeps this side's version, nothing is lost.
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
            if !clean {
                var name = arguments[3]
                if name.hasSuffix(".gpg") { name.removeLast(4) }
                standardError.line(
                    "\(invocation.program): \(Quoting.quoted(name)): both sides changed the same field; both values "
                        + "are kept in the entry: resolve them with \(invocation.program) edit \(Quoting.quoted(name))"
                )
            }
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
