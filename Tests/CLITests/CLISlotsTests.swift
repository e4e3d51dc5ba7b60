import Foundation
import Stasis
import StasisTestSupport
import StasisTesting
import Testing

/// A racing game the CLI has never seen, as two builds shipped it: schema 1 called the car's
/// fuel `gas`, schema 2 calls it `fuel` (and the first build of schema 2 forgot the migration).
private enum Racing {
  struct CarV1: Codable { var gas: Int }
  struct StateV1: Codable, Sendable { var car: CarV1 }
  struct Car: Codable { var fuel: Int }
  struct State: Codable, Sendable { var car: Car }

  /// The summary, declared in the order the game's load menu shows it: not alphabetical.
  struct Summary: Codable {
    var track: String
    var lap: Int
    var bestTime: Double
  }

  static let schema1 = SaveCodec<StateV1>(game: GameIdentity(name: "racing", build: "1.0", schemaVersion: 1))
  /// Schema 2 without the migration: it cannot read a schema-1 save.
  static let withoutMigration = SaveCodec<State>(game: GameIdentity(name: "racing", build: "2.0", schemaVersion: 2))
  /// Schema 2 with the migration: it reads a schema-1 save.
  static var withMigration: SaveCodec<State> {
    var migrations = SchemaMigrations()
    migrations.register(from: 1) { tree in
      guard var car = tree[field: "car"] else { return }
      car.renameField("gas", to: "fuel")
      tree[field: "car"] = car
    }
    return SaveCodec<State>(game: GameIdentity(name: "racing", build: "2.1", schemaVersion: 2), migrations: migrations)
  }

  static func summary(lap: Int) throws -> SaveSummary {
    try SaveSummary(Summary(track: "Monza", lap: lap, bestTime: 81.5), playTime: Double(lap) * 80, device: "deck")
  }
}

/// The racing game itself, for a coordinator: a car and its fuel.
@MainActor
private final class RacingGame: SaveableGame {
  var state = Racing.State(car: .init(fuel: 0))
  var isPaused = false
  func snapshot() -> Racing.State { state }
  func restore(_ state: Racing.State) throws { self.state = state }
}

/// A fresh save folder and `stasis` run inside it.
private struct SlotsFixtures {
  let root: URL
  var saves: String { root.appendingPathComponent("Saves").path }

  init() throws {
    root = try temporaryFolder()
  }

  func store(keeping count: Int = 3) -> SaveStore {
    SaveStore(
      directory: saves, generationsToKeep: count, wallClock: ManualWallClock(unixMilliseconds: 1_767_225_600_000))
  }

  func stasis(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["STASIS_KEY_FILE"] = nil
    let result = try run("stasis", arguments, in: root, environment: environment)
    func clean(_ text: String) -> String { text.replacingOccurrences(of: root.path, with: "$DIR") }
    return (result.status, clean(result.stdout), clean(result.stderr))
  }

  /// `stasis slots --json`: the generations of `slot`, newest first.
  func listed(_ slot: String, _ flags: String...) throws -> [[String: Any]] {
    let result = try run("stasis", ["slots", "Saves", "--json"] + flags, in: root)
    let list = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
    return try #require(list.first { $0["slot"] as? String == slot }?["generations"] as? [[String: Any]])
  }
}

