import Synchronization

/// Counts of the work one object did: requests, decodes per file, waits on the game's thread.
/// What `StasisTesting`'s `WorkCounters` reads, so a test asserts how many times a path did
/// something instead of guessing from how long it took. A lock and a dictionary add: cheap
/// enough to keep in every build.
package final class OperationCounts: Sendable {
  private let counts = Mutex<[String: Int]>([:])

  package init() {}

  /// Adds one to `key`.
  package func count(_ key: String, by amount: Int = 1) {
    counts.withLock { $0[key, default: 0] += amount }
  }

  /// The count of `key` (0 when never counted).
  package subscript(key: String) -> Int { counts.withLock { $0[key] ?? 0 } }

  /// Every count, sorted by key.
  package var all: [(key: String, count: Int)] {
    counts.withLock { $0.map { (key: $0.key, count: $0.value) } }.sorted { $0.key < $1.key }
  }

  /// Sets every count back to 0.
  package func reset() { counts.withLock { $0.removeAll() } }

  /// The key a blocking wait on the game's thread is counted under.
  package static let gameThreadWaits = "waits on the game's thread"
  /// The key a file's decode is counted under: `decode` and the file's name.
  package static func decode(_ file: String) -> String { "decode \(file)" }
  /// The key a whole file's read is counted under: `read` and the file's path.
  package static func read(_ file: String) -> String { "read \(file)" }
  /// The key a generation read back from disk after the sync wrote it is counted under.
  package static let readBacks = "read back"
  /// The key a written file's second copy, made for its upload, is counted under.
  package static let uploadCopies = "copied for upload"
  /// The key a state's decode from a document (the game's codec: migrations, validation) is
  /// counted under: `state` and the file's path, or `rN` for a download.
  package static func stateDecode(_ file: String) -> String { "state \(file)" }
  /// The key a state given to the game (`SaveableGame.restore(_:)`) is counted under.
  package static let restores = "restored"
}
