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

/// An upload: `stasis_put_v4` (``PostgresBackend/putFunctionV4``); its outcome, revision and amount.
struct PutStatement: PostgresPreparedStatement {
  static let name = "stasis_put_call_v4"
  static let sql = """
    SELECT outcome, revision, amount
    FROM stasis_put_v4($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
    """
  static let bindingDataTypes: [PostgresDataType] = [
    .int8, .text, .int8, .int8, .int8, .int8, .int8, .text, .int8, .text, .text, .text, .int8, .int8, .float8,
    .float8, .text, .bytea, .int8, .int8, .int8,
  ]

  var player: Int64
  var metadata: RevisionMetadata
  var expected: Int64?
  var keep: Int64
  var maxSlots: Int64
  var maxBytes: Int64
  /// The whole file, or a delta on piece ``deltaBase``.
  var data: [UInt8]
  /// The piece ``data`` is a delta on; nil when it is the whole file.
  var deltaBase: Int64?
  /// The revision that lost the conflict this upload resolves, if it resolves one.
  var loser: Int64?

  func makeBindings() throws -> PostgresBindings {
    var bindings = PostgresBindings(capacity: 21)
    bindings.append(player)
    bindings.append(metadata.slot)
    bindings.append(expected)
    bindings.append(keep)
    bindings.append(maxSlots)
    bindings.append(maxBytes)
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
    bindings.append(loser)
    bindings.append(metadata.parent)
    bindings.append(deltaBase)
    return bindings
  }

  func decodeRow(_ row: PostgresRow) throws -> (String, Int64?, Int64) {
    try row.decode((String, Int64?, Int64).self)
  }
}
