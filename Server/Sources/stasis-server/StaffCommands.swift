import ArgumentParser
import AsyncHTTPClient
import Foundation
import HummingbirdBcrypt
import Logging
import NIOCore
import NIOHTTP1
import StasisServer

#if canImport(Glibc)
  import Glibc
#endif

struct Staff: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Add, list and remove the studio's console accounts, and issue their API keys.",
    subcommands: [Add.self, List.self, Remove.self, Key.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Add a staff member; their password is read from standard input (asked for on a terminal).",
      discussion: """
        Roles: viewer (reads everything), support (and restores, undoes, issues and revokes
        device tokens), admin (and discards kept revisions). Only the password's bcrypt hash is stored.

        Example:
          stasis-server staff add sam --role support
          printf '%s\\n' "$PASSWORD" | stasis-server staff add sam --role support
        """)

    @Argument(help: "The staff member's name (what they sign in with).")
    var name: String

    @Option(help: "viewer, support or admin.")
    var role: String

    @OptionGroup var storage: DatabaseOptions

    func validate() throws {
      guard !name.isEmpty, name.utf8.count <= 64, !name.contains(where: { $0.isNewline || $0 == "\0" }) else {
        throw ValidationError("a staff member's name is 1-64 bytes on one line")
      }
      guard StaffRole(rawValue: role) != nil else { throw ValidationError("--role is viewer, support or admin") }
    }

    func run() async throws {
      let password = try readPassword(prompt: "password for \(name): ")
      guard password.count >= 10 else {
        FileHandle.standardError.write(Data("error: a password is at least 10 characters\n".utf8))
        throw ExitCode(1)
      }
      let hash = Bcrypt.hash(password, cost: 12)
      let (name, role) = (self.name, StaffRole(rawValue: role)!)
      do {
        _ = try await storage.withBackend(logger: Logger(label: "stasis-server")) { backend, _ in
          try await backend.addStaff(name: name, role: role, passwordHash: hash, at: nowMilliseconds())
        }
      } catch let error as StaffError {
        FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
        throw ExitCode(1)
      }
      print("added \(name) (\(role.rawValue))")
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the staff.")

    @OptionGroup var storage: DatabaseOptions

    func run() async throws {
      let staff = try await storage.withBackend(logger: Logger(label: "stasis-server")) { backend, _ in
        try await backend.staffMembers()
      }
      for member in staff {
        print("\(member.name)\t\(member.role.rawValue)\t\(member.disabled ? "removed" : "active")")
      }
    }
  }

  struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Remove a staff member: they can no longer sign in, and their sessions and API key end.",
      discussion: "Their audit entries stay, under their name.")

    @Argument(help: "The staff member's name.")
    var name: String

    @OptionGroup var storage: DatabaseOptions

    func run() async throws {
      let name = self.name
      let found = try await storage.withBackend(logger: Logger(label: "stasis-server")) { backend, _ in
        try await backend.disableStaff(name: name)
      }
      guard found else {
        FileHandle.standardError.write(Data("error: no staff member named '\(name)'\n".utf8))
        throw ExitCode(1)
      }
      print("removed \(name)")
    }
  }

  struct Key: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Issue a staff member's API key for /v1/admin (replacing the one before) and print it.",
      discussion: """
        The key acts with the member's role, and every change it makes is in the audit log
        under their name. Only its hash is stored.

        Example:
          export STASIS_ADMIN_KEY=$(stasis-server staff key sam)
          stasis-server admin players alice
        """)

    @Argument(help: "The staff member's name.")
    var name: String

    @OptionGroup var storage: DatabaseOptions

    func run() async throws {
      let key = "stasis_staff_" + BearerToken.generate()
      let name = self.name
      let found = try await storage.withBackend(logger: Logger(label: "stasis-server")) { backend, _ in
        try await backend.setStaffKey(name: name, keyHash: BearerToken.hash(key))
      }
      guard found else {
        FileHandle.standardError.write(Data("error: no staff member named '\(name)'\n".utf8))
        throw ExitCode(1)
      }
      print(key)
    }
  }
}

/// A password: asked for without echo on a terminal, else the first line of standard input.
func readPassword(prompt: String) throws -> String {
  let terminal = isatty(STDIN_FILENO) == 1
  var saved = termios()
  if terminal {
    FileHandle.standardError.write(Data(prompt.utf8))
    tcgetattr(STDIN_FILENO, &saved)
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
  }
  defer {
    if terminal {
      tcsetattr(STDIN_FILENO, TCSANOW, &saved)
      FileHandle.standardError.write(Data("\n".utf8))
    }
  }
  guard let line = readLine(strippingNewline: true) else {
    FileHandle.standardError.write(Data("error: no password on standard input\n".utf8))
    throw ExitCode(1)
  }
  return line
}

