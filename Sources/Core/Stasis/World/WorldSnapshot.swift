import Synchronization

/// An entity world as a save holds it: the entities' identities, ascending, and one column per
/// component type, each listing the entities that have the component and their values in the
/// same order. A value (``SavedWorld/snapshot()`` copies the live world into it), so it goes in
/// a game's `State` like any field, and the store, sync, merges and replays carry it.
///
/// In the file it is one tree (docs/FORMAT.md, *Entity worlds*): `stasisWorld` (the layout's
/// version), `entities` and `nextIdentity`, and `components`, an object of columns by name,
/// each with `version`, `entities` and `values` (bulk, or a list of trees). `stasis dump` and
/// `stasis diff` show it by entity.
public struct WorldSnapshot: Sendable, Equatable, Codable {
  /// The version of this layout that this build writes and reads.
  public static let layoutVersion: UInt32 = 1
  /// The largest `nextIdentity` a file may hold (2^62): far above any game's, and far enough
  /// below `UInt64.max` that no spawn or merge can overflow.
  public static let maxIdentity: UInt64 = 1 << 62
  /// The most entities a file's world may hold (2^24): runs of identities (`entityRuns`) are
  /// short, so this bounds what a few bytes of a hostile file can make a reader allocate.
  public static let maxEntities = 1 << 24

  /// One component type's column.
  public struct Column: Sendable, Equatable {
    /// The component's registered name.
    public var name: String
    /// The component's own version when saved.
    public var version: UInt32
    /// The entities that have the component, ascending.
    public var entities: [EntityIdentity]
    /// Their values, in the same order: bulk, or an array of trees.
    public var values: SaveValue

    /// The column of `name` at `version`: `entities` ascending, their `values` in that order.
    public init(name: String, version: UInt32, entities: [EntityIdentity], values: SaveValue) {
      self.name = name
      self.version = version
      self.entities = entities
      self.values = values
    }

    /// The value of `entity`'s component, or nil when it has none.
    public func value(of entity: EntityIdentity) -> SaveValue? {
      guard let index = binarySearch(entities, entity) else { return nil }
      return element(at: index)
    }

    /// The value at `index`, as a tree (a bulk element as an object of its fields).
    public func element(at index: Int) -> SaveValue {
      switch values {
      case .bulk(let bulk): return .object(bulk.element(at: index))
      case .array(let items): return items[index]
      default: return .null
      }
    }
  }

  /// The saved entities, ascending.
  public var entities: [EntityIdentity]
  /// The identity the next spawned entity gets: above every identity ever given.
  public var nextIdentity: UInt64
  /// The component columns, by name ascending. A column registered from the ECS's storage
  /// (``WorldSchema/register(_:_:version:migrations:column:set:)``) is made the first time it is
  /// read: on the store's worker, as the save is encoded.
  public var columns: [Column] {
    get {
      guard let deferred else { return ready }
      return (ready + deferred.columns).sorted { $0.name < $1.name }
    }
    set {
      ready = newValue
      deferred = nil
    }
  }

  /// The columns made when the snapshot was taken.
  private var ready: [Column]
  /// The columns made when first read (nil: none).
  var deferred: DeferredColumns?

  /// A world with no entities.
  public init() {
    self.init(ascending: [], nextIdentity: 1, columns: [])
  }

  /// A world of `entities` and `columns`, sorted as a save holds them.
  public init(entities: [EntityIdentity], nextIdentity: UInt64, columns: [Column]) {
    self.init(ascending: entities.sorted(), nextIdentity: nextIdentity, columns: columns)
  }

  /// A world of `entities`, already ascending, and `columns`.
  init(ascending entities: [EntityIdentity], nextIdentity: UInt64, columns: [Column]) {
    self.entities = entities
    self.nextIdentity = nextIdentity
    self.ready = columns.sorted { $0.name < $1.name }
  }

