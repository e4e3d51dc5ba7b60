import Stasis

/// An array's elements paired by the value of their field `key` (an id), as a `by-key` rule
/// pairs them: ``ThreeWayMerge`` merges entities so, and `stasis diff` compares them so. Two
/// elements are one entity exactly when their keys' encoded values are equal
/// (`SaveValue.keyText`), whatever their index.
package struct KeyedElements: Sendable {
  /// The elements' keys, as `SaveValue.keyText` writes them, in the elements' order.
  package private(set) var keys: [String] = []
  /// Where each key's element is.
  package private(set) var index: [String: Int] = [:]

  /// Why an array's elements cannot be paired by a key.
  package enum Failure: Error, Equatable {
    /// The element at `position` has no field of the key's name.
    case missingKey(position: Int)
    /// The elements at `first` and `second` have the same key, `key` (its `keyText`).
    case duplicateKey(String, first: Int, second: Int)
  }

  /// Elements (objects) keyed by their field `key`.
  package static func pairing(_ elements: [SaveValue], by key: String) -> Result<KeyedElements, Failure> {
    var keyed = KeyedElements()
    for (position, element) in elements.enumerated() {
      guard let value = element[field: key] else { return .failure(.missingKey(position: position)) }
      if let failure = keyed.append(value.keyText, at: position) { return .failure(failure) }
    }
    return .success(keyed)
  }

  /// A bulk array's elements keyed by their field `key`, each element an object of its saved
  /// fields (`BulkArray.element(at:)`), exactly as the other `pairing` keys those objects.
  package static func pairing(_ array: BulkArray, by key: String) -> Result<KeyedElements, Failure> {
    guard array.count > 0 else { return .success(KeyedElements()) }
    guard array.layout.fields.contains(where: { $0.name == key }) else { return .failure(.missingKey(position: 0)) }
    var keyed = KeyedElements()
    for position in 0..<array.count {
      guard let value = array.element(at: position)[key] else { return .failure(.missingKey(position: position)) }
      if let failure = keyed.append(value.keyText, at: position) { return .failure(failure) }
    }
    return .success(keyed)
  }

  private mutating func append(_ id: String, at position: Int) -> Failure? {
    if let earlier = index[id] { return .duplicateKey(id, first: earlier, second: position) }
    keys.append(id)
    index[id] = position
    return nil
  }
}
