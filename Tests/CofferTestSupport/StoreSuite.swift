import Coffer

/// A sandbox and its store.
package typealias SandboxAndStore = (sandbox: GPGSandbox, store: PasswordStore)

/// A test suite over one new sandbox and its store, initialized for the first test key
/// (``GPGSandbox/withStore(committing:)``): the suite keeps both in `fixture`, its tests use `sandbox`
/// and `store`.
package protocol StoreSuite {
    /// The suite's sandbox and store.
    var fixture: SandboxAndStore { get }
}

extension StoreSuite {
    /// The suite's sandbox.
    package var sandbox: GPGSandbox { fixture.sandbox }
    /// The suite's store.
    package var store: PasswordStore { fixture.store }
}
