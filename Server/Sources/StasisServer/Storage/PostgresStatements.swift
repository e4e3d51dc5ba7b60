import Foundation
import PostgresNIO

// The statements of the hot path, prepared once per pooled connection: a statement sent as
// text is parsed and planned again each time, and that was a fifth of PostgreSQL's CPU under
// load (the player by token on every request, the head on every download, the upload itself).

/// The unrevoked player whose token hashes to `tokenHash`.
struct PlayerByTokenStatement: PostgresPreparedStatement {
  static let name = "stasis_player_by_token_v2"
  static let sql = ServerSchema.playerByToken("$1")
  static let bindingDataTypes: [PostgresDataType] = [.bytea]

  var tokenHash: [UInt8]

  func makeBindings() throws -> PostgresBindings {
    var bindings = PostgresBindings(capacity: 1)
    try bindings.append(Data(tokenHash))
    return bindings
  }

  func decodeRow(_ row: PostgresRow) throws -> Player {
    let (id, name, createdAt, _) = try row.decode((Int64, String, Int64, Bool).self)
    return Player(id: id, name: name, createdAt: createdAt, revoked: false)
  }
}

/// A slot's head: its metadata, without the file's bytes.
struct HeadStatement: PostgresPreparedStatement {
  static let name = "stasis_head_v2"
  static let sql = "SELECT \(PostgresBackend.headColumns) \(PostgresBackend.headJoin)"
  static let bindingDataTypes: [PostgresDataType] = [.int8, .text]

  var player: Int64
  var slot: String

  func makeBindings() throws -> PostgresBindings {
    var bindings = PostgresBindings(capacity: 2)
    bindings.append(player)
    bindings.append(slot)
    return bindings
  }

  func decodeRow(_ row: PostgresRow) throws -> RevisionMetadata { try PostgresBackend.metadata(row) }
}

/// An upload's first step: `stasis_upload_find_v1` (``PostgresBackend/uploadFunctions``) locks
/// the player's row and the slot's (making the slot's row for a new slot) and reads what the
/// upload finds, for ``UploadRule``.
struct UploadFindStatement: PostgresPreparedStatement {
  static let name = "stasis_upload_find_call_v1"
  static let sql = "SELECT * FROM stasis_upload_find_v2($1, $2, $3, $4, $5)"
  static let bindingDataTypes: [PostgresDataType] = [.int8, .text, .bool, .int8, .int8]

  var player: Int64
  var slot: String
  /// True for a new slot (`If-None-Match: *`).
  var create: Bool
  var loser: Int64?
  var deltaBase: Int64?

  func makeBindings() throws -> PostgresBindings {
    var bindings = PostgresBindings(capacity: 5)
    bindings.append(player)
    bindings.append(slot)
    bindings.append(create)
    bindings.append(loser)
    bindings.append(deltaBase)
    return bindings
  }

  func decodeRow(_ row: PostgresRow) throws -> UploadRule.Found {
    let (next, head, loserExists, slots, bytes, depth, chain, revisions, parents, lost) = try row.decode(
      (Int64, Int64?, Bool, Int64, Int64, Int64?, Int64?, [Int64], [Int64], [Bool]).self)
    guard revisions.count == parents.count, revisions.count == lost.count else {
      throw StorageError(.damaged, "stasis_upload_find_v2 returned lists of different lengths")
    }
    return UploadRule.Found(
      head: head, next: next, loserExists: loserExists, slotsInUse: slots, bytesInUse: bytes,
      deltaBaseChain: depth.flatMap { depth in chain.map { UploadRule.Chain(depth: depth, chain: $0) } },
      revisions: revisions.indices.map {
        // A revision number is at least 1: 0 stands for "no parent" in the list.
        UploadRule.Listed(revision: revisions[$0], parent: parents[$0] == 0 ? nil : parents[$0], lost: lost[$0])
      })
  }
}

/// An upload's second step: `stasis_upload_store_v1` writes what ``UploadRule`` decided, then
/// collects the slot's pieces; the new revision's piece.
struct UploadStoreStatement: PostgresPreparedStatement {
  static let name = "stasis_upload_store_call_v1"
  static let sql = """
    SELECT stasis_upload_store_v1($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
      $19, $20, $21, $22, $23, $24)
    """
  static let bindingDataTypes: [PostgresDataType] = [
    .int8, .text, .int8, .int8, .int8, .int8, .text, .int8, .text, .text, .text, .int8, .int8, .float8, .float8,
    .text, .bytea, .int8, .int8, .int8, .int8, .int8Array, .int8Array, .int8Array,
  ]

  var player: Int64
  var metadata: RevisionMetadata
  var store: UploadRule.Store
  /// The whole file, or the delta on ``deltaBase``.
  var data: [UInt8]
  /// The piece ``data`` is a delta on; nil when it is the whole file.
  var deltaBase: Int64?
  var loser: Int64?

  func makeBindings() throws -> PostgresBindings {
    var bindings = PostgresBindings(capacity: 24)
    bindings.append(player)
    bindings.append(metadata.slot)
    bindings.append(store.revision)
    bindings.append(store.base)
    bindings.append(store.parent)
    bindings.append(metadata.bytes)
    bindings.append(metadata.sha256)
    bindings.append(metadata.uploadedAt)
    bindings.append(metadata.device)
    bindings.append(metadata.game)
    bindings.append(metadata.build)
    bindings.append(metadata.schema)
    bindings.append(metadata.createdAt)
    bindings.append(metadata.playTime)
    bindings.append(metadata.progress)
    bindings.append(metadata.summaryJSON)
    try bindings.append(Data(data))
    bindings.append(deltaBase)
    bindings.append(store.deltaOn.map { $0.depth + 1 } ?? 0)
    bindings.append(store.deltaOn.map { $0.chain + Int64(data.count) } ?? 0)
    bindings.append(loser)
    bindings.append(store.pruned)
    bindings.append(store.relinked.map(\.revision))
    bindings.append(store.relinked.map { $0.parent ?? 0 })
    return bindings
  }

  func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
}
