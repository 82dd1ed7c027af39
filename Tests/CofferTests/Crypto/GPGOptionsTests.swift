import Testing

@testable import Coffer

@Suite struct GPGOptionsTests {
    @Test func parsesHomedirAndTrustModel() {
        let options = GPGOptions(parsing: "--homedir /x/y --trust-model=always --rfc2440")
        #expect(options.homeDirectory == "/x/y")
        #expect(options.alwaysTrust)
        #expect(options.ignored == ["--rfc2440"])
        // An empty one (`--homedir=$UNSET`) is none, as for gpg; and plans are made only for a home that
        // is sure: none named, or an absolute one.
        #expect(GPGOptions(parsing: "--homedir=").homeDirectory == nil)
        #expect(EncryptionPlans.plannedHome(GPGOptions(parsing: "--homedir relative/home")) == nil)
        #expect(EncryptionPlans.plannedHome(GPGOptions(parsing: "--homedir ~other/.gnupg")) == nil)
        #expect(EncryptionPlans.plannedHome(GPGOptions(parsing: "--homedir /x/y"))?.path == "/x/y")
    }

    @Test func groupsFromGPGConf() {
        let groups = GPGGroups(parsing: "# c\ngroup team = a@x b@x\n group team=c@x\ngroupie = no\n")
        #expect(groups.members(of: "team") == ["a@x", "b@x", "c@x"])
        #expect(groups.members(of: "groupie") == nil)
    }
}
