import Foundation
import GRDB

/// Flips one bit in the middle of the newest revision's file, in a stopped or running
/// server's SQLite database: what a bad disk or a malicious operator does.
func flipByteOfNewestRevision(sqlite path: String) throws {
  let queue = try DatabaseQueue(path: path)
  try queue.write { db in
    guard let row = try Row.fetchOne(db, sql: "SELECT revision, file FROM revisions ORDER BY revision DESC LIMIT 1")
    else { return }
    let file: Data = row["file"]
    let revision: Int64 = row["revision"]
    var bytes = [UInt8](file)
    bytes[bytes.count / 2] ^= 0x20
    try db.execute(sql: "UPDATE revisions SET file = ? WHERE revision = ?", arguments: [Data(bytes), revision])
  }
}