  public static func == (lhs: WorldSnapshot, rhs: WorldSnapshot) -> Bool {
    lhs.entities == rhs.entities && lhs.nextIdentity == rhs.nextIdentity && lhs.failure == rhs.failure
      && lhs.columns == rhs.columns
  }

  /// The world a save's tree holds (a section, or a field of one), checked as a restore needs
  /// it: a `malformed` error naming the field for a tree that is not a world or breaks its
  /// layout, `newerFormat` for a layout this build does not know. Tools that read saves
  /// without the game's code (`stasis dump`, `stasis diff`, merges) start here.
  public init(tree: SaveValue) throws(SaveFileError) {
    try self.init(saveValue: tree, path: "")
  }

  /// Whether `tree` is an entity world's (it has the `stasisWorld` field), well formed or not.
  public static func isWorld(_ tree: SaveValue) -> Bool { tree[field: "stasisWorld"] != nil }

  /// The world as the save's tree holds it.
  public var tree: SaveValue { layout }

  /// Why the snapshot cannot be saved: a component's `encode(to:)` threw when it was taken. A
  /// save of it fails with this error (the game plays on; the previous save stays the newest).
  public internal(set) var failure: SaveFileError? {
    get { ownFailure ?? deferred?.failure }
    set { ownFailure = newValue }
  }
  private var ownFailure: SaveFileError?

  /// The column of the component `name`, or nil.
  public func column(_ name: String) -> Column? { columns.first { $0.name == name } }

  /// The components of `entity`, by name: what `stasis dump` shows for it.
  public func components(of entity: EntityIdentity) -> [(name: String, value: SaveValue)] {
    columns.compactMap { column in column.value(of: entity).map { (column.name, $0) } }
  }

  /// Only ``SaveValueEncoder`` encodes a world (it stores the tree as it is); another encoder gets an error.
  public func encode(to encoder: any Encoder) throws {
    throw EncodingError.invalidValue(
      self, .init(codingPath: encoder.codingPath, debugDescription: "a WorldSnapshot encodes with SaveValueEncoder"))
  }

  /// Only ``SaveValueDecoder`` decodes a world; another decoder gets an error.
  public init(from decoder: any Decoder) throws {
    throw DecodingError.dataCorrupted(
      .init(codingPath: decoder.codingPath, debugDescription: "a WorldSnapshot decodes with SaveValueDecoder"))
  }
}

extension WorldSnapshot: SaveValueConvertible {
  func saveValue() throws(SaveFileError) -> SaveValue {
    if let failure { throw failure }
    return layout
  }

  private var layout: SaveValue {
    // A column every entity has (most are) leaves its entities out: they are the world's.
    let columnObjects = columns.map { column in
      var fields: [(name: String, value: SaveValue)] = []
      if column.entities != entities { fields.append(Self.identityField(column.entities)) }
      fields += [("values", column.values), ("version", .uint32(column.version))]
      fields.sort { $0.name < $1.name }
      return (column.name, SaveValue.object(SaveObject(fields)))
    }
    var fields: [(name: String, value: SaveValue)] = [
      ("components", .object(SaveObject(columnObjects))), Self.identityField(entities),
      ("nextIdentity", .uint64(nextIdentity)), ("stasisWorld", .uint32(Self.layoutVersion)),
    ]
    fields.sort { $0.name < $1.name }
    return .object(SaveObject(fields))
  }

  /// A list of identities as the file holds it: `entities`, one `u64` each, or `entityRuns`,
  /// `(first, count)` pairs of consecutive identities, where the runs take less than half the
  /// bytes (a world whose entities mostly live on, in spawn order: most are).
  private static func identityField(_ list: [EntityIdentity]) -> (name: String, value: SaveValue) {
    var runs: [IdentityRun] = []
    for identity in list {
      if let last = runs.last, last.first + last.count == identity.rawValue {
        runs[runs.count - 1].count += 1
      } else {
        runs.append(IdentityRun(first: identity.rawValue, count: 1))
        if runs.count * 4 > list.count { break }  // no shorter than half: listed one by one
      }
    }
    if runs.count * 4 <= list.count, !list.isEmpty { return ("entityRuns", .bulk(BulkArray(runs))) }
    return ("entities", .bulk(BulkArray(list.map { IdentityElement(identity: $0.rawValue) })))
  }

