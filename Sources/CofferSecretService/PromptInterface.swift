#if canImport(CSDBus)
    import Coffer

    #if canImport(Glibc)
        import Glibc
    #endif

    extension SecretServiceProvider {
        /// `org.freedesktop.Secret.Session`, at `/org/freedesktop/secrets/session/N`.
        static let session = BusInterface(
            name: sessionInterface,
            methods: [
                BusMethod("Close") { provider, call in
                    guard case .session(let path) = call.object else {
                        throw BusError.noSuchObject(call.path)
                    }
                    try provider.checkOwner(provider.sessions[path]?.owner)
                    provider.sessions[path] = nil
                    return []
                }
            ])

        /// `org.freedesktop.Secret.Prompt`, at `/org/freedesktop/secrets/prompt/N`: used once, by the client
        /// that got it.
        static let prompt = BusInterface(
            name: promptInterface,
            methods: [
                BusMethod("Prompt", in: "window-id s") { provider, call in
                    let (path, prompt) = try provider.takePrompt(call)
                    provider.runPrompt(path, prompt)
                    return []
                },
                BusMethod("Dismiss") { provider, call in
                    let (path, _) = try provider.takePrompt(call)
                    provider.emit(
                        path, promptInterface, "Completed", [.boolean(true), .variant(.objectPaths([]))])
                    return []
                },
            ],
            signals: [BusSignal("Completed", "dismissed b, result v")])

        /// The prompt a call is made on, checked to be the caller's, and forgotten (a prompt runs once).
        func takePrompt(_ call: BusCall) throws -> (String, Prompt) {
            guard case .prompt(let path) = call.object, let prompt = prompts[path] else {
                throw BusError.noSuchObject(call.path)
            }
            try checkOwner(prompt.owner)
            prompts[path] = nil
            return (path, prompt)
        }

        /// Does what `prompt` at `path` asks, then signals `Completed`.
        func runPrompt(_ path: String, _ prompt: Prompt) {
            switch prompt.action {
            case .unlock(let paths):
                var unlocked: [String] = []
                for path in paths {
                    switch resolve(path) {
                    case .collection(let element)?, .item(let element, _)?:
                        if let collection = collections[element], unlockCollection(collection) {
                            collections[element]?.locked = false
                            unlocked.append(path)
                        }
                    default:
                        continue
                    }
                }
                // What did not decrypt before the unlock is read now.
                if !unlocked.isEmpty {
                    refresh(
                        retrying: Set(
                            unlocked.compactMap { path -> String? in
                                switch resolve(path) {
                                case .collection(let element)?, .item(let element, _)?:
                                    return collections[element]?.id
                                default: return nil
                                }
                            }))
                }
                emit(
                    path, Self.promptInterface, "Completed",
                    [.boolean(unlocked.isEmpty), .variant(.objectPaths(unlocked))])
            }
        }

        /// `Unlock`: objects already unlocked come back at once; the others through a prompt.
        func unlock(_ paths: [String]) throws -> [BusValue] {
            var unlocked: [String] = []
            var locked: [String] = []
            for path in paths {
                switch resolve(path) {
                case .collection(let element)?, .item(let element, _)?:
                    if collections[element]?.locked == true {
                        locked.append(path)
                    } else {
                        unlocked.append(path)
                    }
                default:
                    continue
                }
            }
            guard !locked.isEmpty else { return [.objectPaths(unlocked), .objectPath("/")] }
            let prompt = newPath("prompt")
            prompts[prompt] = Prompt(owner: caller, action: .unlock(locked))
            return [.objectPaths(unlocked), .objectPath(prompt)]
        }

        /// `Lock`: marks collections locked (their secrets are given again only after an unlock) and tells
        /// gpg-agent to forget the passphrases of the keys their entries are encrypted to, so that the
        /// unlock asks for them again.
        func lock(_ paths: [String]) throws -> [BusValue] {
            var done: [String] = []
            var forgotten: Set<String> = []
            for path in paths {
                switch resolve(path) {
                case .collection(let element)?, .item(let element, _)?:
                    guard let collection = collections[element] else { continue }
                    collections[element]?.locked = true
                    done.append(path)
                    if !collection.inMemory && forgotten.insert(element).inserted {
                        let store = items.store
                        if let recipients = try? store.recipients(
                            forFolder: ItemStore.folder + "/" + collection.id)
                        {
                            if let started = try? AgentPassphrases.startForgetting(
                                recipients: recipients.ids, options: store.configuration.gpgOptions)
                            {
                                children.append(started)
                            }
                        }
                    }
                default:
                    continue
                }
            }
            return [.objectPaths(done), .objectPath("/")]
        }

        /// Whether the entries of `collection` decrypt now (gpg asks for the passphrase through pinentry when
        /// the agent does not hold it).
        ///
        /// When some of its entries did not decrypt for want of a passphrase, one of those must decrypt
        /// now: an entry that needs no passphrase (a `.collection` entry encrypted to another key) proves
        /// nothing, and one encrypted to others only (a teammate's, a pusher's) never decrypts and is not
        /// asked. Only one is tried, so that a cancelled pinentry is asked once; the others are read by
        /// the refresh that follows.
        func unlockCollection(_ collection: Collection) -> Bool {
            if collection.inMemory { return true }
            let prefix = ItemStore.folder + "/" + collection.id + "/"
            let failed = cache.filter {
                $0.value.metadata == nil && $0.value.needsPassphrase && $0.key.hasPrefix(prefix)
            }.keys.map {
                String($0.dropFirst(prefix.count))
            }.filter { !$0.contains("/") }.sorted()
            // With nothing that failed, one of its entries must decrypt now (after a Lock, gpg-agent has
            // forgotten the passphrase).
            guard
                let id = failed.first ?? collection.items.values.first?.id
                    ?? items.entryIDs(collection: collection.id).first
            else { return true }
            return (try? items.read(collection: collection.id, id: id)) != nil
        }
    }
#endif
