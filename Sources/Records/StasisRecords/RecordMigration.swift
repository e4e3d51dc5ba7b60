#if Records
  /// One named step of a record store's schema, run once, in order, in its own transaction.
  /// A migration is never edited once shipped: a change is a new migration after it.
  ///
  /// ```swift
  /// let migrations = [
  ///   RecordMigration("v1: high scores") { db in
  ///     try db.create(table: "highScore") { t in
  ///       t.autoIncrementedPrimaryKey("id")
  ///       t.column("player", .text).notNull()
  ///       t.column("points", .integer).notNull()
  ///     }
  ///   }
  /// ]
  /// ```
  public struct RecordMigration: Sendable {
    /// The migration's name, unique in the list; stored in the database once applied.
    public var name: String
    /// The schema change and any data it moves.
    public var migrate: @Sendable (Database) throws -> Void

    /// Creates a migration.
    public init(_ name: String, _ migrate: @escaping @Sendable (Database) throws -> Void) {
      self.name = name
      self.migrate = migrate
    }
  }
#endif
