#if canImport(CSDBus)
    import CSDBus
    import Coffer

    #if canImport(Glibc)
        import Glibc
    #endif

    /// A connection to the session bus through sd-bus: owning a name, taking the calls under a path, sending
    /// replies and signals. Used from one thread.
    package final class BusConnection {
        /// What a handler does with a message: `true` when it answered it.
        package typealias Handler = (BusMessage) -> Bool

        /// A handler kept alive for sd-bus's callback.
        private final class HandlerBox {
            let handler: Handler
            init(_ handler: @escaping Handler) { self.handler = handler }
        }

        /// The sd-bus connection.
        private let bus: OpaquePointer
        /// The handlers registered, kept for the connection's life.
        private var handlers: [HandlerBox] = []

        /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`).
        package init() throws {
            var opened: OpaquePointer?
            let result = sd_bus_open_user(&opened)
            guard result >= 0, let opened else {
                throw BusError.system("cannot connect to the session bus", result)
            }
            bus = opened
        }

        deinit { sd_bus_flush_close_unref(bus) }

        /// Waits until the bus has authenticated the connection and given it a name.
        package func waitUntilReady() throws {
            var name: UnsafePointer<CChar>?
            let result = sd_bus_get_unique_name(bus, &name)
            if result < 0 { throw BusError.system("cannot connect to the session bus", result) }
        }

        /// What became of a request for a well-known name.
        package enum NameRequest: Sendable, Equatable {
            /// The name is ours.
            case owned
            /// Another connection owns it and keeps it.
            case taken
        }

        /// Asks for `name`, allowing a later `--replace` to take it; with `replace`, takes it from its owner
        /// when the owner allows that.
        package func requestName(_ name: String, replace: Bool) throws -> NameRequest {
            var flags = UInt64(SD_BUS_NAME_ALLOW_REPLACEMENT)
            if replace { flags |= UInt64(SD_BUS_NAME_REPLACE_EXISTING) }
            let result = sd_bus_request_name(bus, name, flags)
            if result == -EEXIST { return .taken }
            if result < 0 { throw BusError.system("cannot request the name \(name)", result) }
            return .owned
        }

        /// The process id and command name of the connection that owns `name`, when the bus says.
        package func owner(of name: String) -> (pid: Int32, command: String)? {
            var creds: OpaquePointer?
            let mask = UInt64(SD_BUS_CREDS_PID) | UInt64(SD_BUS_CREDS_COMM) | UInt64(SD_BUS_CREDS_AUGMENT)
            guard sd_bus_get_name_creds(bus, name, mask, &creds) >= 0, let creds else { return nil }
            defer { sd_bus_creds_unref(creds) }
            var pid: pid_t = 0
            guard sd_bus_creds_get_pid(creds, &pid) >= 0 else { return nil }
            var command: UnsafePointer<CChar>?
            _ = sd_bus_creds_get_comm(creds, &command)
            return (pid, command.map { String(cString: $0) } ?? "")
        }

        /// Calls `handler` with every method call whose path is `prefix` or below it.
        package func addFallback(_ prefix: String, _ handler: @escaping Handler) throws {
            let box = HandlerBox(handler)
            handlers.append(box)
            let result = sd_bus_add_fallback(
                bus, nil, prefix,
                { message, userdata, _ in
                    guard let message, let userdata else { return 0 }
                    let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
                    return box.handler(BusMessage(retaining: message)) ? 1 : 0
                }, Unmanaged.passUnretained(box).toOpaque())
            if result < 0 { throw BusError.system("cannot serve \(prefix)", result) }
        }

        /// Calls `handler` with the signals that match (`nil` matches anything).
        package func matchSignal(
            sender: String?, path: String?, interface: String?, member: String?, _ handler: @escaping Handler
        ) throws {
            let box = HandlerBox(handler)
            handlers.append(box)
            let result = sd_bus_match_signal(
                bus, nil, sender, path, interface, member,
                { message, userdata, _ in
                    guard let message, let userdata else { return 0 }
                    let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
                    _ = box.handler(BusMessage(retaining: message))
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque())
            if result < 0 { throw BusError.system("cannot watch signals", result) }
        }

        /// A reply to `call`, to fill in and ``send(_:)``.
        package func reply(to call: BusMessage) throws -> BusMessage {
            var reply: OpaquePointer?
            let result = sd_bus_message_new_method_return(call.pointer, &reply)
            guard result >= 0, let reply else { throw BusError.system("cannot reply", result) }
            return BusMessage(adopting: reply)
        }

        /// Answers `call` with `error`.
        package func replyError(to call: BusMessage, _ error: BusError) {
            var busError = sd_bus_error(name: nil, message: nil, _need_free: 0)
            defer { sd_bus_error_free(&busError) }
            _ = sd_bus_error_set(&busError, error.name, error.message)
            _ = sd_bus_reply_method_error(call.pointer, &busError)
        }

        /// A signal from `path`, to fill in and ``send(_:)``.
        package func signal(path: String, interface: String, member: String) throws -> BusMessage {
            var message: OpaquePointer?
            let result = sd_bus_message_new_signal(bus, &message, path, interface, member)
            guard result >= 0, let message else { throw BusError.system("cannot make a signal", result) }
            return BusMessage(adopting: message)
        }

        /// Sends a reply or a signal.
        package func send(_ message: BusMessage) throws {
            let result = sd_bus_send(bus, message.pointer, nil)
            if result < 0 { throw BusError.system("cannot send", result) }
        }

        /// Handles everything that has arrived; `false` when the connection is closed.
        package func processPending() throws -> Bool {
            while true {
                let result = sd_bus_process(bus, nil)
                if result == -ECONNRESET || result == -ENOTCONN { return false }
                if result < 0 { throw BusError.system("the bus connection failed", result) }
                if result == 0 { return sd_bus_is_open(bus) > 0 }
            }
        }

        /// Waits until the bus or one of `extra` descriptors has something, at most `timeout` milliseconds;
        /// returns the extra descriptors that are readable.
        package func wait(extra: [Int32], timeout: Int32) -> [Int32] {
            var descriptors = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(sd_bus_get_events(bus)), revents: 0)
            ]
            descriptors += extra.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            var wait = timeout
            var deadline: UInt64 = 0
            if sd_bus_get_timeout(bus, &deadline) >= 0 && deadline != UInt64.max {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
                let left = deadline > nowMicroseconds ? (deadline - nowMicroseconds + 999) / 1000 : 0
                wait = Int32(min(UInt64(wait), left))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), wait) > 0 else { return [] }
            return descriptors.dropFirst().filter { $0.revents != 0 }.map(\.fd)
        }

        /// Sends what is queued.
        package func flush() { _ = sd_bus_flush(bus) }
    }
#endif