/// `stasis-server admin …`: the admin API from a terminal, with a staff API key.
struct Admin: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "The studio's admin API from a terminal: find players, read a slot's history, restore, undo, audit.",
    discussion: """
      Each command calls /v1/admin on a running server with the staff API key in
      STASIS_ADMIN_KEY (from `stasis-server staff key NAME`; never on the command line, where
      other users of the machine could read it) and prints the answer's JSON.

      Example:
        export STASIS_ADMIN_KEY=$(stasis-server staff key sam)
        stasis-server admin players alice
        stasis-server admin history 1 autosave
        stasis-server admin restore 1 autosave 7 --reason "ticket 4521: lost level 3"
        stasis-server admin undo 12 --reason "wrong revision"
        stasis-server admin audit --player alice
      """,
    subcommands: [FindPlayers.self, History.self, Restore.self, Undo.self, AuditLog.self])

  struct Connection: ParsableArguments {
    @Option(help: "The server's address.")
    var server = "http://127.0.0.1:8080"

    /// Sends a request to `path` and prints the answer; exits 1 on an error status.
    func call(_ method: HTTPMethod, _ path: String, body: [String: Any]? = nil) async throws {
      guard let key = ProcessInfo.processInfo.environment["STASIS_ADMIN_KEY"], !key.isEmpty else {
        FileHandle.standardError.write(
          Data("error: set STASIS_ADMIN_KEY to a staff API key (stasis-server staff key NAME)\n".utf8))
        throw ExitCode(2)
      }
      var request = HTTPClientRequest(url: server.trimmingCharacters(in: ["/"]) + path)
      request.method = method
      request.headers.add(name: "Authorization", value: "Bearer \(key)")
      if let body {
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
      }
      let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
      let bytes = try await response.body.collect(upTo: 64 << 20)
      let text = String(buffer: bytes)
      guard (200..<300).contains(response.status.code) else {
        FileHandle.standardError.write(Data("error: \(response.status.code) \(text)\n".utf8))
        throw ExitCode(1)
      }
      print(text)
    }
  }

  struct FindPlayers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "players", abstract: "Find players by name or id.")
    @Argument(help: "Part of a name, or an id.") var query = ""
    @OptionGroup var connection: Connection
    func run() async throws {
      let query = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
      try await connection.call(.GET, "/v1/admin/players?query=\(query)")
    }
  }

  struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A slot's revisions, newest first, with their roles.")
    @Argument(help: "The player's id.") var player: Int64
    @Argument(help: "The slot.") var slot: String
    @OptionGroup var connection: Connection
    func run() async throws {
      try await connection.call(.GET, "/v1/admin/players/\(player)/slots/\(slot)/revisions")
    }
  }

  struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Make a kept revision the head again, as a new revision on top (support or admin).")
    @Argument(help: "The player's id.") var player: Int64
    @Argument(help: "The slot.") var slot: String
    @Argument(help: "The revision to restore.") var revision: Int64
    @Option(help: "The head you expect; the restore is refused (412) if a device saved since.") var head: Int64?
    @Option(help: "Why: the ticket, what the player said.") var reason: String
    @OptionGroup var connection: Connection
    func run() async throws {
      var body: [String: Any] = ["revision": revision, "reason": reason]
      if let head { body["head"] = head }
      try await connection.call(.POST, "/v1/admin/players/\(player)/slots/\(slot)/restore", body: body)
    }
  }

  struct Undo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Undo a restore, by its audit entry.")
    @Argument(help: "The restore's audit entry id.") var entry: Int64
    @Option(help: "Why.") var reason: String
    @OptionGroup var connection: Connection
    func run() async throws {
      try await connection.call(.POST, "/v1/admin/audit/\(entry)/undo", body: ["reason": reason])
    }
  }

  struct AuditLog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "audit", abstract: "The audit log, newest first.")
    @Option(help: "Only this player's entries (by name).") var player: String?
    @Option(help: "Only this staff member's entries.") var staff: String?
    @OptionGroup var connection: Connection
    func run() async throws {
      var query: [String] = []
      if let player { query.append("player=\(player.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)") }
      if let staff { query.append("staff=\(staff.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)") }
      try await connection.call(.GET, "/v1/admin/audit" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
    }
  }
}