  /// Checks everything a restore relies on, so a hostile file is refused here, whole: identities
  /// ascending and below `nextIdentity`, every column's entities among the world's, as many
  /// values as entities.
  init(saveValue: SaveValue, path: String) throws(SaveFileError) {
    func refuse(_ what: String, _ field: String? = nil) -> SaveFileError {
      let at = [path, field].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ".")
      return SaveFileError(.malformed, "entity world: \(what)", context: .init(field: at.isEmpty ? nil : at))
    }
    guard case .object(let object) = saveValue, let layout = object["stasisWorld"]?.uint64Value else {
      throw refuse("not an entity world (no stasisWorld field)")
    }
    guard layout <= UInt64(Self.layoutVersion) else {
      throw SaveFileError(
        .newerFormat, "entity world layout \(layout); this build reads up to \(Self.layoutVersion)",
        context: .init(field: path.isEmpty ? "stasisWorld" : "\(path).stasisWorld"),
        suggestion: "update the game to load it")
    }
    func identities(in holder: SaveObject, _ field: String) throws(SaveFileError) -> [EntityIdentity] {
      let list: [EntityIdentity]
      let key = holder["entityRuns"] == nil ? "entities" : "entityRuns"
      let field = field.isEmpty ? key : "\(field).\(key)"
      if let runs = holder["entityRuns"] {
        guard case .bulk(let bulk) = runs, bulk.layout.fields.map(\.type) == [.uint64, .uint64],
          bulk.layout.fields.map(\.name) == ["first", "count"]
        else { throw refuse("identity runs are not a bulk array of (first u64, count u64)", field) }
        let (first, count, stride) = (bulk.layout.fields[0].offset, bulk.layout.fields[1].offset, bulk.layout.stride)
        var expanded: [EntityIdentity] = []
        let bad: String? = bulk.withUnsafeBytes { raw in
          for index in 0..<bulk.count {
            let start = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * stride + first, as: UInt64.self))
            let length = UInt64(
              littleEndian: raw.loadUnaligned(fromByteOffset: index * stride + count, as: UInt64.self))
            guard length > 0, length <= UInt64(Self.maxEntities - expanded.count), start <= Self.maxIdentity else {
              return "run \(index) (\(start), \(length)) is empty, too long or above \(Self.maxIdentity)"
            }
            expanded += (start..<(start + length)).lazy.map(EntityIdentity.init(rawValue:))
          }
          return nil
        }
        if let bad { throw refuse(bad, field) }
        list = expanded
      } else {
        guard case .bulk(let bulk)? = holder["entities"], bulk.layout.fields.count == 1,
          bulk.layout.fields[0].type == .uint64
        else { throw refuse("identities are not a bulk array of u64", field) }
        guard bulk.count <= Self.maxEntities else { throw refuse("more than \(Self.maxEntities) entities", field) }
        let offset = bulk.layout.fields[0].offset
        let stride = bulk.layout.stride
        list = bulk.withUnsafeBytes { raw in
          (0..<bulk.count).map {
            EntityIdentity(
              rawValue: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * stride + offset, as: UInt64.self)))
          }
        }
      }
      for index in list.indices.dropFirst() where list[index - 1] >= list[index] {
        throw refuse("identities are not strictly ascending at element \(index)", field)
      }
      if list.first?.rawValue == 0 { throw refuse("identity 0 is not an entity", field) }
      return list
    }
    let entities = try identities(in: object, "")
    guard let next = object["nextIdentity"]?.uint64Value else { throw refuse("no nextIdentity", "nextIdentity") }
    if let last = entities.last, last.rawValue >= next {
      throw refuse("entity \(last) is not below nextIdentity \(next)", "nextIdentity")
    }
    // Room for every identity a game and a merge could still give: a file near the top would trap.
    guard next <= Self.maxIdentity else {
      throw refuse("nextIdentity \(next) is above \(Self.maxIdentity)", "nextIdentity")
    }
    guard case .object(let columnObjects)? = object["components"] else { throw refuse("no components", "components") }
    var columns: [Column] = []
    let all = Set(entities)
    var names = Set<String>()  // lookup only: the columns keep the file's order until sorted
    for (name, value) in columnObjects.fields {
      let field = "components.\(name)"
      guard names.insert(name).inserted else { throw refuse("two columns named '\(name)'", field) }
      guard case .object(let columnObject) = value, let version = columnObject["version"]?.uint64Value,
        let version32 = UInt32(exactly: version)
      else { throw refuse("column has no version", field) }
      let members =
        columnObject["entities"] == nil && columnObject["entityRuns"] == nil
        ? entities : try identities(in: columnObject, field)
      if let stray = members.first(where: { !all.contains($0) }) {
        throw refuse("\(stray) has the component but is not an entity of the world", field)
      }
      let values = columnObject["values"] ?? .null
      let count: Int
      switch values {
      case .bulk(let bulk): count = bulk.count
      case .array(let items): count = items.count
      default: throw refuse("values are neither bulk nor a list", "\(field).values")
      }
      guard count == members.count else {
        throw refuse("\(count) values for \(members.count) entities", "\(field).values")
      }
      columns.append(Column(name: name, version: version32, entities: members, values: values))
    }
    self.init(entities: entities, nextIdentity: next, columns: columns)
  }
}

