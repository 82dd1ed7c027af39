import Coffer
import CofferTestSupport
import Testing

/// The credential helpers, run by the programs that use them: git (`credential.helper coffer`, a real
/// clone from an HTTP server that asks for basic authentication) and docker's protocol against Debian's
/// docker-credential-pass on the same store. Both helpers are coffer under another name, found on a
/// short `PATH`.
@Suite("git and docker credential helpers")
struct CredentialHelperTests {
    /// git's smart HTTP behind basic authentication (`git http-backend` as CGI), on a port it picks.
    private static let server = #"""
        import base64, http.server, os, subprocess, sys
        root, user, password, port_file = sys.argv[1:5]
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass
            def do_GET(self):
                self.serve()
            def do_POST(self):
                self.serve()
            def serve(self):
                wanted = "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
                if self.headers.get("Authorization") != wanted:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                environment = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                    QUERY_STRING=query, REQUEST_METHOD=self.command, REMOTE_USER=user,
                    CONTENT_TYPE=self.headers.get("Content-Type", ""),
                    HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
                    HTTP_GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                output = subprocess.run(["git", "http-backend"], input=body, env=environment,
                    capture_output=True).stdout
                head, _, rest = output.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.split(b"\r\n"):
                    name, _, value = line.decode().partition(": ")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(rest)))
                self.end_headers()
                self.wfile.write(rest)
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        with open(port_file, "w") as file:
            file.write(str(server.server_port))
        server.serve_forever()
        """#

    /// A folder holding coffer under a helper's name, for a `PATH` of its own.
    private func helperFolder(_ installed: InstalledAsPass, _ names: [String]) throws -> String {
        let folder = installed.sandbox.directory + "/helpers"
        mkdir(folder, 0o755)
        for name in names {
            guard symlink(try CofferBinary.path(), folder + "/" + name) == 0 else {
                throw SandboxError("cannot link \(name)")
            }
        }
        return folder
    }

    @Test("git clone through credential.helper coffer: stored, given, and a wrong password erased")
    func gitCredentialHelper() throws {
        let installed = try InstalledAsPass(git: true)
        let sandbox = installed.sandbox
        let helpers = try helperFolder(installed, ["git-credential-coffer"])
        let root = sandbox.directory + "/served"
        mkdir(root, 0o755)
        try sandbox.check(["git", "init", "-q", "--bare", root + "/repo.git"])
        try sandbox.check(["git", "-C", root + "/repo.git", "config", "http.receivepack", "true"])
        let work = sandbox.directory + "/work"
        try sandbox.check(["git", "init", "-q", work])
        try TestFiles.write("hello\n", to: work + "/README")
        try sandbox.check(["git", "-C", work, "add", "README"])
        try sandbox.check(["git", "-C", work, "commit", "-qm", "first"])
        try sandbox.check(["git", "-C", work, "push", "-q", root + "/repo.git", "HEAD:refs/heads/main"])
        try TestFiles.write(Self.server, to: sandbox.directory + "/server.py")
        let portFile = sandbox.directory + "/port"
        let server = try TestProcess.start(
            ["python3", sandbox.directory + "/server.py", root, "alice", "right-password", portFile],
            environment: installed.environment)
        defer { TestProcess.stop(server) }
        let deadline = TestProcess.monotonicSeconds() + 20
        while TestFiles.read(portFile).map({ $0.isEmpty }) ?? true
            && TestProcess.monotonicSeconds() < deadline
        {
            usleep(50_000)
        }
        let port = String(decoding: try #require(TestFiles.read(portFile)), as: UTF8.self)
        let host = "127.0.0.1:" + port
        // git finds the helper on a short PATH by the name git-credential-coffer.
        var git = installed.environment
        git["PATH"] = helpers + ":/usr/bin:/bin"
        git["GIT_TERMINAL_PROMPT"] = "0"
        git["GIT_CONFIG_COUNT"] = "1"
        git["GIT_CONFIG_KEY_0"] = "credential.helper"
        git["GIT_CONFIG_VALUE_0"] = "coffer"
        func approve(_ password: String) throws {
            try sandbox.check(
                ["git", "credential", "approve"],
                input: Array("protocol=http\nhost=\(host)\nusername=alice\npassword=\(password)\n\n".utf8),
                environment: git)
        }
        let name = "git-credentials/\(host)/alice"

        try approve("right-password")
        #expect(try installed.check(["show", "--field", "login", name]).outputText == "alice")
        #expect(try installed.check(["show", "--field", "url", name]).outputText == "http://\(host)")
        let decrypted = try sandbox.check([
            "gpg", "--batch", "--quiet", "-d", installed.store + "/" + name + ".gpg",
        ])
        #expect(decrypted.outputText == "right-password\nlogin: alice\nurl: http://\(host)")
        let commits = try installed.git(["rev-list", "--count", "HEAD"])
        // A second approve of the same credential (git approves after every use) changes nothing.
        try approve("right-password")
        #expect(try installed.git(["rev-list", "--count", "HEAD"]) == commits)

        let clone = try sandbox.run(
            ["git", "clone", "-q", "http://alice@\(host)/repo.git", sandbox.directory + "/clone"],
            environment: git)
        #expect(clone.status == 0, "\(clone.errorText)")
        #expect(TestFiles.read(sandbox.directory + "/clone/README") == Array("hello\n".utf8))
        let filled = try sandbox.check(
            ["git", "credential", "fill"], input: Array("protocol=http\nhost=\(host)\n\n".utf8),
            environment: git)
        #expect(filled.outputText.contains("username=alice\npassword=right-password"))

        // A wrong password: the clone fails, git rejects it, and the helper erases exactly that one.
        try approve("wrong-password")
        let refused = try sandbox.run(
            ["git", "clone", "-q", "http://alice@\(host)/repo.git", sandbox.directory + "/clone2"],
            environment: git)
        #expect(refused.status != 0)
        #expect(
            !FileSystem.exists(installed.store + "/" + name + ".gpg"), "the rejected credential is erased")
        #expect(try installed.uncommitted() == "")
        // An erase for a password that is not the stored one leaves the entry.
        try approve("right-password")
        try sandbox.check(
            ["git", "credential", "reject"],
            input: Array("protocol=http\nhost=\(host)\nusername=alice\npassword=old\n\n".utf8),
            environment: git)
        #expect(FileSystem.exists(installed.store + "/" + name + ".gpg"))
    }

    @Test("docker-credential-coffer and Debian's docker-credential-pass share one store")
    func dockerAgainstDockerCredentialPass() throws {
        let installed = try InstalledAsPass(git: false)
        let sandbox = installed.sandbox
        let helpers = try helperFolder(installed, ["docker-credential-coffer"])
        var environment = installed.environment
        environment["PATH"] = helpers + ":/usr/bin:/bin"
        func run(_ program: String, _ action: String, _ input: String) throws -> ChildProcess.Output {
            try sandbox.run([program, action], input: Array(input.utf8), environment: environment)
        }
        let coffer = "docker-credential-coffer"
        let pass = "docker-credential-pass"
        let hub = "https://index.docker.io/v1/"
        #expect(
            try run(coffer, "store", #"{"ServerURL":"\#(hub)","Username":"alice","Secret":"s3cr3t/+="}"#)
                .status == 0)
        let got = try run(pass, "get", hub + "\n")
        #expect(got.outputText == #"{"ServerURL":"\#(hub)","Username":"alice","Secret":"s3cr3t/+="}"#)
        #expect(
            try run(pass, "store", #"{"ServerURL":"registry.example:5000","Username":"bob","Secret":"t0k"}"#)
                .status == 0)
        let ours = try run(coffer, "get", "registry.example:5000\n")
        #expect(ours.status == 0)
        #expect(ours.outputText == #"{"Secret":"t0k","ServerURL":"registry.example:5000","Username":"bob"}"#)
        #expect(
            try run(coffer, "list", "").outputText == #"{"\#(hub)":"alice","registry.example:5000":"bob"}"#)
        #expect(try run(pass, "list", "").outputText == #"{"\#(hub)":"alice","registry.example:5000":"bob"}"#)
        #expect(try run(coffer, "erase", "registry.example:5000\n").status == 0)
        #expect(try run(pass, "list", "").outputText == #"{"\#(hub)":"alice"}"#)
        let missing = try run(coffer, "get", "https://nowhere.example\n")
        #expect(missing.status == 1)
        #expect(missing.outputText == "credentials not found in native keychain")
        // The same entry, readable as any entry.
        let path = "docker-credential-helpers/aHR0cHM6Ly9pbmRleC5kb2NrZXIuaW8vdjEv/alice"
        #expect(try installed.check(["show", path]).outputText == "s3cr3t/+=")
        // An entry edited by hand ends with a newline, which is no part of the token.
        try installed.insert(path, "s3cr3t/+=\n")
        #expect(try run(pass, "get", hub + "\n").outputText.contains(#""Secret":"s3cr3t/+=""#))
        #expect(
            try run(coffer, "get", hub + "\n").outputText
                == #"{"Secret":"s3cr3t/+=","ServerURL":"\#(hub)","Username":"alice"}"#)
    }

    @Test("git-credential keeps protocols apart, never names an entry after a password, and compares bytes")
    func gitCredentialEdges() throws {
        let installed = try InstalledAsPass(git: true)
        @discardableResult
        func credential(_ action: String, _ lines: [String]) throws -> ChildProcess.Output {
            try installed.run(["git-credential", action], input: lines.joined(separator: "\n") + "\n\n")
        }
        let https = ["protocol=https", "host=example.org", "username=alice"]
        let http = ["protocol=http", "host=example.org", "username=alice"]
        try credential("store", https + ["password=secure"])
        // An http store or erase leaves the https entry alone; get of http finds nothing.
        try credential("store", http + ["password=plain"])
        try credential("erase", http + ["password=secure"])
        #expect(
            try installed.check(["show", "git-credentials/example.org/alice"]).outputText.hasPrefix(
                "secure\n"))
        #expect(try credential("get", http).outputText.isEmpty)
        #expect(try credential("get", https).outputText.contains("password=secure"))
        // A URL with user:password@ gives the password as the password, never in a name or commit message.
        try credential("store", ["url=https://bob:pa%40ss@example.net/repo"])
        #expect(
            try installed.check(["show", "git-credentials/example.net/repo/bob"]).outputText.hasPrefix(
                "pa@ss\n"))
        #expect(!(try installed.git(["log", "--format=%s"]).contains("pa@ss")))
        #expect(!(try installed.git(["log", "--format=%s"]).contains("pa%40ss")))
        // Canonically equivalent but different bytes: a new password, stored; an erase with the other one
        // removes nothing.
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        try credential("store", https + ["password=" + composed])
        try credential("store", https + ["password=" + decomposed])
        let stored = try installed.check(["show", "git-credentials/example.org/alice"]).standardOutput
        #expect(stored.starts(with: Array((decomposed + "\n").utf8)))
        try credential("erase", https + ["password=" + composed])
        #expect(try installed.run(["show", "git-credentials/example.org/alice"]).status == 0)
        // A credential that cannot be an entry fails, with one line that names neither it nor its
        // password, and nothing is written.
        let before = try installed.git(["log", "--format=%H"])
        for lines in [
            ["protocol=https", "host=example.org", "username=corp/bob", "password=hidden1"],
            ["protocol=https", "host=..", "username=bob", "password=hidden2"],
            ["protocol=https", "host=example.org", "username=bob", "password=hidden3\rmore"],
        ] {
            let refused = try credential("store", lines)
            #expect(refused.status != 0, "\(lines)")
            #expect(refused.errorText.split(separator: "\n").count == 1, "\(refused.errorText)")
            #expect(!refused.errorText.contains("hidden") && !refused.errorText.contains("corp/bob"))
        }
        // A password that is not UTF-8 cannot be kept as it is: refused, never replaced by other bytes.
        let binary =
            Array("protocol=https\nhost=example.org\nusername=carol\npassword=p".utf8) + [0xE4]
            + Array("ss\n\n".utf8)
        let notText = try installed.sandbox.run(
            [installed.program, "git-credential", "store"], input: binary, environment: installed.environment)
        #expect(
            notText.status != 0 && notText.errorText.split(separator: "\n").count == 1, "\(notText.errorText)"
        )
        #expect(try installed.git(["log", "--format=%H"]) == before)
        #expect(try installed.run(["show", "git-credentials/example.org/corp"]).status != 0)
        // Lines ending in CR LF (a caller other than git) are read as lines.
        let crlf = try installed.run(
            ["git-credential", "store"],
            input: "protocol=https\r\nhost=example.org\r\nusername=dave\r\npassword=crlf-pw\r\n\r\n")
        #expect(crlf.status == 0)
        #expect(
            try installed.check(["show", "git-credentials/example.org/dave"]).outputText.hasPrefix(
                "crlf-pw\n"))
    }
}