@Suite("stasis slots: what `valid` checks, kept notes that stay true, the game's column order")
struct CLISlotsTests {
  @Test("a generation with one byte of a section flipped is `no` in `valid`, as `stasis verify` says INVALID")
  func damagedSectionIsNotValid() throws {
    let fixtures = try SlotsFixtures()
    let store = fixtures.store()
    for lap in 1...3 {
      _ = try store.save(
        Racing.State(car: .init(fuel: 100 - lap)), codec: Racing.withMigration, slot: "monza",
        summary: try Racing.summary(lap: lap)
      ).wait()
    }
    // One byte flipped in the middle of generation 2's `car` section: its header is whole.
    let path = store.path(of: "monza", generation: 2)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    let header = try bytes.withUnsafeBytes { try SaveFileFormat.readHeader($0) }
    let car = try #require(header.sections.first { $0.name == "car" })
    bytes[Int(car.offset) + Int(car.length) / 2] ^= 0x10
    try Data(bytes).write(to: URL(fileURLWithPath: path))

    let verify = try fixtures.stasis("verify", "Saves/monza/0000000002.stasis")
    #expect(verify.status == 1)
    #expect(verify.out.hasPrefix("INVALID "))

    let slots = try fixtures.stasis("slots", "Saves")
    #expect(slots.status == 0)
    expectGolden(slots.out, "slotsDamaged.full")
    let row = try #require(slots.out.split(separator: "\n").first { $0.hasPrefix("monza           2") })
    #expect(row.hasSuffix("  276  no     checksum mismatch"), "\(row)")
    let generations = try fixtures.listed("monza")
    #expect(generations.map { $0["valid"] as? Bool } == [true, false, true])
    #expect(generations.allSatisfy { $0["headerValid"] == nil })
    #expect((generations[1]["error"] as? String)?.contains("checksum mismatch in section 'car'") == true)
    #expect(generations.map { $0["signature"] as? String } == ["unsigned", "unsigned", "unsigned"])

    // Headers only, when asked: the column (and the JSON key) says that is what was checked.
    let fast = try fixtures.stasis("slots", "Saves", "--headers-only")
    #expect(fast.status == 0)
    expectGolden(fast.out, "slotsDamaged.headersOnly")
    #expect(fast.out.split(separator: "\n").first?.hasSuffix("  bytes  header ok") == true)
    let headersOnly = try fixtures.listed("monza", "--headers-only")
    #expect(headersOnly.map { $0["headerValid"] as? Bool } == [true, true, true])
    #expect(headersOnly.allSatisfy { $0["valid"] == nil }, "`valid` only when every check was made")
  }

  @Test("a signed generation listed without its key is `intact`, not `yes`; with the key, `yes`")
  func signedWithoutKeyIsIntact() throws {
    let fixtures = try SlotsFixtures()
    let key = Array("the racing game's key, 32 bytes!".utf8)
    try Data(key).write(to: fixtures.root.appendingPathComponent("game.key"))
    let store = SaveStore(
      directory: fixtures.saves, signing: .signed(with: SigningKey(bytes: key)),
      wallClock: ManualWallClock(unixMilliseconds: 1_767_225_600_000))
    _ = try store.save(
      Racing.State(car: .init(fuel: 7)), codec: Racing.withMigration, slot: "monza",
      summary: try Racing.summary(lap: 1)
    ).wait()

    let unchecked = try fixtures.stasis("slots", "Saves")
    #expect(unchecked.out.split(separator: "\n").last?.hasSuffix("  intact") == true, "\(unchecked.out)")
    #expect(try fixtures.listed("monza").first?["signature"] as? String == "not checked")
    let checked = try fixtures.stasis("slots", "Saves", "--key-file", "game.key")
    #expect(checked.out.split(separator: "\n").last?.hasSuffix("  yes") == true, "\(checked.out)")
    let wrong = fixtures.root.appendingPathComponent("other.key")
    try Data("someone else's key, 32 bytes!!!!".utf8).write(to: wrong)
    let refused = try fixtures.stasis("slots", "Saves", "--key-file", "other.key")
    #expect(refused.out.split(separator: "\n").last?.contains("  no ") == true, "\(refused.out)")
  }

  @Test("a save a build without the migration could not read is no longer `cannot read it` once a build has read it")
  @MainActor
  func keptNoteGoesOnceRead() throws {
    let fixtures = try SlotsFixtures()
    _ = try fixtures.store().save(
      Racing.StateV1(car: .init(gas: 42)), codec: Racing.schema1, slot: "monza", summary: try Racing.summary(lap: 1)
    ).wait()

    // The build without the migration: its restore fails, and the save is kept, durably.
    let forgot = RacingGame()
    let held = SaveCoordinator(game: forgot, store: fixtures.store(), codec: Racing.withoutMigration, slot: "monza")
    let first = Application(delegate: held)
    first.launch(options: LaunchOptions(restoreSlot: "monza"))
    #expect(held.restoreFailure?.error.isUnreadableByThisBuild == true)
    first.terminate()
    held.waitForSaves()
    let stale = try fixtures.stasis("slots", "Saves")
    #expect(stale.out.contains("kept: this build cannot read it"), "\(stale.out)")

    // The build with the migration restores it: the note goes at once, and nothing is deleted.
    let fixed = RacingGame()
    let reader = SaveCoordinator(game: fixed, store: fixtures.store(), codec: Racing.withMigration, slot: "monza")
    let second = Application(delegate: reader)
    second.launch(options: LaunchOptions(restoreSlot: "monza"))
    #expect(reader.restoreFailure == nil)
    #expect(fixed.state.car.fuel == 42)
    let fresh = try fixtures.stasis("slots", "Saves")
    #expect(fresh.status == 0)
    #expect(!fresh.out.contains("cannot read"), "\(fresh.out)")
    #expect(fresh.out.split(separator: "\n").count == 2, "one generation, listed plainly: \(fresh.out)")
    #expect(try fixtures.listed("monza").first?["kept"] == nil)
    second.terminate()
    reader.waitForSaves()
  }

