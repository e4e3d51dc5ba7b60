import Foundation
import GRDB

/// Flips one bit in the middle of the newest revision's stored bytes (its piece, or its row's
/// file when it has none), in a stopped or running server's SQLite database: what a bad disk or
/// a malicious operator does.
func flipByteOfNewestRevision(sqlite path: String) throws {
  let queue = try DatabaseQueue(path: path)
  try queue.write { db in
    guard
      let row = try Row.fetchOne(db, sql: "SELECT revision, file, piece FROM revisions ORDER BY revision DESC LIMIT 1")
    else { return }
    if let piece: Int64 = row["piece"] {
      let data: Data = try Data.fetchOne(db, sql: "SELECT data FROM pieces WHERE id = ?", arguments: [piece]) ?? Data()
      var bytes = [UInt8](data)
      bytes[bytes.count / 2] ^= 0x20
      try db.execute(sql: "UPDATE pieces SET data = ? WHERE id = ?", arguments: [Data(bytes), piece])
      return
    }
    let file: Data = row["file"]
    let revision: Int64 = row["revision"]
    var bytes = [UInt8](file)
    bytes[bytes.count / 2] ^= 0x20
    try db.execute(sql: "UPDATE revisions SET file = ? WHERE revision = ?", arguments: [Data(bytes), revision])
  }
}