/// Columns a snapshot makes when first read, once, on whichever thread reads them first (the
/// store's worker, encoding the save): the ECS's storage as the game's thread took it.
final class DeferredColumns: Sendable {
  private let makers: [@Sendable () -> Result<WorldSnapshot.Column, SaveFileError>]
  private let made = Mutex<(columns: [WorldSnapshot.Column], failure: SaveFileError?)?>(nil)

  init(_ makers: [@Sendable () -> Result<WorldSnapshot.Column, SaveFileError>]) { self.makers = makers }

  var columns: [WorldSnapshot.Column] { resolved.columns }
  var failure: SaveFileError? { resolved.failure }

  private var resolved: (columns: [WorldSnapshot.Column], failure: SaveFileError?) {
    made.withLock { made in
      if let made { return made }
      var columns: [WorldSnapshot.Column] = []
      var failure: SaveFileError?
      for make in makers {
        switch make() {
        case .success(let column): columns.append(column)
        case .failure(let error): failure = failure ?? error
        }
      }
      made = (columns, failure)
      return (columns, failure)
    }
  }
}

/// A run of consecutive identities in a bulk column: `first`, `first + 1`, … `count` of them.
struct IdentityRun: BulkStorable {
  var first: UInt64 = 0
  var count: UInt64 = 0
  static let bulkLayout = BulkLayout(of: IdentityRun.self, [.field("first", \.first), .field("count", \.count)])
}

/// One identity in a bulk column.
struct IdentityElement: BulkStorable {
  var identity: UInt64 = 0
  static let bulkLayout = BulkLayout(stride: 8, fields: [BulkField(name: "identity", type: .uint64, offset: 0)])
}

/// The index of `value` in the ascending `list`, or nil.
func binarySearch(_ list: [EntityIdentity], _ value: EntityIdentity) -> Int? {
  var low = 0
  var high = list.count
  while low < high {
    let middle = (low + high) / 2
    if list[middle] < value { low = middle + 1 } else { high = middle }
  }
  return low < list.count && list[low] == value ? low : nil
}