  @Test("kept while no build has read it, never pruned; a build that reads it and saves clears the note")
  func keptUntilReadThenOrdinary() throws {
    let fixtures = try SlotsFixtures()
    _ = try fixtures.store().save(
      Racing.StateV1(car: .init(gas: 42)), codec: Racing.schema1, slot: "monza", summary: try Racing.summary(lap: 1)
    ).wait()
    // The build without the migration fails to load it and plays on beside it, keeping one generation.
    let forgot = fixtures.store(keeping: 1)
    #expect(throws: SaveFileError.self) { try forgot.load(codec: Racing.withoutMigration, slot: "monza") }
    for fuel in 1...3 {
      _ = try forgot.save(
        Racing.State(car: .init(fuel: fuel)), codec: Racing.withoutMigration, slot: "monza",
        summary: try Racing.summary(lap: 2), unreadableNewest: .saveAlongside
      ).wait()
    }
    #expect(try forgot.generations(of: "monza").contains(1), "never pruned: that build cannot read it")
    let kept = try fixtures.listed("monza").last
    #expect((kept?["kept"] as? String)?.hasPrefix("kept: this build cannot read it") == true, "\(kept ?? [:])")

    // The build with the migration reads generation 1 (the player picked it) and saves.
    let reader = fixtures.store()
    let loaded = try reader.load(codec: Racing.withMigration, slot: "monza", generation: 1)
    #expect(loaded.state.car.fuel == 42)
    _ = try reader.save(
      loaded.state, codec: Racing.withMigration, slot: "monza", summary: try Racing.summary(lap: 1)
    ).wait()
    let generations = try fixtures.listed("monza")
    #expect(generations.allSatisfy { $0["kept"] == nil }, "\(generations)")
    #expect(reader.keptGenerations(of: "monza").isEmpty)
    let slots = try fixtures.stasis("slots", "Saves")
    #expect(!slots.out.contains("cannot read"), "\(slots.out)")
  }

  @Test("the summary's columns come in the order the game declared its fields, in slots and inspect")
  func summaryInDeclaredOrder() throws {
    let fixtures = try SlotsFixtures()
    _ = try fixtures.store().save(
      Racing.State(car: .init(fuel: 9)), codec: Racing.withMigration, slot: "monza",
      summary: try Racing.summary(lap: 3)
    ).wait()
    let slots = try fixtures.stasis("slots", "Saves")
    #expect(slots.status == 0)
    expectGolden(slots.out, "slotsDeclaredOrder.slots")
    let columns = slots.out.split(separator: "\n").first.map { $0.split(separator: " ").map(String.init) } ?? []
    #expect(Array(columns.prefix(7)) == ["slot", "generation", "saved", "at", "track", "lap", "bestTime"])
    let inspect = try fixtures.stasis("inspect", "Saves/monza/0000000001.stasis")
    let declared = "summary:   track:    Monza\n           lap:      3\n           bestTime: 81.5\n"
    #expect(inspect.out.contains(declared), "\(inspect.out)")

    // A dictionary has no declared order: its keys stay sorted, the same on every run.
    _ = try fixtures.store().save(
      Racing.State(car: .init(fuel: 9)), codec: Racing.withMigration, slot: "spa",
      summary: try SaveSummary(["zeta": 1, "alpha": 2, "mid": 3])
    ).wait()
    let both = try fixtures.stasis("slots", "Saves")
    let header = both.out.split(separator: "\n").first.map { $0.split(separator: " ").map(String.init) } ?? []
    let expected = ["slot", "generation", "saved", "at", "track", "lap", "bestTime", "alpha", "mid", "zeta"]
    #expect(Array(header.prefix(10)) == expected)
  }
}
