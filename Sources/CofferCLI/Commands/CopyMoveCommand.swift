import Coffer

/// `mv`, `rename` and `cp`, `copy [--force,-f] old-path new-path`: moves or copies an entry or a folder,
/// re-encrypting what lands under other recipients.
enum CopyMoveCommand {
    /// `mv`, `rename`.
    static let moveCommand = Command(
        names: ["mv", "rename"], options: options, usage: "[--force,-f] old-path new-path",
        help: { _ in
            ["Renames or moves old-path to new-path, optionally forcefully, selectively reencrypting."]
        },
        passHead: "mv [--force,-f] old-path new-path", run: { try run($0, $1, copy: false) })

    /// `cp`, `copy`.
    static let copyCommand = Command(
        names: ["cp", "copy"], options: options, usage: "[--force,-f] old-path new-path",
        help: { _ in ["Copies old-path to new-path, optionally forcefully, selectively reencrypting."] },
        passHead: "cp [--force,-f] old-path new-path", run: { try run($0, $1, copy: true) })

    private static let forceFlag = Flag("f", "force", "overwrite without asking")
    private static let options = Command.options(forceFlag)

    /// Runs the command; `copy` selects `cp`.
    static func run(_ arguments: [String], _ invocation: Invocation, copy: Bool) throws {
        let (parsed, _) = invocation.parseOptions(arguments, options)
        guard parsed.operands.count == 2 else { throw invocation.usage("[--force,-f] old-path new-path") }
        let (source, destination) = (parsed.operands[0], parsed.operands[1])
        try invocation.checkSneakyPaths(source, destination)

        // pass prints the file or folder it is about to move.
        var oldPath = invocation.prefix + "/" + (source.withoutLastSlash)
        let meansFolder =
            (FileSystem.isFile(oldPath + ".gpg") && FileSystem.isDirectory(oldPath) && source.endsWithSlash)
            || !FileSystem.isFile(oldPath + ".gpg")
        if !meansFolder { oldPath += ".gpg" }
        standardOutput.line(oldPath)

        let interactive = Terminal.isTerminal(0) && !parsed[forceFlag]
        let tool = copy ? "cp" : "mv"
        let overwrite: ((String) -> Bool)? =
            interactive
            ? { target in
                standardError.write("\(tool): overwrite \(CoreutilsMessages.quote(target))? ")
                let answer = ((try? Terminal.readLine()) ?? nil)?.line.bytes ?? []
                return answer.first == UInt8(ascii: "y") || answer.first == UInt8(ascii: "Y")
            } : nil
        invocation.warnAboutUnappliedGPGOptions()
        do {
            if copy {
                try invocation.store.copy(
                    source, to: destination, overwrite: overwrite, onEvent: CoreutilsMessages.print)
            } else {
                try invocation.store.move(
                    source, to: destination, overwrite: overwrite, onEvent: CoreutilsMessages.print)
            }
        } catch let error as CofferError where error.code == .io {
            throw Exit.die("\(tool): \(error.message)")
        } catch let error as CofferError where error.code == .sameFile && error.paths.count == 2 {
            let (first, second) = (
                CoreutilsMessages.quote(error.paths[0]), CoreutilsMessages.quote(error.paths[1])
            )
            throw Exit.die("\(tool): \(first) and \(second) are the same file")
        } catch let error as CofferError where error.code == .intoItself && error.paths.count == 2 {
            let (folder, inside) = (
                CoreutilsMessages.quote(error.paths[0]), CoreutilsMessages.quote(error.paths[1])
            )
            throw Exit.die(
                copy
                    ? "cp: cannot copy a directory, \(folder), into itself, \(inside)"
                    : "mv: cannot move \(folder) to a subdirectory of itself, \(inside)")
        }
    }
}
